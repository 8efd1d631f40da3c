"""The scoring core's view of ``extraction_eval.ratios``: standard errors and paired intervals."""

from ..ratios import (
    MACRO_PARTS,
    Z95,
    Counts,
    RunCounts,
    denominator,
    influence,
    paired_se,
    per_conversation_counts,
    standard_error,
    uncertainty_metrics,
)

__all__ = [
    "MACRO_PARTS",
    "Z95",
    "Counts",
    "RunCounts",
    "denominator",
    "influence",
    "paired_se",
    "per_conversation_counts",
    "standard_error",
    "uncertainty_metrics",
]
