"""The run's plots, written as PNG files into a target folder (logged under ``plots/``).

- ``per_category.png``: precision and recall per category, the run's bars beside the
  baseline's (the provider's block of the gold folder's ``baseline_results.json``).
- ``category_confusion.png``: over matched pairs, each expected category label against
  each predicted label (a pair expected {a, b} and predicted {a} adds 1 to (a, a) and 1 to
  (b, a); the diagonal is agreement).
- ``temporal_confusion.png``: over matched pairs, expected temporal kind against predicted.

The counts are pure functions (``category_confusion``, ``temporal_confusion``); matplotlib
(Agg, no display) draws them. Values are drawn rounded to 3 decimals; the logged metrics
are not rounded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..scoring import ScoreReport
from ..vocab import CATEGORIES, TEMPORAL_KINDS

PER_CATEGORY_PLOT = "per_category.png"
CATEGORY_CONFUSION_PLOT = "category_confusion.png"
TEMPORAL_CONFUSION_PLOT = "temporal_confusion.png"

Matrix = list[list[int]]


def category_confusion(report: ScoreReport) -> tuple[tuple[str, ...], Matrix]:
    """Rows: expected category labels; columns: predicted labels; over matched pairs."""
    labels = tuple(c.value for c in CATEGORIES)
    index = {c: i for i, c in enumerate(CATEGORIES)}
    matrix = [[0] * len(labels) for _ in labels]
    for conversation in report.conversations:
        for pair in conversation.pairs:
            for expected in pair.expected.memory.categories:
                for predicted in pair.predicted.categories:
                    matrix[index[expected]][index[predicted]] += 1
    return labels, matrix


def temporal_confusion(report: ScoreReport) -> tuple[tuple[str, ...], Matrix]:
    """Rows: expected temporal kind; columns: predicted kind; one count per matched pair."""
    labels = tuple(k.value for k in TEMPORAL_KINDS)
    index = {k: i for i, k in enumerate(TEMPORAL_KINDS)}
    matrix = [[0] * len(labels) for _ in labels]
    for conversation in report.conversations:
        for pair in conversation.pairs:
            matrix[index[pair.expected.memory.temporal_kind]][index[pair.predicted.temporal_kind]] += 1
    return labels, matrix


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


#: The gate's threshold, drawn under each baseline bar (docs/gates.md).
GATE_POINTS = 0.03

#: what the per-category plot's title says when it has no baseline bars
NO_BASELINE = "no baseline metrics in baseline_results.json"


def _per_category(
    path: Path, metrics: Mapping[str, float], baseline: Mapping[str, float] | None, title: str, no_baseline: str
) -> None:
    plt = _pyplot()
    labels = [c.value for c in CATEGORIES]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    width = 0.38
    for ax, measure in zip(axes, ("precision", "recall"), strict=True):
        xs = range(len(labels))
        run = [metrics.get(f"{measure}/{c}", float("nan")) for c in labels]
        bars = ax.bar([x - width / 2 for x in xs], run, width, label="this run", color="#1f77b4")
        ax.bar_label(bars, labels=[f"{v:.3f}" for v in run], fontsize=7, padding=2)
        if baseline is not None:
            base = [baseline.get(f"{measure}/{c}", float("nan")) for c in labels]
            bbars = ax.bar([x + width / 2 for x in xs], base, width, label="baseline", color="#bbbbbb")
            ax.bar_label(bbars, labels=[f"{v:.3f}" for v in base], fontsize=7, padding=2)
            # the gate's rule: a run bar below this band's floor fails (a drop of more than 3 points)
            for x, value in zip(xs, base, strict=True):
                if value == value:  # not NaN
                    ax.fill_between(
                        [x - width, x + width],
                        value - GATE_POINTS,
                        value,
                        color="#d62728",
                        alpha=0.15,
                        linewidth=0,
                        label="gate: 3 points below the baseline" if x == 0 else None,
                    )
        ax.set_xticks(list(xs), labels, rotation=20)
        ax.set_ylim(0, 1.12)
        ax.set_title(measure)
    handles, names = axes[0].get_legend_handles_labels()
    # below the axes, never over a bar (it covered the episodic bars at the lower right)
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=8, frameon=False)
    fig.suptitle(title + ("" if baseline is not None else f" ({no_baseline})"))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _confusion(path: Path, labels: Sequence[str], matrix: Matrix, title: str, what: str) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 5))
    image = ax.imshow(matrix, cmap="Blues")
    ax.set_xticks(range(len(labels)), labels, rotation=30)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel(f"predicted {what}")
    ax.set_ylabel(f"expected {what}")
    peak = max((v for row in matrix for v in row), default=0)
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            colour = "white" if peak and value > peak / 2 else "black"
            ax.text(j, i, str(value), ha="center", va="center", color=colour, fontsize=9)
    fig.colorbar(image, ax=ax)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_plots(
    folder: Path,
    report: ScoreReport,
    metrics: Mapping[str, float],
    baseline: Mapping[str, float] | None,
    title: str,
    no_baseline: str = NO_BASELINE,
) -> tuple[Path, ...]:
    """The three PNG files in ``folder`` (created when missing); ``no_baseline`` is what the
    per-category plot's title says when ``baseline`` is None."""
    folder.mkdir(parents=True, exist_ok=True)
    per_category = folder / PER_CATEGORY_PLOT
    _per_category(per_category, metrics, baseline, title, no_baseline)
    labels, matrix = category_confusion(report)
    categories = folder / CATEGORY_CONFUSION_PLOT
    _confusion(categories, labels, matrix, "categories over matched pairs", "category")
    kinds, kind_matrix = temporal_confusion(report)
    temporal = folder / TEMPORAL_CONFUSION_PLOT
    _confusion(temporal, kinds, kind_matrix, "temporal kinds over matched pairs", "temporal kind")
    return per_category, categories, temporal
