#!/usr/bin/env python3
"""What the standard errors and the gate's paired interval add (target: at most 0.1 s each on gold v1).

    python benchmarks/bench_uncertainty.py [--repeat 20]

Measured in one process, on gold v1 (125 conversations) scored from its oracle answers:

1. run:  ``uncertainty_metrics`` over the run's per-conversation counts — the n/ and se/ keys
         a cassette run computes on top of its metrics;
2. gate: parsing the run's and the baseline's per_conversation.jsonl text and ``row_stats``
         for the 14 default gated metrics — what the gate adds to judge the run;
3. the import of the modules the gate loads for it (``ratios``, ``gates._paired``) on top of what
   it loaded before, in a fresh interpreter.

Medians of --repeat; prints JSON.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import run_entry

REPO = Path(__file__).resolve().parents[1]


def main(repeat: Annotated[int, typer.Option(help="timed repetitions")] = 20) -> None:
    sys.path.insert(0, str(REPO / "src"))
    from extraction_eval.cassettes import oracle_response
    from extraction_eval.evaluation import Answer, score_answers
    from extraction_eval.gates._paired import parse_counts, row_stats
    from extraction_eval.gates._regression import compare
    from extraction_eval.gold import load_gold
    from extraction_eval.metric_keys import DEFAULT_GATED_METRICS
    from extraction_eval.scoring import conversation_counts, uncertainty_metrics
    from extraction_eval.scoring._uncertainty import per_conversation_counts

    gold = load_gold(REPO / "gold" / "v1", require_manifest=False)
    answers = {
        c.conversation_id: Answer(c.conversation_id, response=oracle_response(gold.by_conversation[c.conversation_id]))
        for c in gold.conversations
    }
    scored = score_answers(gold, gold.conversations, answers, model="gpt-4o-mini")
    counts = per_conversation_counts([(s.conversation_id, conversation_counts(s)) for s in scored.report.conversations])
    text = "".join(json.dumps(s.to_json()) + "\n" for s in scored.report.conversations)
    metrics = dict(scored.metrics)

    def run_side() -> None:
        uncertainty_metrics(counts, metrics)

    def gate_side() -> None:
        run, base = parse_counts(text), parse_counts(text)
        row_stats(compare(DEFAULT_GATED_METRICS, metrics, metrics), run, base, metrics)

    def median(fn) -> float:  # type: ignore[no-untyped-def]
        samples = []
        for _ in range(repeat):
            started = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - started)
        return statistics.median(samples)

    # What the gate imports for the interval, on top of what it imported before (regression, reader).
    probe = (
        "import time; import extraction_eval.gates._regression, extraction_eval.tracking._reader; "
        "t = time.perf_counter(); import extraction_eval.ratios, extraction_eval.gates._paired; "
        "print(time.perf_counter() - t)"
    )
    env = {"PYTHONPATH": str(REPO / "src")}
    imports = [
        float(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env).stdout)
        for _ in range(5)
    ]
    report = {
        "run_uncertainty_s": round(median(run_side), 4),
        "gate_paired_s": round(median(gate_side), 4),
        "gate_imports_s": round(statistics.median(imports), 4),
        "target_s": 0.1,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0] if __doc__ else None)
