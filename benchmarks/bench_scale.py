#!/usr/bin/env python3
"""The eval at 10x and 100x gold v2, traces on (docs/benchmarks.md, section 7; issue 25).

    python benchmarks/bench_scale.py [--factor 10 --factor 100] [--no-traces]

For each factor, builds a copy of gold v2 with every conversation repeated FACTOR times (ids
suffixed ``-x<k>``, memory ids likewise; forbidden rows too), writes its oracle cassettes and
manifest, and times one cold `extraction-eval run --mode cassette` of it into a fresh SQLite
store, with traces (unless --no-traces), under `/usr/bin/time -v` for the peak resident
memory. Prints a JSON report: seconds, seconds per conversation, peak MB. The copies live in a
temporary folder, removed afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import run_entry

REPO = Path(__file__).resolve().parents[1]
GOLD = REPO / "gold" / "v2"
BIN = Path(sys.executable).parent


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def scaled_gold(dest: Path, factor: int) -> Path:
    """gold v2 with every conversation FACTOR times, and its oracle cassettes."""
    from extraction_eval.cassettes import write_oracle_cassettes

    dest.mkdir(parents=True)
    conversations = _rows(GOLD / "conversations.jsonl")
    expected = _rows(GOLD / "expected_memories.jsonl")
    forbidden = _rows(GOLD / "forbidden_memories.jsonl") if (GOLD / "forbidden_memories.jsonl").is_file() else []
    out_c, out_e, out_f = [], [], []
    for k in range(factor):
        suffix = f"-x{k}"
        out_c += [{**c, "conversation_id": c["conversation_id"] + suffix} for c in conversations]
        out_e += [
            {
                **e,
                "conversation_id": e["conversation_id"] + suffix,
                "memory_id": re.sub(r"-m(\d+)$", rf"{suffix}-m\1", e["memory_id"]),
            }
            for e in expected
        ]
        out_f += [{**f, "conversation_id": f["conversation_id"] + suffix} for f in forbidden]
    _write(dest / "conversations.jsonl", out_c)
    _write(dest / "expected_memories.jsonl", out_e)
    if forbidden:
        _write(dest / "forbidden_memories.jsonl", out_f)
    write_oracle_cassettes(dest)
    return dest


def timed_run(gold: Path, work: Path, traces: bool) -> dict[str, float]:
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'mlflow.db'}"}
    cmd = [str(BIN / "extraction-eval"), "run", "--mode", "cassette", "--gold", str(gold)]
    cmd += ["--output-dir", str(work / "out"), "--no-progress", *([] if traces else ["--no-traces"])]
    started = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], env=env, cwd=work, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"the run of {gold} exited {proc.returncode}: {proc.stderr[-3000:]}")
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))
    return {"seconds": round(elapsed, 2), "peak_mb": round(peak_kb / 1024, 1)}


def main(
    factor: Annotated[list[int] | None, typer.Option("--factor", help="copies of gold v2 (repeat)")] = None,
    traces: Annotated[bool, typer.Option("--traces/--no-traces", help="log the per-conversation traces")] = True,
) -> None:
    factors = factor or [10, 100]
    report: dict[str, object] = {"command": "python benchmarks/bench_scale.py " + " ".join(sys.argv[1:])}
    base = len(_rows(GOLD / "conversations.jsonl"))
    for f in factors:
        work = Path(tempfile.mkdtemp(prefix=f"extraction-eval-scale-{f}-"))
        try:
            gold = scaled_gold(work / f"v2x{f}", f)
            result = timed_run(gold, work, traces)
            n = base * f
            report[f"x{f}"] = {
                **result,
                "conversations": n,
                "ms_per_conversation": round(1000 * result["seconds"] / n, 2),
            }
            print(json.dumps({f"x{f}": report[f"x{f}"]}), file=sys.stderr)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
