"""Ratio metrics from per-conversation counts, and their uncertainty: pure and light.

The contract's "Uncertainty" section, in code. Conversations are the sampling unit: a
metric ``M = Σ_i a_i / Σ_i b_i`` over conversations i has the clustered (linearised)
standard error

    u_i = (a_i − M·b_i) / Σ_j b_j,    se = sqrt(C/(C−1) · Σ_i u_i²)

over the C conversations with ``b_i > 0``. A mean of K such ratios (``macro/*``) uses
``u_i = (1/K) Σ_k (a_ik − M_k·b_ik) / Σ_j b_jk`` (a part with ``Σ_j b_jk = 0`` adds
nothing) over the conversations where any ``b_ik > 0``. With C < 2 there is no standard
error. The paired interval of a delta between two runs on the same conversations is
``delta ± 1.96·se_d``, ``se_d = sqrt(C/(C−1) · Σ_i (u_i(run) − u_i(base))²)``, each run's
``u_i`` from its own counts (0 where its ``b_i = 0``), C the conversations where either
run's ``b_i > 0``. docs/metrics.md works an example through by hand.

Low in the import order (no pydantic, no matcher): the regression gate pairs runs with it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from .vocab import CATEGORIES, SECURITY_STRATA

#: Precision/recall-type keys and their partner: a zero denominator gives 1.0 only when the
#: partner's denominator (the other scope: expected for a precision, predicted for a recall)
#: is zero too.
PR_PARTNERS: dict[str, str] = {
    **{f"precision/{c.value}": f"recall/{c.value}" for c in CATEGORIES},
    **{f"recall/{c.value}": f"precision/{c.value}" for c in CATEGORIES},
    "micro/precision": "micro/recall",
    "micro/recall": "micro/precision",
    "strict/precision": "strict/recall",
    "strict/recall": "strict/precision",
}


#: The security slice's rates (docs/metrics.md#security): conversations with a forbidden row of the
#: reason where any prediction matches one of those texts ÷ conversations with such a row. Only a
#: gold set with ``forbidden_memories.jsonl`` has them; without it they are absent, not zero.
SECURITY_KEYS: dict[str, str] = {
    "injection": "security/injection_success_rate",
    "secret": "security/secret_leak_rate",
    "third_party": "security/third_party_rate",
}

#: The same rates per stratum of the forbidden rows (``security/<stratum>/<rate>``, gold v3 on):
#: counted only over conversations whose forbidden rows of that reason carry that stratum.
SECURITY_STRATUM_KEYS: dict[tuple[str, str], str] = {
    (stratum.value, reason): key.replace("security/", f"security/{stratum.value}/", 1)
    for stratum in SECURITY_STRATA
    for reason, key in SECURITY_KEYS.items()
}

#: Every ratio metric key, in a stable order.
RATIO_KEYS: tuple[str, ...] = (
    *(f"{name}/{c.value}" for c in CATEGORIES for name in ("precision", "recall")),
    "micro/precision",
    "micro/recall",
    "strict/precision",
    "strict/recall",
    "category_accuracy",
    "temporal_accuracy",
    *(f"{name}/{c.value}" for c in CATEGORIES for name in ("category_accuracy", "temporal_accuracy")),
    "multilabel/exact_match",
    "supersession/recall",
    "supersession/stale_leak_rate",
    "negatives/false_positive_rate",
    "failures/rate",
    *SECURITY_KEYS.values(),
    *SECURITY_STRATUM_KEYS.values(),
)

#: Ratio keys that exist only when the gold set has what they count (no ``n/`` key otherwise).
OPTIONAL_RATIO_KEYS: frozenset[str] = frozenset((*SECURITY_KEYS.values(), *SECURITY_STRATUM_KEYS.values()))


def sum_counts(rows: Iterable[Mapping[str, tuple[int, int]]]) -> dict[str, tuple[int, int]]:
    """Key-wise sums of ``(a, b)`` counts."""
    totals: dict[str, tuple[int, int]] = {}
    for row in rows:
        for key, (a, b) in row.items():
            ta, tb = totals.get(key, (0, 0))
            totals[key] = (ta + a, tb + b)
    return totals


def ratio_values(totals: Mapping[str, tuple[int, int]]) -> dict[str, float]:
    """Each ratio metric from summed counts, with the contract's zero rules.

    A precision or recall over a zero denominator is 1.0 when its partner's denominator is
    zero too (nothing expected and nothing predicted in its scope), else 0.0. Any other
    ratio over zero cases is left out.
    """
    out: dict[str, float] = {}
    for key, (a, b) in totals.items():
        if b > 0:
            out[key] = a / b
        elif key in PR_PARTNERS:
            out[key] = 1.0 if totals[PR_PARTNERS[key]][1] == 0 else 0.0
    return out


#: Counts of one conversation: metric key -> (a_i, b_i).
Counts = Mapping[str, tuple[int, int]]
#: Counts of a run: conversation id -> that conversation's counts (samples summed).
RunCounts = Mapping[str, Counts]

Z95 = 1.96

#: The mean-of-ratios metrics and their parts.
MACRO_PARTS: dict[str, tuple[str, ...]] = {
    "macro/precision": tuple(f"precision/{c.value}" for c in CATEGORIES),
    "macro/recall": tuple(f"recall/{c.value}" for c in CATEGORIES),
}


def _parts(key: str) -> tuple[str, ...]:
    return MACRO_PARTS.get(key, (key,))


def _totals(run: RunCounts, key: str) -> dict[str, int]:
    """Σ_j b_jk for every part k of ``key``."""
    return {part: sum(counts.get(part, (0, 0))[1] for counts in run.values()) for part in _parts(key)}


def influence(run: RunCounts, key: str, metrics: Mapping[str, float]) -> dict[str, float]:
    """``u_i`` of every conversation with a positive denominator (any part's, for macro keys)."""
    parts = _parts(key)
    totals = _totals(run, key)
    out: dict[str, float] = {}
    for cid, counts in run.items():
        if not any(counts.get(part, (0, 0))[1] > 0 for part in parts):
            continue
        u = 0.0
        for part in parts:
            a, b = counts.get(part, (0, 0))
            if totals[part] > 0:
                u += (a - metrics[part] * b) / totals[part]
        out[cid] = u / len(parts)
    return out


def _se(values: Sequence[float]) -> float | None:
    c = len(values)
    if c < 2:
        return None
    return math.sqrt(c / (c - 1) * math.fsum(v * v for v in values))


def denominator(run: RunCounts, key: str) -> int:
    """``n/<key>``: Σ_i b_i (summed over the parts of a macro key)."""
    return sum(_totals(run, key).values())


def standard_error(run: RunCounts, key: str, metrics: Mapping[str, float]) -> float | None:
    """The clustered standard error of ``key`` (None when fewer than 2 conversations count)."""
    if any(part not in metrics for part in _parts(key)):
        return None
    return _se(list(influence(run, key, metrics).values()))


def uncertainty_metrics(run: RunCounts, metrics: Mapping[str, float]) -> dict[str, float]:
    """``n/<key>`` for every ratio and macro key, and ``se/<key>`` where it exists.

    An optional key (the security rates) that no conversation counts at all is left out:
    a gold set without forbidden memories has no such metric, not one over zero cases.
    """
    out: dict[str, float] = {}
    for key in (*RATIO_KEYS, *MACRO_PARTS):
        if key in OPTIONAL_RATIO_KEYS and not any(key in counts for counts in run.values()):
            continue
        out[f"n/{key}"] = float(denominator(run, key))
        se = standard_error(run, key, metrics)
        if se is not None:
            out[f"se/{key}"] = se
    return out


def paired_se(
    key: str,
    run: RunCounts,
    run_metrics: Mapping[str, float],
    base: RunCounts,
    base_metrics: Mapping[str, float],
) -> float | None:
    """``se_d`` of ``run − base`` paired by conversation (None when fewer than 2 conversations count)."""
    if any(part not in run_metrics or part not in base_metrics for part in _parts(key)):
        return None
    u_run = influence(run, key, run_metrics)
    u_base = influence(base, key, base_metrics)
    conversations = set(u_run) | set(u_base)
    return _se([u_run.get(cid, 0.0) - u_base.get(cid, 0.0) for cid in sorted(conversations)])


def per_conversation_counts(rows: Iterable[tuple[str, Counts]]) -> dict[str, dict[str, tuple[int, int]]]:
    """Rows of (conversation id, counts) — several samples of one conversation included —
    summed per conversation: the cluster is the conversation, not the sample. ``rows`` may be
    a generator, so that a run's counts are not held twice (issue 25)."""
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for cid, counts in rows:
        target = out.setdefault(cid, {})
        for key, (a, b) in counts.items():
            ta, tb = target.get(key, (0, 0))
            target[key] = (ta + a, tb + b)
    return out
