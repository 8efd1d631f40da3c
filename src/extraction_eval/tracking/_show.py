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
    TAG_PROMOTION_REASON,
    TAG_SUBSET,
)
from ._client import open_reader


def baseline_lines(gold_version: str, *, hand_written: bool = False, uri: str | None = None) -> list[str]:
    """A header line per provider with a baseline for ``gold_version``, its evidence (from the
    model version's tags, fixed at promotion), and each gated metric; empty without a baseline."""
    reader = open_reader(uri or tracking_uri())
    try:
        baselines = reader.baselines(gold_version, hand_written=hand_written)
    finally:
        reader.close()
    lines = []
    for b in sorted(baselines, key=lambda b: b.provider):
        t = b.tags
        lines.append(
            f"{b.provider}: {b.model_name} v{b.version} (alias {b.alias}) run {b.run_id} | model {t.get(TAG_MODEL)} | "
            f"enforcement {b.enforcement} | gold {t.get(TAG_GOLD_VERSION)} | subset "
            f"{t.get(TAG_SUBSET)} | matcher {t.get(TAG_MATCHER) or '-'} | source "
            f"{t.get(TAG_BASELINE_SOURCE)} | refreshed {t.get(TAG_LAST_REFRESHED) or '-'}"
        )
        lines.append(f"  {evidence_from_tags(t)}")
        if t.get(TAG_PROMOTION_REASON):
            lines.append(f"  promoted with reason: {t[TAG_PROMOTION_REASON]}")
        changed = b.changed_since_promotion()
        if changed:
            lines.append(
                f"  WARNING: run {b.run_id} was written to after promotion ({', '.join(k for k, _, _ in changed)}); "
                "the gate refuses this baseline"
            )
        metrics = b.measured_metrics
        if metrics is None:
            lines.append("  metrics: null (not measured yet)")
            continue
        for key in b.gated_metrics:
            value = metrics.get(key)
            lines.append(f"  {key:<24} {'missing' if value is None else f'{value:.4f}'}")
    return lines
