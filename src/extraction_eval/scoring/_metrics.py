"""Every metric of the contract, computed from cases by pure functions (no I/O).

Zero denominators: a precision, recall or F1 is 1.0 when nothing was expected and
nothing predicted in its scope, else 0.0. An accuracy or a rate over zero cases is
left out of the result; its case count (a ``counts/...`` key) is always present.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..metric_keys import DEFAULT_GATED_METRICS, LOWER_IS_BETTER
from ..vocab import CATEGORIES
from ._assign import assign
from ._matcher import Matcher, texts_match
from ._types import Case, ExpectedItem, Failure, Memory

__all__ = [
    "DEFAULT_GATED_METRICS",
    "LOWER_IS_BETTER",
    "ConversationScore",
    "MatchedPair",
    "ScoreReport",
    "aggregate",
    "score",
    "score_conversation",
]


@dataclass(frozen=True)
class MatchedPair:
    """An expected memory and the prediction assigned to it."""

    expected: ExpectedItem
    predicted_index: int
    predicted: Memory
    similarity: float

    @property
    def category_ok(self) -> bool:
        return self.expected.memory.categories == self.predicted.categories

    @property
    def temporal_ok(self) -> bool:
        return self.expected.memory.temporal_kind == self.predicted.temporal_kind

    @property
    def strict_ok(self) -> bool:
        return self.category_ok and self.temporal_ok


@dataclass(frozen=True)
class ConversationScore:
    """How one conversation scored: its pairs, what was missed and what leaked."""

    case: Case
    pairs: tuple[MatchedPair, ...]
    supersession_hits: frozenset[str]
    stale_leaks: frozenset[str]
    spurious_supersedes: int

    @property
    def conversation_id(self) -> str:
        return self.case.conversation_id

    @property
    def failure(self) -> Failure | None:
        return self.case.outcome.failure

    @property
    def predictions(self) -> tuple[Memory, ...]:
        return self.case.outcome.predictions

    @property
    def unmatched_expected(self) -> tuple[ExpectedItem, ...]:
        used = {p.expected.memory_id for p in self.pairs}
        return tuple(e for e in self.case.expected if e.memory_id not in used)

    @property
    def unmatched_predicted(self) -> tuple[int, ...]:
        used = {p.predicted_index for p in self.pairs}
        return tuple(i for i in range(len(self.predictions)) if i not in used)

    def to_json(self) -> dict[str, object]:
        return {
            "conversation_id": self.conversation_id,
            "status": "failed" if self.failure else "ok",
            "failure_reason": self.failure.reason.value if self.failure else None,
            "error": self.failure.detail if self.failure else None,
            "expected": [{"memory_id": e.memory_id, **e.memory.to_json()} for e in self.case.expected],
            "predicted": [m.to_json() for m in self.predictions],
            "matches": [
                {
                    "memory_id": p.expected.memory_id,
                    "predicted_index": p.predicted_index,
                    "similarity": p.similarity,
                    "category_ok": p.category_ok,
                    "temporal_ok": p.temporal_ok,
                }
                for p in self.pairs
            ],
            "missed": [e.memory_id for e in self.unmatched_expected],
            "spurious": list(self.unmatched_predicted),
            "supersession_hits": sorted(self.supersession_hits),
            "stale_leaks": sorted(self.stale_leaks),
        }


@dataclass(frozen=True)
class ScoreReport:
    """The flat metrics and the per-conversation detail behind them."""

    metrics: Mapping[str, float]
    conversations: tuple[ConversationScore, ...]


def score_conversation(case: Case, matcher: Matcher) -> ConversationScore:
    predictions = case.outcome.predictions
    found = assign(
        matcher,
        [e.memory.content for e in case.expected],
        [p.content for p in predictions],
    )
    pairs = tuple(
        MatchedPair(
            expected=case.expected[pair.expected_index],
            predicted_index=pair.predicted_index,
            predicted=predictions[pair.predicted_index],
            similarity=pair.similarity,
        )
        for pair in sorted(found, key=lambda p: p.expected_index)
    )
    hits = frozenset(
        p.expected.memory_id
        for p in pairs
        if p.expected.memory.supersedes is not None
        and p.predicted.supersedes is not None
        and texts_match(matcher, p.expected.memory.supersedes, p.predicted.supersedes)
    )
    assigned = {p.predicted_index for p in pairs}
    unassigned = [m for i, m in enumerate(predictions) if i not in assigned]
    leaks = frozenset(
        e.memory_id
        for e in case.expected
        if e.memory.supersedes is not None
        and any(texts_match(matcher, e.memory.supersedes, m.content) for m in unassigned)
    )
    spurious = sum(1 for p in pairs if p.predicted.supersedes is not None and p.expected.memory.supersedes is None)
    return ConversationScore(case, pairs, hits, leaks, spurious)


def _pr(numerator: int, denominator: int, other_scope: int) -> float:
    """Precision or recall with the contract's zero rule."""
    if denominator == 0:
        return 1.0 if other_scope == 0 else 0.0
    return numerator / denominator


