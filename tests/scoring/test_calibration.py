"""Calibration figures on a tiny hand-labeled set, every number computed by hand below."""

from __future__ import annotations

import math

import pytest

from extraction_eval.scoring import KeyedDiceMatcher
from extraction_eval.scoring._calibration import Decision, LabeledPair, calibrate, decide, figures
from extraction_eval.scoring._intervals import Estimate, cluster_bootstrap, f1_of, kappa_of, precision_of, wilson

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


def test_one_pair_of_each_label_or_as_many_false_positives_as_true_negatives_gives_every_figure() -> None:
    # Precision, F1 and kappa need pairs of both labels, one of each is enough; each group below is one
    # gold row, so every resample repeats its counts and each interval is the point itself.
    report = calibrate(KEYED_DICE, PAIRS, resamples=200)
    # preference: row C only, p7 TP and p8 TN. precision 1/1; F1 2/(2+0+0); kappa: p_o = 1,
    # p_e = ((1+0)(1+0) + (0+1)(0+1)) / 4 = 0.5, (1 - 0.5) / (1 - 0.5) = 1.
    preference = report.by_category["preference"]
    assert (preference.true_positive, preference.false_negative) == (1, 0)
    assert (preference.true_negative, preference.false_positive) == (1, 0)
    for estimate in (preference.precision, preference.f1, preference.kappa):
        assert (estimate.value, estimate.low, estimate.high) == (1.0, 1.0, 1.0)
    # behavioral: row B only, p4 TP, p5 TN, p6 FP (as many false positives as true negatives).
    # precision 1/2; F1 2/(2+1+0) = 2/3; kappa: p_o = 2/3, p_e = ((1+1)(1+0) + (0+1)(1+1)) / 9 = 4/9,
    # (2/3 - 4/9) / (1 - 4/9) = 0.4.
    behavioral = report.by_category["behavioral"]
    assert (behavioral.true_positive, behavioral.false_negative) == (1, 0)
    assert (behavioral.true_negative, behavioral.false_positive) == (1, 1)
    for estimate, expected in ((behavioral.precision, 0.5), (behavioral.f1, 2 / 3), (behavioral.kappa, 0.4)):
        assert (estimate.value, estimate.low, estimate.high) == pytest.approx((expected,) * 3)


def test_a_group_of_one_label_reports_neither_precision_nor_f1_nor_kappa() -> None:
    by_kind = calibrate(KEYED_DICE, PAIRS, resamples=200).by_kind
    # other_object: p3, p5, p8 refused, p6 accepted (TN 3, FP 1): precision would be 0/1, but there is
    # no same-fact pair to agree about.
    other = by_kind["other_object"]
    assert (other.true_negative, other.false_positive, other.true_positive + other.false_negative) == (3, 1, 0)
    # synonym: p1, p4, p7 accepted, p2 refused (TP 3, FN 1): F1 would be 6/7.
    synonym = by_kind["synonym"]
    assert (synonym.true_positive, synonym.false_negative, synonym.true_negative + synonym.false_positive) == (3, 1, 0)
    undefined = Estimate(None, None, None)
    for group in (other, synonym):
        assert (group.precision, group.f1, group.kappa) == (undefined, undefined, undefined)


def _decision(cluster: str, same: bool, accepted: bool) -> Decision:
    pair = LabeledPair(f"{cluster}-{same}-{accepted}", cluster, "gold", "candidate", same, "k", ("factual",))
    return Decision(pair, 1.0 if accepted else 0.0, "rule", accepted)


def test_nothing_accepted_leaves_precision_undefined_and_f1_and_kappa_zero() -> None:
    # Two rows, each one same-fact and one different-fact pair, all refused: TP 0, FN 2, TN 2, FP 0.
    group = figures([_decision(row, same, False) for row in ("X", "Y") for same in (True, False)], resamples=100)
    assert (group.true_positive, group.false_negative, group.true_negative, group.false_positive) == (0, 2, 2, 0)
    assert group.precision == Estimate(None, None, None)  # 0 / 0: no accepted pair
    # F1 = 0 / (0 + 0 + 2); kappa: p_o = 2/4, p_e = ((0+0)(0+2) + (2+2)(0+2)) / 16 = 0.5, (0.5 - 0.5) / 0.5 = 0.
    # Both rows hold the same counts, so every resample does too: the intervals are points.
    assert group.f1 == Estimate(0.0, 0.0, 0.0)
    assert group.kappa == Estimate(0.0, 0.0, 0.0)
    assert group.acceptance == wilson(0, 2) and group.refusal == wilson(2, 2)


