"""The ratio metrics' keys: which are precision/recall-like (with the contract's zero rule)."""

from __future__ import annotations

from ..vocab import CATEGORIES

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
)
