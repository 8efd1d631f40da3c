"""The false-alarm check: gate a reworded twin against its answer set, under a matcher and under the reviewers.

    python scripts/twin_gate.py --gold gold/v2 --base blind-a --twin blind-a-twin [--matcher fact-cover@2 ...]

The twin states the same facts with the same categories, temporal kinds and supersessions in
other words, so nothing changed but wording: a gate that fails it raises a false alarm. For each
matcher (each one given, else the default, and `reviewed`), in a fresh SQLite store and a copy
of the gold folder (nothing of the project's is touched): run the base set, promote it as the
baseline, run the twin, and gate the twin with the project's own commands. Prints each verdict
and every failing metric, and writes them to --out (default output/twin-gate/twin_gate.json).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import run_entry

CLI = [sys.executable, "-m", "extraction_eval"]


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], env=env, cwd=cwd, capture_output=True, text=True, check=False)


def _checked(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = _run(args, env, cwd)
    if done.returncode != 0:
        raise SystemExit(f"`extraction-eval {' '.join(args)}` exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


def gate_twin(gold: Path, base: str, twin: str, matcher: str | None, work: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "EXTRACTION_EVAL_"))}
    env["MLFLOW_TRACKING_URI"] = f"sqlite:///{work / 'mlflow.db'}"
    env["EXTRACTION_EVAL_QUIET"] = "1"
    copy = work / "gold" / gold.name
    shutil.copytree(gold, copy)
    flags = [] if matcher is None else ["--matcher", matcher]
    common = ["--mode", "cassette", "--gold", str(copy), "--no-progress", "--no-traces", *flags]
    _checked(["run", *common, "--answers", base, "--output-dir", str(work / "base")], env, work)
    base_run = json.loads((work / "base" / "run.json").read_text())["run_id"]
    _checked(["baseline", "promote", "--run-id", base_run, "--gold", str(copy)], env, work)
    _checked(["run", *common, "--answers", twin, "--output-dir", str(work / "twin")], env, work)
    twin_run = json.loads((work / "twin" / "run.json").read_text())["run_id"]
    gated = _run(["gate", "--run-id", twin_run, "--gold", str(copy), "--output-dir", str(work / "twin")], env, work)
    verdict = json.loads((work / "twin" / "gate.json").read_text())
    failing = [r for r in verdict["rows"] if r["verdict"] == "fail"]
    return {
        "matcher": matcher or "default",
        "exit_code": gated.returncode,
        "verdict": verdict["verdict"],
        "failing": failing,
        "rows": verdict["rows"],
    }


def main(
    gold: Annotated[Path, typer.Option(help="the gold folder")],
    base: Annotated[str, typer.Option(help="the answer set that is the baseline")],
    twin: Annotated[str, typer.Option(help="its reworded twin, gated against it")],
    matcher: Annotated[
        list[str] | None,
        typer.Option(help="a matcher to check besides `reviewed` (repeat; default: the default matcher)"),
    ] = None,
    out: Annotated[Path, typer.Option(help="where the verdicts go")] = Path("output/twin-gate/twin_gate.json"),
) -> None:
    results = []
    for each in (*(matcher or [None]), "reviewed"):
        with tempfile.TemporaryDirectory(prefix="twin-gate-") as tmp:
            result = gate_twin(gold.resolve(), base, twin, each, Path(tmp))
        results.append(result)
        verdict = str(result["verdict"]).upper()
        head = f"{gold.name} {base} -> {twin}, matcher {result['matcher']}"
        print(f"{head}: {verdict} (exit {result['exit_code']})")
        for row in result["failing"]:  # type: ignore[union-attr]
            was, now, delta = row["baseline"], row["run"], row["delta"]
            print(f"  FAIL {row['metric']}: baseline {was:.4f}, twin {now:.4f}, delta {delta:+.4f}")
    out.parent.mkdir(parents=True, exist_ok=True)
    document = {"gold": str(gold), "base": base, "twin": twin, "results": results}
    out.write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
