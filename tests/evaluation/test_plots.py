"""The per-category plot: the legend below the axes (never over a bar) and, under each baseline
bar, the gate's band of 3 points (issue 24, point 6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from extraction_eval.evaluation import _plots
from extraction_eval.gates._regression import THRESHOLD


def test_the_band_is_the_gates_threshold() -> None:
    assert _plots.GATE_POINTS == THRESHOLD


def test_each_baseline_bar_has_its_band_and_the_legend_sits_below_the_axes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures: list[Any] = []
    plt = _plots._pyplot()
    real = plt.subplots

    def keep(*args: Any, **kwargs: Any) -> Any:
        fig, axes = real(*args, **kwargs)
        figures.append(fig)
        return fig, axes

    monkeypatch.setattr(plt, "subplots", keep)
    monkeypatch.setattr(plt, "close", lambda fig: None)
    cats = ("factual", "procedural", "preference", "behavioral", "episodic")
    metrics = {f"{m}/{c}": 0.9 for m in ("precision", "recall") for c in cats}
    baseline = {f"{m}/{c}": 0.8 for m in ("precision", "recall") for c in cats}
    _plots._per_category(tmp_path / "p.png", metrics, baseline, "t", "none")
    (fig,) = figures
    for ax in fig.axes:
        assert ax.get_legend() is None  # no legend inside an axes
        bands = [c for c in ax.collections if c.get_label().startswith("gate") or c.get_label().startswith("_")]
        assert len(bands) == 5
        for band in bands:
            ys = band.get_paths()[0].vertices[:, 1]
            assert min(ys) == pytest.approx(0.77) and max(ys) == pytest.approx(0.8)
    (legend,) = fig.legends
    assert sorted(t.get_text() for t in legend.get_texts()) == [
        "baseline",
        "gate: 3 points below the baseline",
        "this run",
    ]
    assert (tmp_path / "p.png").stat().st_size > 0
