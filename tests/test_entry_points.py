"""One toolkit for every entry point (issue 13, point 8): the CLI, the stub provider, scripts/
and benchmarks/ are typer apps made by ``extraction_eval._entry``, so ``-h`` is ``--help``
everywhere and help is plain text. Two documented exceptions (docs/decisions.md, "One toolkit"):
scripts/team-server is standard library only (it runs on a team host before any venv exists),
and the two gold-data scripts keep argparse's ``--a F1 F2 …`` lists, which typer cannot express."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from .conftest import REPO

EXCEPTIONS = {"scripts/team-server", "scripts/gold_agreement.py", "scripts/gold_v2_build.py"}
#: scripts/run_eval.py is the CLI's own `run` (same app), and benchmarks/run_timeline.py runs the
#: CLI in its own process with each step timed, so both are covered with it.
WRAPS_THE_CLI = {"scripts/run_eval.py", "benchmarks/run_timeline.py"}
ENTRY_POINTS = sorted(
    str(p.relative_to(REPO))
    for p in [*(REPO / "scripts").iterdir(), *(REPO / "benchmarks").glob("*.py")]
    if p.is_file() and (p.suffix == ".py" or p.name == "team-server")
)


def test_the_list_is_what_is_on_disk() -> None:
    # a new script must be added to the toolkit or named as an exception here
    assert set(ENTRY_POINTS) >= EXCEPTIONS | WRAPS_THE_CLI
    assert len(ENTRY_POINTS) >= 12


@pytest.mark.parametrize("path", [p for p in ENTRY_POINTS if p not in EXCEPTIONS | WRAPS_THE_CLI])
def test_every_script_and_benchmark_is_made_by_the_toolkit(path: str) -> None:
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "extraction_eval._entry"
        for alias in node.names
    }
    assert imported & {"entry_app", "run_entry"}, f"{path} does not use extraction_eval._entry"
    assert not any(
        isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names) for node in ast.walk(tree)
    ), f"{path} still imports argparse"


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "scripts/power_table.py", "-h"],
        [sys.executable, "scripts/regression_gate.py", "-h"],
        [sys.executable, "benchmarks/gate_down.py", "-h"],
        [sys.executable, "-m", "extraction_eval.stub_provider", "-h"],
        [sys.executable, "-m", "extraction_eval", "-h"],
        [sys.executable, "-m", "extraction_eval", "gate", "-h"],
    ],
    ids=["script", "gate-script", "benchmark", "stub", "cli", "cli-command"],
)
def test_dash_h_prints_plain_help(command: list[str]) -> None:
    out = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.lstrip().startswith("Usage: ")
    assert "╭" not in out.stdout  # no rich panels: the same plain help as the CLI's


def test_a_bad_option_is_a_usage_error_with_exit_2() -> None:
    out = subprocess.run(
        [sys.executable, "scripts/power_table.py", "--flip-rate", "0.05"], cwd=REPO, capture_output=True, text=True
    )
    assert out.returncode == 2
    assert "No such option: --flip-rate" in out.stderr
