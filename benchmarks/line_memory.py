#!/usr/bin/env python3
"""Peak memory of `gold validate` and `run` when a gold line is 50 MB (docs/reliability.md).

    python benchmarks/line_memory.py [--megabytes 50]

Copies the tiny fixture gold set, makes one conversation line MEGABYTES long, and runs both
commands in child processes against a fresh SQLite store; prints each one's exit code, the
first line of its error and its peak resident memory (GNU time's %M, per child).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import run_entry

ROOT = Path(__file__).resolve().parents[1]


def _child(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, float]:
    """Exit code, first line of stderr, and the child's own peak RSS in MB (GNU time's %M)."""
    done = subprocess.run(
        ["/usr/bin/time", "-f", "peak-kb %M", sys.executable, "-m", "extraction_eval", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    lines = done.stderr.strip().splitlines()
    peak_kb = float(lines[-1].split()[-1]) if lines and lines[-1].startswith("peak-kb") else float("nan")
    first = (lines[:-1] or [""])[0][:140]
    return done.returncode, first, peak_kb / 1024


def main(megabytes: Annotated[int, typer.Option(help="length of the long line")] = 50) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        gold = work / "tiny"
        shutil.copytree(ROOT / "tests" / "fixtures" / "gold" / "tiny", gold)
        path = gold / "conversations.jsonl"
        lines = path.read_text().splitlines()
        lines[4] = lines[4].replace('"content": "', '"content": "' + "z" * (megabytes << 20), 1)
        path.write_text("\n".join(lines) + "\n")
        env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'm.db'}"}
        for args in (["gold", "validate", "--gold", str(gold)], ["run", "--mode", "live", "--gold", str(gold)]):
            code, first, peak_mb = _child(args, env, work)
            print(f"{' '.join(args[:2]):<16} exit {code}  peak {peak_mb:7.1f} MB  {first}")


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
