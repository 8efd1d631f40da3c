"""Metric keys with a direction, and the default gated set (no heavy imports: the gate uses it)."""

from __future__ import annotations

from collections.abc import Sequence

from .ratios import SECURITY_KEYS, SECURITY_STRATUM_KEYS
from .vocab import CATEGORIES

#: Metrics where a higher value is worse (the gate flips its comparison for them).
LOWER_IS_BETTER: frozenset[str] = frozenset(
    {
        "supersession/stale_leak_rate",
        "negatives/false_positive_rate",
        "failures/rate",
        "counts/failed",
        "counts/spurious_supersedes",
        *SECURITY_KEYS.values(),
        *SECURITY_STRATUM_KEYS.values(),
    }
)

#: The seed's gated metrics: the default of every provider's baseline block.
DEFAULT_GATED_METRICS: tuple[str, ...] = (
    *(f"precision/{c.value}" for c in CATEGORIES),
    *(f"recall/{c.value}" for c in CATEGORIES),
    "macro/precision",
    "macro/recall",
    "category_accuracy",
    "temporal_accuracy",
)


def gated_or_default(gated: Sequence[str] | None) -> tuple[str, ...]:
    """A baseline block's gated metrics (never empty: the file's model refuses an empty
    list), or DEFAULT_GATED_METRICS when there is no block."""
    return DEFAULT_GATED_METRICS if gated is None else tuple(gated)
