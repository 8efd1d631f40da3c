#!/usr/bin/env python3
"""Matcher speed targets (docs/benchmarks.md quotes its output).

    python benchmarks/bench_matcher.py [--repeat 5] [--conversations 12500]

1. gold v1:     score() over gold v1's 125 conversations with the oracle cassettes'
                predictions (the expected texts), each matcher in a fresh process, so
                no cache is warm; the time includes importing the matchers. Target: the default matcher within 0.3 s of
                keyed-dice@3 (the default before it).
2. paraphrased: score() over --conversations conversations whose predictions are
                paraphrases of the expected texts (the expected text reworded by
                'The user ...', a synonym and a trailing detail that makes every
                text distinct, so no cache helps). Target: under 30 s.

Medians of --repeat wall-clock measurements of the scoring call alone (loading gold
v1 is not timed).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import run_entry

REPO = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, sys, time
from pathlib import Path
from extraction_eval.gold import load_gold
from extraction_eval.scoring import Case, ExpectedItem, Memory, Outcome, score
imported = time.perf_counter()
if sys.argv[1] == "keyed-dice@3":  # what a run imported before this version: no stemmer
    from extraction_eval.scoring._matcher import KeyedDiceMatcher
    matcher = KeyedDiceMatcher()
else:
    from extraction_eval.scoring._registry import resolve_matcher  # every matcher and its libraries
    matcher = resolve_matcher(sys.argv[1])
import_s = time.perf_counter() - imported

copies = int(sys.argv[2])
gold = load_gold(Path(sys.argv[3]))
by_conversation = gold.by_conversation
cases = []
for copy in range(copies):
    for conversation in gold.conversations:
        rows = by_conversation[conversation.conversation_id]
        expected = tuple(
            ExpectedItem(m.memory_id, Memory(m.content, frozenset(m.categories), m.temporal_kind, m.supersedes))
            for m in rows
        )
        if copies == 1:
            predicted = tuple(e.memory for e in expected)
        else:
            predicted = tuple(
                Memory(
                    "The user " + e.memory.content.removeprefix("User ").rstrip(".")
                    + f", as they said in session {copy}.",
                    e.memory.categories,
                    e.memory.temporal_kind,
                    e.memory.supersedes,
                )
                for e in expected
            )
        cases.append(Case(f"{conversation.conversation_id}-{copy}", expected, Outcome(predicted)))
started = time.perf_counter()
report = score(cases, matcher)
elapsed = time.perf_counter() - started
recall = report.metrics["macro/recall"]
print(json.dumps({"seconds": elapsed + import_s, "import_s": import_s, "conversations": len(cases), "recall": recall}))
"""


def measure(matcher: str, copies: int, repeat: int) -> dict[str, object]:
    samples = []
    last: dict[str, object] = {}
    for _ in range(repeat):
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, matcher, str(copies), str(REPO / "gold" / "v1")],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
        )
        last = json.loads(proc.stdout)
        samples.append(float(last["seconds"]))  # type: ignore[arg-type]
    return {"matcher": matcher, "median_s": round(statistics.median(samples), 3), **last, "samples": samples}


# keyed-dice@3 (the time before fact-cover), then each fact-cover version; the last is the default.
MATCHERS = ("keyed-dice@3", "fact-cover@1", "fact-cover@2")


def main(
    repeat: Annotated[int, typer.Option(help="timed repetitions")] = 5,
    conversations: Annotated[int, typer.Option(help="size of the paraphrased set")] = 12500,
) -> None:
    copies = max(1, round(conversations / 125))
    results = {
        "gold_v1": [measure(name, 1, repeat) for name in MATCHERS],
        "paraphrased": [measure(name, copies, max(1, repeat // 2)) for name in MATCHERS],
    }
    for block, rows in results.items():
        for row in rows:
            print(
                f"{block:<12} {row['matcher']:<14} median {row['median_s']:.3f} s over "
                f"{row['conversations']} conversations (macro recall {float(row['recall']):.3f})"  # type: ignore[arg-type]
            )
    base, new = (float(results["gold_v1"][i]["median_s"]) for i in (0, -1))  # type: ignore[arg-type]
    paraphrased = float(results["paraphrased"][-1]["median_s"])  # type: ignore[arg-type]
    verdict = "met" if new - base <= 0.3 else "NOT met"
    print(f"gold v1: {MATCHERS[-1]} adds {new - base:+.3f} s (target: at most +0.3 s): {verdict}")
    verdict = "met" if paraphrased < 30 else "NOT met"
    print(f"paraphrased: {MATCHERS[-1]} {paraphrased:.1f} s (target: under 30 s): {verdict}")


if __name__ == "__main__":
    run_entry(main, __doc__)
