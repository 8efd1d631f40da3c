"""One provider answer per conversation, with what it cost, from replay or a live call."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..mlflow_names import TAG_RECORDED_FROM, TAG_RECORDED_TO, TAG_SYSTEM_FINGERPRINT
from ..scoring import Outcome

#: USD per 1M tokens (input, output); docs/providers.md says where they come from.
PRICES_PER_MTOK: Mapping[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
}


@dataclass(frozen=True)
class CallRecord:
    conversation_id: str
    outcome: Outcome
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    system_fingerprint: str | None = None
    recorded_at: str | None = None
    retries: int = 0


def usage_tokens(usage: Mapping[str, Any] | None) -> tuple[int | None, int | None]:
    if not usage:
        return None, None
    prompt = usage.get("prompt_tokens", usage.get("input_tokens"))
    completion = usage.get("completion_tokens", usage.get("output_tokens"))
    return (int(prompt) if prompt is not None else None, int(completion) if completion is not None else None)


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    price = PRICES_PER_MTOK.get(model)
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100]) of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def usage_metrics(records: Sequence[CallRecord], model: str) -> dict[str, float]:
    """Tokens in and out, estimated cost and latency p50/p95, where known."""
    out: dict[str, float] = {}
    tokens_in = [r.input_tokens for r in records if r.input_tokens is not None]
    tokens_out = [r.output_tokens for r in records if r.output_tokens is not None]
    if tokens_in or tokens_out:
        out["usage/input_tokens"] = float(sum(tokens_in))
        out["usage/output_tokens"] = float(sum(tokens_out))
        cost = cost_usd(model, sum(tokens_in), sum(tokens_out))
        if cost is not None:
            out["usage/cost_usd"] = cost
    latencies = [r.latency_s for r in records if r.latency_s is not None]
    if latencies:
        out["latency/p50_s"] = percentile(latencies, 50)
        out["latency/p95_s"] = percentile(latencies, 95)
    retries = sum(r.retries for r in records)
    if latencies or retries:
        out["usage/retries"] = float(retries)
    return out


def provenance_tags(records: Sequence[CallRecord]) -> dict[str, str]:
    fingerprints = sorted({r.system_fingerprint for r in records if r.system_fingerprint})
    dates = sorted(r.recorded_at for r in records if r.recorded_at)
    tags: dict[str, str] = {}
    if fingerprints:
        tags[TAG_SYSTEM_FINGERPRINT] = ",".join(fingerprints)[:4000]
    if dates:
        tags[TAG_RECORDED_FROM] = dates[0]
        tags[TAG_RECORDED_TO] = dates[-1]
    return tags
