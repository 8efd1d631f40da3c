#!/usr/bin/env python3
"""Mutation testing of the scorer and the gates, one module at a time (issue 16; docs/testing.md).

    .venv/bin/python scripts/mutation.py                      # the modules of docs/testing.md's table
    .venv/bin/python scripts/mutation.py scoring/_assign.py   # one module (a path under src/extraction_eval)
    .venv/bin/python scripts/mutation.py --all                # every module [tool.mutmut] covers
    .venv/bin/python scripts/mutation.py --max-children 2 --keep

For each module it copies the project into a scratch folder under ``.mutation/`` (git-ignored),
narrows ``[tool.mutmut]`` of pyproject.toml to that one module and the tests that mirror it
(MIRRORED below), runs ``mutmut run`` there and reads ``mutmut results --all true``. It prints
one row per module: mutants, killed (a timeout counts as killed), survived (``no tests`` counts
as survived), equivalent (the survivors listed, each with its reason, in the table "Equivalent mutants" of
docs/testing.md), the score (killed / (mutants - equivalent)) and the wall time; then every
survivor that is not listed as equivalent, to read with ``mutmut show NAME`` in the scratch
folder (``--keep``). Exit 1 when a module is below --goal (0.95), 2 when mutmut fails.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import entry_app

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "src/extraction_eval"

# The tests that mirror each module (a prefix of the module path: the longest one wins).
MIRRORED: dict[str, tuple[str, ...]] = {
    "scoring/": ("tests/scoring",),
    "gates/": ("tests/gates",),
    "cassettes/": ("tests/cassettes", "tests/evaluation/test_replay_errors.py"),
    "gold/_check.py": ("tests/gold",),
    "ratios.py": ("tests/scoring/test_uncertainty.py", "tests/gates/test_paired.py"),
}

# The modules of docs/testing.md's table, in the order they are run by default.
DEFAULT_MODULES = (
    "scoring/_metrics.py",
    "gates/_regression.py",
    "scoring/_assign.py",
    "cassettes/_replay.py",
    "gates/_oracle_gate.py",
    "ratios.py",
    "gates/_paired.py",
    "scoring/_cover.py",
    "gold/_check.py",
    "gates/_contract_gate.py",
    "scoring/_calibration.py",
    "scoring/_judge.py",
    "gates/_flips.py",
    "scoring/_parse.py",
    "scoring/_outcomes.py",
    "scoring/_intervals.py",
    "gates/_agreement.py",
    "gates/_diff.py",
)

# Surviving mutants that cannot change any behaviour are listed, each with its reason, in
# docs/testing.md's table "Equivalent mutants" (| `name` | reason |, the name without the
# "extraction_eval." prefix). A name stops matching when its function changes; the mutant then
# counts as a survivor again until someone re-reads it.
TESTING_DOC = REPO / "docs" / "testing.md"
_EQUIVALENT_ROW = re.compile(r"^\| `([^`]+__mutmut_\d+)` \| (.+) \|$")


def equivalent_mutants() -> dict[str, str]:
    if not TESTING_DOC.is_file():
        return {}
    rows = (_EQUIVALENT_ROW.match(line) for line in TESTING_DOC.read_text(encoding="utf-8").splitlines())
    return {"extraction_eval." + m.group(1): m.group(2) for m in rows if m}


_RESULT = re.compile(r"^\s+(\S+): (.+)$")
_KILLED = {"killed", "timeout", "caught by type check"}


@dataclass(frozen=True)
class ModuleResult:
    module: str
    mutants: int
    killed: int
    survivors: tuple[str, ...]
    equivalent: int
    seconds: float

    @property
    def score(self) -> float:
        judged = self.mutants - self.equivalent
        return self.killed / judged if judged else 1.0


def mirrored_tests(module: str) -> tuple[str, ...]:
    prefixes = [p for p in MIRRORED if module.startswith(p)]
    if not prefixes:
        raise SystemExit(f"scripts/mutation.py: no mirrored tests for {module!r}; add it to MIRRORED.")
    return MIRRORED[max(prefixes, key=len)]


def narrowed_pyproject(module: str) -> str:
    """pyproject.toml with [tool.mutmut] limited to one module and its mirrored tests."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    base = tomllib.loads(text)["tool"]["mutmut"]
    start = text.index("[tool.mutmut]")
    end = text.find("\n[", start + 1)
    section = "\n".join(
        [
            "[tool.mutmut]",
            f"source_paths = {base['source_paths']!r}",
            f'only_mutate = ["{PACKAGE}/{module}"]',
            f"also_copy = {base.get('also_copy', [])!r}",
            f"pytest_add_cli_args = {base.get('pytest_add_cli_args', [])!r}",
            f"pytest_add_cli_args_test_selection = {list(mirrored_tests(module))!r}",
            "",
        ]
    ).replace("'", '"')
    return text[:start] + section + (text[end:] if end != -1 else "")


