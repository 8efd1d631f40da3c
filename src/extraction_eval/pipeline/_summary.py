"""What ``run`` prints: the run's identity, its evidence, the headline metrics, the notes."""

from __future__ import annotations

from collections.abc import Mapping

from .._settings import hide_uri_password
from ..evidence import evidence_line
from ..ratios import SECURITY_KEYS, SECURITY_STRATUM_KEYS
from ..scoring import Z95
from ._run import RunResult


def summary_lines(result: RunResult) -> list[str]:
    """What `run` prints: identity, evidence, the headline metrics."""
    m = result.metrics
    keys = [
        "macro/precision",
        "macro/recall",
        "macro/f1",
        "strict/precision",
        "strict/recall",
        "category_accuracy",
        "temporal_accuracy",
        "multilabel/exact_match",
        "supersession/recall",
        "supersession/stale_leak_rate",
        "negatives/false_positive_rate",
        "failures/rate",
    ]
    # the security rates exist only for a gold set with forbidden memories (v2 on)
    keys += [k for k in SECURITY_KEYS.values() if f"n/{k}" in m]
    # and per stratum where the forbidden rows carry one (gold v3 on: telegraphed, hard)
    keys += [k for k in SECURITY_STRATUM_KEYS.values() if f"n/{k}" in m]
    lines = [
        f"run {result.logged.run_id} in experiment {result.logged.experiment_name!r} "
        f"({result.logged.status}) at {hide_uri_password(result.logged.tracking_uri, result.logged.tracking_uri)}",
        f"provider {result.plan.provider.value}, model {result.plan.model}, mode "
        f"{result.plan.mode.value}, subset {result.plan.subset.value}, enforcement "
        f"{result.plan.enforcement.value}",
        result.evidence or evidence_line(result.cassette_kind.value, model=result.plan.model),
        "",
    ]
    width = max(len(k) for k in keys)
    for key in keys:
        lines.append(f"  {key:<{width}}  {format_estimate(m, key)}")
    lines.append(
        f"  counts: {int(m['counts/conversations'])} conversations, {int(m['counts/expected'])} "
        f"expected, {int(m['counts/predicted'])} predicted, {int(m['counts/matched'])} matched, "
        f"{int(m['counts/failed'])} failed"
    )
    lines += [f"note: {n}" for n in result.notes]
    return lines


def format_estimate(metrics: Mapping[str, float], key: str) -> str:
    """``value ± 1.96·se (n = …)``: the number and how far it can be trusted."""
    value = metrics.get(key)
    n = metrics.get(f"n/{key}")
    if value is None:
        return "(no cases)" if n is None else f"(no cases, n = {int(n)})"
    se = metrics.get(f"se/{key}")
    spread = "" if se is None else f" ± {Z95 * se:.4f}"
    count = "" if n is None else f" (n = {int(n)})"
    return f"{value:.4f}{spread}{count}"
