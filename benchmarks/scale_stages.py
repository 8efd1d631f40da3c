#!/usr/bin/env python3
"""Where the eval's time and memory go at scale, step by step (docs/benchmarks.md, section 7).

    python benchmarks/scale_stages.py --factor 10

Builds gold v2 repeated FACTOR times (``bench_scale.scaled_gold``), then runs one cassette eval
with traces in this process into a fresh SQLite store, and prints, after each step of
``run_eval`` and of the logging, its seconds and the process's resident memory before and after
and its peak so far (from /proc/self/status). One sample; the copy is removed afterwards.
"""

from __future__ import annotations

import multiprocessing
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from extraction_eval._entry import run_entry

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import scaled_gold


def _memory() -> dict[str, int]:
    """VmRSS and VmHWM (the peak), in MB."""
    found = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            key, value = line.split(":", 1)
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) // 1024
    return found


def _timed(module: Any, name: str) -> None:
    inner: Callable[..., Any] = getattr(module, name)

    def step(*args: Any, **kwargs: Any) -> Any:
        started, before = time.perf_counter(), _memory()["VmRSS"]
        result = inner(*args, **kwargs)
        after = _memory()
        print(
            f"{name:20s} {time.perf_counter() - started:7.1f} s   rss {before:5d} -> {after['VmRSS']:5d} MB"
            f"   peak {after['VmHWM']:5d} MB",
            flush=True,
        )
        return result

    setattr(module, name, step)


def main(factor: Annotated[int, typer.Option("--factor", help="copies of gold v2")] = 10) -> None:
    import os

    work = Path(tempfile.mkdtemp(prefix=f"extraction-eval-stages-{factor}-"))
    try:
        gold = work / f"v2x{factor}"
        # built in a child process, so that this one's memory is the eval's alone
        builder = multiprocessing.get_context("spawn").Process(target=scaled_gold, args=(gold, factor))
        builder.start()
        builder.join()
        if builder.exitcode != 0:
            raise SystemExit(f"building {gold} failed (exit {builder.exitcode})")
        os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{work / 'mlflow.db'}"
        import extraction_eval.pipeline._run as run
        import extraction_eval.tracking._eval_dataset as eval_dataset
        import extraction_eval.tracking._log as log
        import extraction_eval.tracking._traces as traces
        from extraction_eval.evaluation import RunOptions
        from extraction_eval.vocab import Mode

        for module, name in (
            (run, "load_gold"),
            (run, "check_contract"),
            (run, "score_answers"),
            (run, "write_staged"),
            (run, "run_traces"),
            (run, "log_run"),
            (log, "_log_everything"),
            (eval_dataset, "evaluation_dataset"),
            (traces, "log_traces"),
        ):
            _timed(module, name)
        print(f"start: rss {_memory()['VmRSS']} MB; {factor}x gold v2", flush=True)
        started = time.perf_counter()
        run.run_eval(Mode.CASSETTE, gold, work / "out", RunOptions(traces=True, progress=False))
        print(f"total {time.perf_counter() - started:.1f} s; peak {_memory()['VmHWM']} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