def run_module(module: str, scratch_root: Path, max_children: int, keep: bool) -> ModuleResult:
    scratch = Path(tempfile.mkdtemp(prefix=module.replace("/", "_").removesuffix(".py") + "-", dir=scratch_root))
    for name in ("src", "tests", "gold", "docs", "scripts"):  # tests run some scripts (gold_shape.py)
        shutil.copytree(REPO / name, scratch / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    (scratch / "pyproject.toml").write_text(narrowed_pyproject(module), encoding="utf-8")
    mutmut = [sys.executable, "-m", "mutmut"]
    started = time.monotonic()
    run = subprocess.run(
        [*mutmut, "run", "--max-children", str(max_children)], cwd=scratch, text=True, capture_output=True
    )
    seconds = time.monotonic() - started
    (scratch / "mutmut-run.log").write_text(run.stdout + run.stderr, encoding="utf-8")
    if run.returncode != 0:
        raise SystemExit(f"mutmut run failed for {module} (exit {run.returncode}); see {scratch / 'mutmut-run.log'}")
    listed = subprocess.run(
        [*mutmut, "results", "--all", "true"], cwd=scratch, text=True, capture_output=True, check=True
    )
    statuses = {m.group(1): m.group(2) for line in listed.stdout.splitlines() if (m := _RESULT.match(line))}
    if not statuses:
        raise SystemExit(f"mutmut produced no mutants for {module}; see {scratch / 'mutmut-run.log'}")
    survivors = tuple(sorted(name for name, status in statuses.items() if status not in _KILLED))
    if not keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return ModuleResult(
        module=module,
        mutants=len(statuses),
        killed=len(statuses) - len(survivors),
        survivors=survivors,
        equivalent=sum(1 for name in survivors if name in equivalent_mutants()),
        seconds=seconds,
    )


def table(results: list[ModuleResult]) -> str:
    lines = [
        "| module | mutants | killed | survived | equivalent | score | time |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| `{r.module}` | {r.mutants} | {r.killed} | {len(r.survivors)} | {r.equivalent} | "
            f"{r.score:.1%} | {r.seconds / 60:.1f} min |"
        )
    return "\n".join(lines)


app = entry_app()


@app.command(help=__doc__.split("\n\n")[0])
def main(
    modules: Annotated[
        list[str] | None, typer.Argument(help="paths under src/extraction_eval (default: the table's modules)")
    ] = None,
    all_modules: Annotated[
        bool, typer.Option("--all", help="every module that only_mutate in pyproject.toml covers")
    ] = False,
    max_children: Annotated[int, typer.Option(help="parallel mutant runs")] = 2,
    goal: Annotated[float, typer.Option(help="the least score per module")] = 0.95,
    keep: Annotated[bool, typer.Option(help="keep the scratch folders (to `mutmut show` survivors)")] = False,
) -> None:
    chosen = list(modules or DEFAULT_MODULES)
    if all_modules:
        patterns = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]["only_mutate"]
        chosen = sorted(
            str(p.relative_to(REPO / PACKAGE))
            for pattern in patterns
            for p in REPO.glob(pattern)
            if p.suffix == ".py" and p.name != "__init__.py"
        )
    scratch_root = REPO / ".mutation"
    scratch_root.mkdir(exist_ok=True)
    results = []
    for module in chosen:
        print(f"mutating {module} against {', '.join(mirrored_tests(module))} ...", file=sys.stderr, flush=True)
        result = run_module(module, scratch_root, max_children, keep)
        results.append(result)
        print(table([result]).splitlines()[-1], file=sys.stderr, flush=True)
    print(table(results))
    equivalent = equivalent_mutants()
    for r in results:
        for name in r.survivors:
            print(f"{name}: {'equivalent' if name in equivalent else 'SURVIVED'}")
    if any(r.score < goal for r in results):
        raise typer.Exit(1)


if __name__ == "__main__":
    app()
