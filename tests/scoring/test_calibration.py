"""Calibration figures on a tiny hand-labeled set, every number computed by hand below."""

from __future__ import annotations

import math

import pytest

from extraction_eval.scoring import KeyedDiceMatcher
from extraction_eval.scoring._calibration import LabeledPair, calibrate
from extraction_eval.scoring._intervals import cluster_bootstrap, kappa_of, precision_of, wilson

LISBON, RUNS, PENICILLIN = "User lives in Lisbon.", "User runs 5 km every morning.", "User is allergic to penicillin."


def _pair(n: int, cluster: str, gold: str, candidate: str, same: bool, categories: tuple[str, ...]) -> LabeledPair:
    kind = "synonym" if same else "other_object"
    return LabeledPair(f"p{n}", cluster, gold, candidate, same, kind, categories)


KEYED_DICE = KeyedDiceMatcher()

# keyed-dice@3's verdict on each pair, by its rules (docs/matcher.md):
PAIRS = [
    _pair(1, "A", LISBON, "user lives in lisbon", True, ("factual",)),  # equal after normalisation: TP
    _pair(2, "A", LISBON, "User resides in Lisbon.", True, ("factual",)),  # lives/resides swapped: FN
    _pair(3, "A", LISBON, "User lives in Porto.", False, ("factual",)),  # another place key: TN
    _pair(4, "B", RUNS, "User runs five km every morning.", True, ("behavioral",)),  # five = 5: TP
    _pair(5, "B", RUNS, "User runs 6 km every morning.", False, ("behavioral",)),  # another number: TN
    _pair(6, "B", RUNS, "User runs 5 km every morning at the gym.", False, ("behavioral",)),  # dice 8/9: FP
    _pair(7, "C", PENICILLIN, "User has a penicillin allergy.", True, ("factual", "preference")),  # TP
    _pair(8, "C", PENICILLIN, "User is not allergic to penicillin.", False, ("factual", "preference")),  # TN
]


def test_overall_figures_by_hand() -> None:
    report = calibrate(KEYED_DICE, PAIRS, resamples=500)
    o = report.overall
    # TP = 3 (p1, p4, p7), FN = 1 (p2), TN = 3 (p3, p5, p8), FP = 1 (p6); 8 pairs over 3 gold rows.
    assert (o.true_positive, o.false_negative, o.true_negative, o.false_positive) == (3, 1, 3, 1)
    assert (o.pairs, o.clusters) == (8, 3)
    # acceptance = 3/4, refusal = 3/4, precision = 3/(3+1), F1 = 2*3/(2*3+1+1) = 0.75.
    assert o.acceptance.value == o.refusal.value == o.precision.value == o.f1.value == 0.75
    # kappa: p_o = 6/8 = 0.75; p_e = ((3+1)(3+1) + (1+3)(1+3)) / 64 = 0.5; (0.75 - 0.5) / (1 - 0.5) = 0.5.
    assert o.kappa.value == 0.5
    # Wilson 3/4, z = 1.959964: centre = (0.75 + z²/8) / (1 + z²/4) = 1.230182 / 1.960365 = 0.627526;
    # half-width = z * sqrt(0.75*0.25/4 + z²/64) / 1.960365 = 1.959964 * 0.326953 / 1.960365 = 0.326885.
    assert o.acceptance.low == pytest.approx(0.30064, abs=1e-5)  # 0.627526 - 0.326885
    assert o.acceptance.high == pytest.approx(0.95441, abs=1e-5)  # 0.627526 + 0.326885
    for estimate in (o.precision, o.f1, o.kappa):
        assert estimate.low is not None and estimate.high is not None
        assert estimate.low <= (estimate.value or 0) <= estimate.high


def test_by_category_counts_a_multi_category_row_in_each() -> None:
    report = calibrate(KEYED_DICE, PAIRS, resamples=200)
    assert sorted(report.by_category) == ["behavioral", "factual", "preference"]
    factual = report.by_category["factual"]
    # rows A and C: p1, p7 TP; p2 FN; p3, p8 TN; no FP.
    f = factual
    assert (f.true_positive, f.false_negative, f.true_negative, f.false_positive) == (2, 1, 2, 0)
    assert factual.acceptance.value == pytest.approx(2 / 3) and factual.refusal.value == 1.0
    # kappa: p_o = 4/5; p_e = ((2+0)(2+1) + (1+2)(0+2)) / 25 = 12/25; (0.8 - 0.48) / 0.52 = 0.615385.
    assert factual.kappa.value == pytest.approx(0.32 / 0.52)
    assert report.by_category["preference"].pairs == 2


def test_a_kind_holds_one_label_so_only_its_share_is_reported() -> None:
    by_kind = calibrate(KEYED_DICE, PAIRS, resamples=200).by_kind
    assert by_kind["synonym"].acceptance.value == 0.75 and by_kind["synonym"].refusal.value is None
    assert by_kind["other_object"].refusal.value == 0.75 and by_kind["other_object"].acceptance.value is None
    assert by_kind["synonym"].precision.value is None and by_kind["synonym"].kappa.value is None


def test_misses_carry_the_rule_that_decided() -> None:
    misses = calibrate(KEYED_DICE, PAIRS, resamples=200).misses
    assert [(d.pair.pair_id, d.similarity, d.rule) for d in misses] == [
        ("p2", 0.0, "substitution (1 word(s) only in a, 1 only in b, 1 shared)"),
        # tokens runs km every morning / runs km every morning gym: 2*4/(4+5) = 0.888888889.
        ("p6", 0.888888889, "dice 0.889 (4 shared of 4 + 5 tokens)"),
    ]


def test_wilson_edges() -> None:
    assert wilson(0, 0).value is None
    # 0/5: centre = (0 + z²/10) / (1 + z²/5) and half-width equal it, so the interval is [0, 2*centre].
    z2 = 1.959963984540054**2
    assert wilson(0, 5).low == 0.0
    assert wilson(0, 5).high == pytest.approx(2 * (z2 / 10) / (1 + z2 / 5))
    assert wilson(5, 5).high == 1.0 and wilson(5, 5).low == pytest.approx(1 - wilson(0, 5).high)  # type: ignore[operator]


def test_the_bootstrap_resamples_whole_clusters() -> None:
    # Two gold rows: X = (TP 1, FP 1) has precision 1/2, Y = (TP 1) has 1. A resample of two rows is
    # XX (precision 2/4 = 0.5, probability 1/4), XY (2/3, 1/2) or YY (1, 1/4): the 2.5th percentile
    # is 0.5 and the 97.5th is 1.0.
    low, high = cluster_bootstrap([(1, 0, 0, 1), (1, 0, 0, 0)], precision_of, resamples=4000, seed=1)
    assert (low, high) == (0.5, 1.0)
    # Seeded: the same call gives the same interval.
    assert cluster_bootstrap([(1, 0, 0, 1), (1, 0, 0, 0)], precision_of, resamples=4000, seed=1) == (low, high)
    # Identical rows: every resample has the same precision, so the interval is a point.
    assert cluster_bootstrap([(2, 0, 1, 1)] * 5, precision_of, resamples=300) == (pytest.approx(2 / 3),) * 2


def test_kappa_is_undefined_without_both_labels() -> None:
    import numpy as np

    values = kappa_of(np.asarray([[3, 1, 0, 0], [2, 0, 2, 0]]))
    assert math.isnan(values[0])  # no different-fact pair
    assert values[1] == 1.0  # perfect agreement on both labels