def _f1(precision: float, recall: float) -> float:
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _rate(out: dict[str, float], key: str, numerator: int, cases: int) -> None:
    if cases > 0:
        out[key] = numerator / cases


def aggregate(scores: Sequence[ConversationScore]) -> dict[str, float]:
    """The contract's metrics over scored conversations."""
    if not scores:
        raise ValueError("a run over zero conversations has no metrics")
    pairs = [p for s in scores for p in s.pairs]
    expected = [e for s in scores for e in s.case.expected]
    predicted = [m for s in scores for m in s.predictions]
    out: dict[str, float] = {}

    for category in CATEGORIES:
        both = sum(1 for p in pairs if category in p.expected.memory.categories and category in p.predicted.categories)
        n_pred = sum(1 for m in predicted if category in m.categories)
        n_exp = sum(1 for e in expected if category in e.memory.categories)
        precision, recall = _pr(both, n_pred, n_exp), _pr(both, n_exp, n_pred)
        out[f"precision/{category.value}"] = precision
        out[f"recall/{category.value}"] = recall
        out[f"f1/{category.value}"] = _f1(precision, recall)
        scoped = [p for p in pairs if category in p.expected.memory.categories]
        out[f"counts/matched/{category.value}"] = len(scoped)
        _rate(out, f"category_accuracy/{category.value}", sum(p.category_ok for p in scoped), len(scoped))
        _rate(out, f"temporal_accuracy/{category.value}", sum(p.temporal_ok for p in scoped), len(scoped))

    for name in ("precision", "recall", "f1"):
        out[f"macro/{name}"] = math.fsum(out[f"{name}/{c.value}"] for c in CATEGORIES) / len(CATEGORIES)

    out["micro/precision"] = _pr(len(pairs), len(predicted), len(expected))
    out["micro/recall"] = _pr(len(pairs), len(expected), len(predicted))
    strict = sum(p.strict_ok for p in pairs)
    out["strict/precision"] = _pr(strict, len(predicted), len(expected))
    out["strict/recall"] = _pr(strict, len(expected), len(predicted))
    _rate(out, "category_accuracy", sum(p.category_ok for p in pairs), len(pairs))
    _rate(out, "temporal_accuracy", sum(p.temporal_ok for p in pairs), len(pairs))

    multi = [e for e in expected if len(e.memory.categories) > 1]
    multi_exact = sum(1 for p in pairs if len(p.expected.memory.categories) > 1 and p.category_ok)
    out["counts/multi_label"] = len(multi)
    _rate(out, "multilabel/exact_match", multi_exact, len(multi))

    supersession = [e for e in expected if e.memory.supersedes is not None]
    out["counts/supersession"] = len(supersession)
    _rate(out, "supersession/recall", sum(len(s.supersession_hits) for s in scores), len(supersession))
    _rate(out, "supersession/stale_leak_rate", sum(len(s.stale_leaks) for s in scores), len(supersession))

    negatives = [s for s in scores if not s.case.expected]
    out["counts/negative_conversations"] = len(negatives)
    _rate(out, "negatives/false_positive_rate", sum(1 for s in negatives if s.predictions), len(negatives))

    failed = sum(1 for s in scores if s.failure is not None)
    out["counts/conversations"] = len(scores)
    out["failures/rate"] = failed / len(scores)
    out["counts/expected"] = len(expected)
    out["counts/predicted"] = len(predicted)
    out["counts/matched"] = len(pairs)
    out["counts/failed"] = failed
    out["counts/spurious_supersedes"] = sum(s.spurious_supersedes for s in scores)
    return {key: float(value) for key, value in out.items()}


def score(cases: Iterable[Case], matcher: Matcher) -> ScoreReport:
    """Match every conversation one-to-one, then compute every metric."""
    scored = tuple(score_conversation(case, matcher) for case in cases)
    return ScoreReport(metrics=aggregate(scored), conversations=scored)
