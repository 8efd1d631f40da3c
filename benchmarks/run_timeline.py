#!/usr/bin/env python3
"""When each step of one `extraction-eval run` starts and ends (docs/benchmarks.md, section 1).

    MLFLOW_TRACKING_URI=... python benchmarks/run_timeline.py run --mode cassette --gold gold/v1 \\
        --output-dir OUT --no-progress

Runs the CLI in this process with the slow steps wrapped, and prints on stderr, in seconds
since this script started: the harness imported, the MLflow logging (``log_run``: it begins
by importing mlflow), the client, the tags/metrics/artifacts/tables, the prompt, the traces
and the plots (drawn in their worker thread while the rest is logged). A diagnostic, not a
measurement of record: ``benchmarks/bench.py`` is.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from typing import Any

T0 = time.perf_counter()


def mark(text: str) -> None:
    sys.stderr.write(f"[{time.perf_counter() - T0:7.3f}] {text}\n")


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        mark(f"> {name}")
        try:
            return fn(*args, **kwargs)
        finally:
            mark(f"< {name} {time.perf_counter() - started:.3f} s")

    return wrapper


def main() -> None:
    import extraction_eval.pipeline._run as run_module
    import extraction_eval.tracking._log as log_module
    import extraction_eval.tracking._prompt as prompt_module
    import extraction_eval.tracking._traces as traces_module

    mark("harness imported")
    run_module.log_run = timed("log_run (imports mlflow first)", run_module.log_run)
    run_module.write_plots = timed("plots (worker thread)", run_module.write_plots)
    log_module.mlflow_client = timed("mlflow_client", log_module.mlflow_client)
    log_module._log_everything = timed("tags, metrics, dataset, artifacts, tables", log_module._log_everything)
    prompt_module.link_system_prompt = timed("prompt", prompt_module.link_system_prompt)
    traces_module.log_traces = timed("traces", traces_module.log_traces)

    from extraction_eval.cli import main as cli

    sys.argv = ["extraction-eval", *sys.argv[1:]]
    try:
        cli()
    except SystemExit as exc:
        mark(f"end (exit {exc.code})")
        raise
    mark("end")


if __name__ == "__main__":
    main()
