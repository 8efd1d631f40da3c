"""The 95% intervals of matcher calibration (docs/matcher.md, "Calibration"): each rule of
``scoring/_intervals.py`` at its edge, the expected values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from extraction_eval.scoring._intervals import (
    BOOTSTRAP_SEED,
    cluster_bootstrap,
    f1_of,
    kappa_of,
    point,
    precision_of,
    wilson,
)


def test_a_figure_with_a_zero_denominator_is_undefined_without_a_warning() -> None:
    # No accepted pair: precision 0/0. Nothing at all: F1 0/0 and kappa over 0 pairs. The tests
    # turn warnings into errors, so a 0/0 computed rather than skipped would fail here too.
    assert point(precision_of, (0, 3, 4, 0)) is None
    assert point(f1_of, (0, 0, 5, 0)) is None
    assert point(kappa_of, (0, 0, 0, 0)) is None


def test_a_denominator_of_one_is_divided() -> None:
    assert point(precision_of, (1, 0, 0, 0)) == 1.0  # one accepted pair, right
    assert point(precision_of, (0, 0, 0, 1)) == 0.0  # one accepted pair, wrong
    assert point(f1_of, (0, 1, 0, 0)) == 0.0  # 2·0 / (0 + 0 + 1)


def test_kappa_is_defined_whenever_both_labels_occur() -> None:
    # tp, fn, tn, fp. kappa = (observed − chance) / (1 − chance), observed = (tp + tn) / n,
    # chance = ((tp + fp)(tp + fn) + (fn + tn)(fp + tn)) / n².
    # (2, 2, 3, 1): n 8, observed 5/8, chance (3·4 + 5·4)/64 = 1/2: kappa 1/4 (tp = fn).
    # (1, 0, 2, 1): n 4, observed 3/4, chance (2·1 + 2·3)/16 = 1/2: kappa 1/2 (one same-fact pair).
    # (3, 1, 2, 2): n 8, observed 5/8, chance (5·4 + 3·4)/64 = 1/2: kappa 1/4 (tn = fp).
    # (0, 1, 1, 0): n 2, observed 1/2, chance (0·1 + 2·1)/4 = 1/2: kappa 0.
    values = kappa_of(np.asarray([[2, 2, 3, 1], [1, 0, 2, 1], [3, 1, 2, 2], [0, 1, 1, 0]]))
    assert values.tolist() == pytest.approx([0.25, 0.5, 0.25, 0.0])
    assert point(kappa_of, (1, 0, 2, 1)) == pytest.approx(0.5)


def test_the_wilson_interval_stays_within_0_and_1() -> None:
    # 16/16: mathematically centre + half-width is exactly 1; in floating point it comes out
    # just above, and the interval is cut at 1.
    assert wilson(16, 16).value == 1.0
    assert wilson(16, 16).high == 1.0


def _every_other_defined(summed: np.ndarray) -> np.ndarray:
    return np.where(np.arange(len(summed)) % 2 == 0, 1.0, np.nan)


def _first_k_defined(k: int):
    def statistic(summed: np.ndarray) -> np.ndarray:
        return np.where(np.arange(len(summed)) < k, 1.0, np.nan)

    return statistic


def test_the_interval_needs_at_least_half_of_the_resamples_defined() -> None:
    clusters = [(1, 0, 0, 0), (2, 0, 0, 0)]
    assert cluster_bootstrap(clusters, _every_other_defined, resamples=10) == (1.0, 1.0)  # 5 of 10: half
    assert cluster_bootstrap(clusters, _first_k_defined(5), resamples=10) == (1.0, 1.0)
    assert cluster_bootstrap(clusters, _first_k_defined(4), resamples=10) == (None, None)  # 4 of 10
    assert cluster_bootstrap(clusters, _first_k_defined(0), resamples=10) == (None, None)


def test_the_interval_is_the_2_5th_and_97_5th_percentiles() -> None:
    # A statistic that gives resample i the value i: 1,001 values 0..1000, whose 2.5th and 97.5th
    # percentiles (linear interpolation at 0.025·1000 and 0.975·1000) are 25 and 975.
    def index(summed: np.ndarray) -> np.ndarray:
        return np.arange(len(summed), dtype=float)

    assert cluster_bootstrap([(1, 0, 0, 0)], index, resamples=1001) == (25.0, 975.0)


def test_the_bootstrap_is_seeded_by_default() -> None:
    # 40 rows of different sizes: the sums of a resample spread widely, so two unseeded runs
    # would almost never share both percentiles. docs/matcher.md: "seed 20261203".
    clusters = [(i, 0, 0, 1) for i in range(40)]

    def accepted(summed: np.ndarray) -> np.ndarray:
        return (summed[:, 0] + summed[:, 3]).astype(float)

    first = cluster_bootstrap(clusters, accepted, resamples=200)
    assert cluster_bootstrap(clusters, accepted, resamples=200) == first
    assert cluster_bootstrap(clusters, accepted, resamples=200, seed=BOOTSTRAP_SEED) == first
    assert cluster_bootstrap(clusters, accepted, resamples=200, seed=BOOTSTRAP_SEED + 1) != first
