"""A live run's report: compared with its provider's reviewed baseline, never gated."""

from __future__ import annotations

from pathlib import Path

from ..gates._gate_run import publish, render_markdown
from ..gates._regression import GateResult, Verdict, compare
from ..gold import BASELINE_FILE, load_baseline_file
from ..metric_keys import gated_or_default
from ..tracking._records import RunRecord
from ._run import RunResult


def live_comparison(result: RunResult, gold_dir: Path) -> str | None:
    """Markdown comparing a live run with the baseline file's block; None for replay runs."""
    if result.plan.mode.is_replay:
        return None
    path = gold_dir / BASELINE_FILE
    block = load_baseline_file(path).providers.get(result.plan.provider.value) if path.is_file() else None
    gated = gated_or_default(block.gated_metrics if block is not None else None)
    baseline_metrics = dict(block.metrics) if block is not None and block.metrics else None
    rows = compare(gated, baseline_metrics, dict(result.metrics))
    kind = block.cassette_kind.value if block is not None and block.cassette_kind else "unmeasured"
    reasons = (
        "a live number is a new evidence event: reported and compared, never gated.",
        f"compared with {path} (provider {result.plan.provider.value!r}, baseline evidence: {kind}).",
    )
    run = RunRecord(
        result.logged.run_id,
        result.logged.experiment_id,
        result.logged.status,
        0,
        dict(result.tags),
        dict(result.metrics),
    )
    markdown = render_markdown(GateResult(Verdict.REPORT_ONLY, reasons, run, None, rows), heading="live run comparison")
    publish(markdown, result.plan.output_dir, name="comparison.md")
    return markdown
