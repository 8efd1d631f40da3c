"""A live run's report: compared with its provider's reviewed baseline, never gated."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..evaluation import COMPARISON_FILE, RunPlan
from ..gates._gate_run import publish, render_markdown
from ..gates._paired import row_stats
from ..gates._regression import GateResult, Verdict, compare
from ..gold import BASELINE_FILE, baseline_block
from ..metric_keys import gated_or_default
from ..mlflow_names import UNMEASURED
from ..tracking._log import LoggedRun
from ..tracking._reader import TrackedRun


def live_comparison(
    plan: RunPlan,
    logged: LoggedRun,
    tags: Mapping[str, str],
    metrics: Mapping[str, float],
    *,
    folder: Path | None = None,
) -> str | None:
    """Write comparison.md (and the job summary) comparing a live run with the baseline file's
    block; None for replay runs, which the regression gate judges instead."""
    if plan.mode.is_replay:
        return None
    path = plan.gold_dir / BASELINE_FILE
    block = baseline_block(plan.gold_dir, plan.provider.value)
    gated = gated_or_default(block.gated_metrics if block is not None else None)
    baseline_metrics = dict(block.metrics) if block is not None and block.metrics else None
    rows = compare(gated, baseline_metrics, dict(metrics))
    kind = block.cassette_kind.value if block is not None and block.cassette_kind else UNMEASURED
    reasons = (
        "a live number is a new evidence event: reported and compared, never gated.",
        f"compared with {path} (provider {plan.provider.value!r}, baseline evidence: {kind}).",
    )
    run = TrackedRun(logged.run_id, logged.experiment_id, logged.status, 0, dict(tags), dict(metrics))
    stats = row_stats(rows, None, None, metrics)
    markdown = render_markdown(
        GateResult(Verdict.REPORT_ONLY, reasons, run, None, rows),
        heading="live run comparison",
        stats=stats,
        no_interval=f"{BASELINE_FILE} holds no per-conversation record to pair by",
    )
    publish(markdown, folder or plan.output_dir, name=COMPARISON_FILE)
    return markdown
