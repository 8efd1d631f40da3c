"""What the answers cost and how long they took: usage metrics and provenance tags."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..mlflow_names import TAG_RECORDED_FROM, TAG_RECORDED_TO, TAG_SYSTEM_FINGERPRINT
from ..providers import cost_usd
from ._answers import Answer


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100]) of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def usage_metrics(answers: Sequence[Answer], model: str) -> dict[str, float]:
    """Tokens in and out, estimated cost and latency p50/p95, where known."""
    out: dict[str, float] = {}
    tokens_in = [a.input_tokens for a in answers if a.input_tokens is not None]
    tokens_out = [a.output_tokens for a in answers if a.output_tokens is not None]
    if tokens_in or tokens_out:
        out["usage/input_tokens"] = float(sum(tokens_in))
        out["usage/output_tokens"] = float(sum(tokens_out))
        cost = cost_usd(model, sum(tokens_in), sum(tokens_out))
        if cost is not None:
            out["usage/cost_usd"] = cost
    latencies = [a.latency_s for a in answers if a.latency_s is not None]
    if latencies:
        out["latency/p50_s"] = percentile(latencies, 50)
        out["latency/p95_s"] = percentile(latencies, 95)
    retries = sum(a.retries for a in answers)
    if latencies or retries:
        out["usage/retries"] = float(retries)
    return out


def provenance_tags(answers: Sequence[Answer]) -> dict[str, str]:
    """The system fingerprints and the recording dates the answers carry."""
    fingerprints = sorted({a.system_fingerprint for a in answers if a.system_fingerprint})
    dates = sorted(a.recorded_at for a in answers if a.recorded_at)
    tags: dict[str, str] = {}
    if fingerprints:
        tags[TAG_SYSTEM_FINGERPRINT] = ",".join(fingerprints)[:4000]
    if dates:
        tags[TAG_RECORDED_FROM] = dates[0]
        tags[TAG_RECORDED_TO] = dates[-1]
    return tags
