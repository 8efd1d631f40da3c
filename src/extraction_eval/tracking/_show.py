"""``baseline show``: each provider's registered baseline and the numbers behind it, as text."""

from __future__ import annotations

from .._settings import tracking_uri
from ..evidence import evidence_from_tags
from ..mlflow_names import (
    TAG_BASELINE_SOURCE,
    TAG_GOLD_VERSION,
    TAG_LAST_REFRESHED,
    TAG_MATCHER,
    TAG_MODEL,
    TAG_SUBSET,
)
from ._client import open_reader


def baseline_lines(uri: str | None = None) -> list[str]:
    """A header line per provider, its evidence, and each gated metric; empty without a baseline."""
    reader = open_reader(uri or tracking_uri())
    try:
        baselines = reader.baselines()
    finally:
        reader.close()
    lines = []
    for b in sorted(baselines, key=lambda b: b.provider):
        t = b.tags
        lines.append(
            f"{b.provider}: {b.model_name} v{b.version} run {b.run_id} | model {t.get(TAG_MODEL)} | "
            f"enforcement {b.enforcement} | gold {t.get(TAG_GOLD_VERSION)} | subset "
            f"{t.get(TAG_SUBSET)} | matcher {t.get(TAG_MATCHER) or '-'} | source "
            f"{t.get(TAG_BASELINE_SOURCE)} | refreshed {t.get(TAG_LAST_REFRESHED) or '-'}"
        )
        lines.append(f"  {evidence_from_tags(t)}")
        metrics = b.measured_metrics
        if metrics is None:
            lines.append("  metrics: null (not measured yet)")
            continue
        for key in b.gated_metrics:
            value = metrics.get(key)
            lines.append(f"  {key:<24} {'missing' if value is None else f'{value:.4f}'}")
    return lines
