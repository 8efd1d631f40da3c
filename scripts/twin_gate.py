"""The false-alarm check: gate a reworded twin against its answer set, under a matcher and under the reviewers.

    python scripts/twin_gate.py --gold gold/v2 --base blind-a --twin blind-a-twin [--matcher fact-cover@2]

The twin states the same facts with the same categories, temporal kinds and supersessions in
other words, so nothing changed but wording: a gate that fails it raises a false alarm. For each
matcher (the one given, default the default, and `reviewed`), in a fresh SQLite store and a copy
of the gold folder (nothing of the project's is touched): run the base set, promote it as the
baseline, run the twin, and gate the twin with the project's own commands. Prints each verdict
and every failing metric, and writes them to --out (default output/twin-gate/twin_gate.json).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--base", required=True)
    parser.add_argument("--twin", required=True)
    parser.add_argument("--matcher", default=None, help="the matcher to check besides `reviewed` (default: default)")
    parser.add_argument("--out", type=Path, default=Path("output/twin-gate/twin_gate.json"))
    args = parser.parse_args()
    results = []
    for matcher in (args.matcher, "reviewed"):
        with tempfile.TemporaryDirectory(prefix="twin-gate-") as tmp:
            result = gate_twin(args.gold.resolve(), args.base, args.twin, matcher, Path(tmp))
        results.append(result)
        verdict = str(result["verdict"]).upper()
        head = f"{args.gold.name} {args.base} -> {args.twin}, matcher {result['matcher']}"
        print(f"{head}: {verdict} (exit {result['exit_code']})")
        for row in result["failing"]:  # type: ignore[union-attr]
            base, now, delta = row["baseline"], row["run"], row["delta"]
            print(f"  FAIL {row['metric']}: baseline {base:.4f}, twin {now:.4f}, delta {delta:+.4f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    document = {"gold": str(args.gold), "base": args.base, "twin": args.twin, "results": results}
    args.out.write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