class _Lookup:
    """A matcher whose similarity is looked up by candidate text (threshold 0.5)."""

    name, version, threshold = "lookup", "1", 0.5

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores

    def similarity(self, a: str, b: str) -> float:
        return self.scores[b]


def test_a_pair_exactly_at_the_threshold_is_accepted() -> None:
    # "accepted when the similarity is at or above its threshold"; the rule rounds, the decision does not
    matcher = _Lookup({"at": 0.5, "below": 0.4999})
    pairs = [LabeledPair(c, "A", "gold", c, True, "synonym", ("factual",)) for c in ("at", "below")]
    assert [(d.similarity, d.rule, d.accepted) for d in decide(matcher, pairs)] == [
        (0.5, "similarity 0.500", True),
        (0.4999, "similarity 0.500", False),
    ]


# Ten gold rows' (TP, FN, TN, FP): totals TP 12, FN 8, TN 11, FP 6 over 37 pairs.
ROWS = [(2, 1, 0, 0), (1, 0, 1, 1), (0, 1, 2, 0), (3, 0, 0, 2), (1, 2, 1, 0)]
ROWS += [(0, 0, 3, 1), (2, 0, 1, 0), (1, 1, 1, 1), (0, 2, 2, 0), (2, 1, 0, 1)]


def _pairs_of(rows: list[tuple[int, int, int, int]]) -> list[LabeledPair]:
    """Pairs giving each row its counts under _Lookup: candidate "yes" is accepted, "no" refused."""
    pairs = []
    for r, counts in enumerate(rows):
        for (same, candidate), n in zip(
            ((True, "yes"), (True, "no"), (False, "no"), (False, "yes")), counts, strict=True
        ):
            for _ in range(n):
                pairs.append(LabeledPair(f"p{len(pairs)}", f"row{r}", "gold", candidate, same, "mixed", ("factual",)))
    return pairs


def test_every_interval_is_the_seeded_bootstrap_over_gold_rows_with_the_given_resamples() -> None:
    matcher = _Lookup({"yes": 1.0, "no": 0.0})
    report = calibrate(matcher, _pairs_of(ROWS), resamples=300, seed=7)
    assert (report.matcher, report.resamples, report.seed) == ("lookup@1", 300, 7)
    # precision 12/18; F1 24/(24+6+8); kappa: p_o = 23/37, p_e = (18*20 + 19*17) / 37² = 683/1369,
    # (23/37 - 683/1369) / (1 - 683/1369) = 168/686.
    points = {precision_of: 12 / 18, f1_of: 24 / 38, kappa_of: 168 / 686}
    # overall, the one kind and the one category hold the same ten rows
    groups = (report.overall, report.by_kind["mixed"], report.by_category["factual"])
    for group in groups:
        assert (group.pairs, group.clusters) == (37, 10)
        for statistic, estimate in zip(points, (group.precision, group.f1, group.kappa), strict=True):
            interval = cluster_bootstrap(ROWS, statistic, resamples=300, seed=7)
            assert estimate == Estimate(pytest.approx(points[statistic]), *interval)
            # the seed and the number of resamples both move these intervals
            assert interval != cluster_bootstrap(ROWS, statistic, resamples=300, seed=8)
            assert interval != cluster_bootstrap(ROWS, statistic, resamples=2000, seed=7)
            assert interval != cluster_bootstrap(ROWS, statistic, resamples=300)
    # the same call gives the same report
    assert calibrate(matcher, _pairs_of(ROWS), resamples=300, seed=7) == report
