"""How well a matcher agrees with hand labels: pure computation over labeled pairs, no I/O.

A pair is *accepted* when the matcher's similarity is at or above its threshold.
Against the label (``same_fact``) that gives, per group of pairs, the counts
true positive (same fact, accepted), false negative (same fact, refused), true
negative (different fact, refused) and false positive (different fact, accepted),
and from them:

- acceptance = TP / (TP + FN), the share of same-fact pairs accepted (recall);
- refusal = TN / (TN + FP), the share of different-fact pairs refused (specificity);
- precision = TP / (TP + FP); F1 = 2 TP / (2 TP + FP + FN);
- Cohen's kappa = (p_o - p_e) / (1 - p_e), with p_o = (TP + TN) / n and
  p_e = ((TP + FP)(TP + FN) + (FN + TN)(FP + TN)) / n^2.

Precision, F1 and kappa are reported only for a group that holds pairs of both labels
(a pair kind holds one label only: its acceptance or its refusal is the figure).
Intervals (``_intervals.py``): Wilson for acceptance and refusal; a seeded
percentile bootstrap over gold rows (clusters) for precision, F1 and kappa.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ._intervals import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    Counts,
    Estimate,
    Statistic,
    cluster_bootstrap,
    f1_of,
    kappa_of,
    point,
    precision_of,
    wilson,
)
from ._matcher import Matcher, explain


@dataclass(frozen=True)
class LabeledPair:
    """A gold text, a candidate text and whether they state the same fact."""

    pair_id: str
    cluster: str  # the gold row: pairs of one row are resampled together
    gold: str
    candidate: str
    same_fact: bool
    kind: str
    categories: tuple[str, ...]


@dataclass(frozen=True)
class Decision:
    """What the matcher did with one pair, and why."""

    pair: LabeledPair
    similarity: float
    rule: str
    accepted: bool

    @property
    def correct(self) -> bool:
        return self.accepted is self.pair.same_fact


@dataclass(frozen=True)
class Figures:
    """Agreement with the labels over one group of pairs."""

    pairs: int
    clusters: int
    true_positive: int
    false_negative: int
    true_negative: int
    false_positive: int
    acceptance: Estimate
    refusal: Estimate
    precision: Estimate
    f1: Estimate
    kappa: Estimate


@dataclass(frozen=True)
class CalibrationReport:
    """Figures overall, by pair kind and by category, and every pair the matcher got wrong."""

    matcher: str
    overall: Figures
    by_kind: dict[str, Figures]
    by_category: dict[str, Figures]
    misses: tuple[Decision, ...]
    resamples: int
    seed: int


def decide(matcher: Matcher, pairs: Iterable[LabeledPair]) -> list[Decision]:
    decisions = []
    for pair in pairs:
        similarity, rule = explain(matcher, pair.gold, pair.candidate)
        decisions.append(Decision(pair, similarity, rule, similarity >= matcher.threshold))
    return decisions


def _counts(decisions: Iterable[Decision]) -> Counts:
    tp = fn = tn = fp = 0
    for d in decisions:
        if d.pair.same_fact:
            tp, fn = (tp + 1, fn) if d.accepted else (tp, fn + 1)
        else:
            tn, fp = (tn + 1, fp) if not d.accepted else (tn, fp + 1)
    return tp, fn, tn, fp


def _estimate(statistic: Statistic, total: Counts, clusters: Sequence[Counts], resamples: int, seed: int) -> Estimate:
    value = point(statistic, total)
    if value is None:
        return Estimate(None, None, None)
    low, high = cluster_bootstrap(clusters, statistic, resamples=resamples, seed=seed)
    return Estimate(value, low, high)


def figures(
    decisions: Sequence[Decision], *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> Figures:
    """Counts, acceptance, refusal, precision, F1 and kappa of a group of decisions, with 95% intervals."""
    by_cluster: dict[str, list[Decision]] = {}
    for d in decisions:
        by_cluster.setdefault(d.pair.cluster, []).append(d)
    clusters = [_counts(group) for group in by_cluster.values()]
    tp, fn, tn, fp = total = _counts(decisions)
    both_labels = tp + fn > 0 and tn + fp > 0
    undefined = Estimate(None, None, None)
    return Figures(
        pairs=len(decisions),
        clusters=len(by_cluster),
        true_positive=tp,
        false_negative=fn,
        true_negative=tn,
        false_positive=fp,
        acceptance=wilson(tp, tp + fn),
        refusal=wilson(tn, tn + fp),
        precision=_estimate(precision_of, total, clusters, resamples, seed) if both_labels else undefined,
        f1=_estimate(f1_of, total, clusters, resamples, seed) if both_labels else undefined,
        kappa=_estimate(kappa_of, total, clusters, resamples, seed) if both_labels else undefined,
    )


def _grouped(
    decisions: Sequence[Decision], keys: Callable[[Decision], Iterable[str]], resamples: int, seed: int
) -> dict[str, Figures]:
    groups: dict[str, list[Decision]] = {}
    for d in decisions:
        for key in keys(d):
            groups.setdefault(key, []).append(d)
    return {key: figures(groups[key], resamples=resamples, seed=seed) for key in sorted(groups)}


def calibrate(
    matcher: Matcher,
    pairs: Sequence[LabeledPair],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> CalibrationReport:
    """Run the matcher on every pair and measure its agreement with the labels."""
    from ._matcher import matcher_id

    decisions = decide(matcher, pairs)
    return CalibrationReport(
        matcher=matcher_id(matcher),
        overall=figures(decisions, resamples=resamples, seed=seed),
        by_kind=_grouped(decisions, lambda d: (d.pair.kind,), resamples, seed),
        by_category=_grouped(decisions, lambda d: d.pair.categories, resamples, seed),
        misses=tuple(d for d in decisions if not d.correct),
        resamples=resamples,
        seed=seed,
    )
