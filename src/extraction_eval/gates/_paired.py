"""What the gate's verdict rests on: each gated metric's paired 95% interval and resolution.

The pass/fail rule stays the seed's 3-point rule (``_regression``). This module adds, for
each gated metric, what a reviewer needs to read a failure: the paired 95% interval of
the delta against the baseline run (paired by conversation, docs/metrics.md#uncertainty)
and the resolution ``1/n`` (what one memory moves the metric). A baseline with no
per-conversation record gets "no paired interval", never a guess.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..ratios import Z95, denominator, paired_se, ratio_values, sum_counts
from ._regression import GateResult, MetricRow, MetricStatus, Verdict

#: Artifacts that hold per-conversation counts: an evaluation run's, and a seeded baseline's.
PER_CONVERSATION_FILE = "per_conversation.jsonl"
BASELINE_PER_CONVERSATION_FILE = "baseline_per_conversation.jsonl"

#: Per conversation (samples summed): metric key -> (a_i, b_i).
RunCounts = dict[str, dict[str, tuple[int, int]]]


@dataclass(frozen=True)
class RowStats:
    """A gated metric's interval and resolution (None where there is none)."""

    key: str
    ci_low: float | None
    ci_high: float | None
    resolution: float | None
    note: str


def parse_counts(text: str, *, provider: str | None = None) -> RunCounts:
    """Counts from ``per_conversation.jsonl`` (or, with ``provider``, that provider's rows of
    ``baseline_per_conversation.jsonl``); several samples of a conversation are summed."""
    out: RunCounts = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if provider is not None and row.get("provider") != provider:
                continue
            cid = str(row["conversation_id"])
            counts = row["counts"]
            target = out.setdefault(cid, {})
            for key, (a, b) in counts.items():
                ta, tb = target.get(key, (0, 0))
                target[key] = (ta + int(a), tb + int(b))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"line {number}: not a per-conversation row with counts ({type(exc).__name__})") from None
    return out


def _values(run: RunCounts) -> dict[str, float]:
    return ratio_values(sum_counts(run.values()))


def row_stats(
    rows: Sequence[MetricRow],
    run: RunCounts | None,
    base: RunCounts | None,
    run_metrics: Mapping[str, float],
    why_no_interval: str = "",
) -> tuple[RowStats, ...]:
    """Interval and resolution of every gated row."""
    run_values = _values(run) if run else {}
    base_values = _values(base) if base else {}
    out = []
    for row in rows:
        n = run_metrics.get(f"n/{row.key}")
        if n is None and run:
            n = float(denominator(run, row.key))
        resolution = 1.0 / n if n else None
        low = high = None
        se_d = None
        if run and base and row.delta is not None:
            se_d = paired_se(row.key, run, run_values, base, base_values)
            if se_d is not None:
                low, high = row.delta - Z95 * se_d, row.delta + Z95 * se_d
        note = _note(row, low, high, resolution, why_no_interval if se_d is None else "")
        out.append(RowStats(row.key, low, high, resolution, note))
    return tuple(out)


def _note(row: MetricRow, low: float | None, high: float | None, resolution: float | None, why: str) -> str:
    if row.status is not MetricStatus.FAIL or row.delta is None:
        return ""
    parts = []
    if resolution is not None and abs(row.delta) <= resolution + 1e-9:
        parts.append("within one row: one memory moves this metric by " + f"{resolution:.4f}")
    if low is None or high is None:
        parts.append(f"no paired interval ({why})" if why else "no paired interval")
    elif low <= 0.0 <= high:
        parts.append("within the paired 95% interval: not distinguishable from noise in these conversations")
    else:
        parts.append("outside the paired 95% interval: a shift beyond noise in these conversations")
    return "; ".join(parts)


def verdict_word(result: GateResult) -> str:
    """``pass``, ``fail`` or ``error`` (gate.json's verdict); a manual provider's report is
    ``pass`` or ``fail`` by its rows, with exit code 0."""
    if result.verdict is Verdict.CANNOT_EVALUATE:
        return "error"
    if result.verdict is Verdict.REGRESSION:
        return "fail"
    if result.verdict is Verdict.REPORT_ONLY and any(r.status is MetricStatus.FAIL for r in result.rows):
        return "fail"
    return "pass"


def gate_json(result: GateResult, stats: Sequence[RowStats]) -> dict[str, object]:
    """The contract's gate.json."""
    by_key = {s.key: s for s in stats}

    def num(value: float | None) -> float | None:
        return None if value is None or math.isnan(value) else value

    return {
        "verdict": verdict_word(result),
        "exit_code": result.exit_code,
        "run_id": result.run.run_id if result.run else None,
        "baseline_run_id": result.baseline.run_id if result.baseline else None,
        "rows": [
            {
                "metric": row.key,
                "baseline": num(row.baseline),
                "run": num(row.run),
                "delta": num(row.delta),
                "ci_low": by_key[row.key].ci_low if row.key in by_key else None,
                "ci_high": by_key[row.key].ci_high if row.key in by_key else None,
                "resolution": by_key[row.key].resolution if row.key in by_key else None,
                "verdict": row.status.value.lower(),
            }
            for row in result.rows
        ],
    }
