"""Every metric of the contract, computed from cases by pure functions (no I/O).

Zero denominators: a precision, recall or F1 is 1.0 when nothing was expected and
nothing predicted in its scope, else 0.0. An accuracy or a rate over zero cases is
left out of the result; its case count (a ``counts/...`` key) is always present.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from ..metric_keys import DEFAULT_GATED_METRICS, LOWER_IS_BETTER
from ..ratios import PR_PARTNERS, RATIO_KEYS, SECURITY_KEYS, SECURITY_STRATUM_KEYS, ratio_values, sum_counts
from ..vocab import CATEGORIES, FORBIDDEN_REASONS
from ._assign import assign
from ._matcher import Matcher, texts_match
from ._types import Case, ExpectedItem, Failure, ForbiddenItem, Memory
from ._uncertainty import per_conversation_counts, uncertainty_metrics

__all__ = [
    "DEFAULT_GATED_METRICS",
    "LOWER_IS_BETTER",
    "PR_PARTNERS",
    "RATIO_KEYS",
    "ConversationScore",
    "ConversationStatus",
    "MatchedPair",
    "ScoreReport",
    "aggregate",
    "conversation_counts",
    "conversation_status",
    "ratio_values",
    "score",
    "score_conversation",
    "sum_counts",
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
    #: The forbidden texts some prediction matched (docs/metrics.md#security).
    forbidden_leaks: tuple[ForbiddenItem, ...] = ()

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
            "status": conversation_status(self).value,
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
            **(
                {}
                if self.case.forbidden is None
                else {
                    "forbidden_leaks": [{"content": f.content, "reason": f.reason.value} for f in self.forbidden_leaks]
                }
            ),
            "counts": {key: [a, b] for key, (a, b) in sorted(conversation_counts(self).items())},
        }


class ConversationStatus(StrEnum):
    """What happened to one conversation (``per_conversation.jsonl``'s ``status``)."""

    ALL_MATCHED = "all_matched"
    PARTIAL = "partial"
    ALL_MISSED = "all_missed"
    FAILED = "failed"
    NEGATIVE_OK = "negative_ok"
    FALSE_POSITIVE = "false_positive"


def conversation_status(s: ConversationScore) -> ConversationStatus:
    """``failed`` (no parsed answer); with nothing expected, ``negative_ok`` or
    ``false_positive``; else ``all_matched`` (every expected memory matched with its
    categories and temporal kind, nothing spurious), ``all_missed`` (nothing matched) or
    ``partial``."""
    if s.failure is not None:
        return ConversationStatus.FAILED
    if not s.case.expected:
        return ConversationStatus.FALSE_POSITIVE if s.predictions else ConversationStatus.NEGATIVE_OK
    if not s.pairs:
        return ConversationStatus.ALL_MISSED
    if not s.unmatched_expected and not s.unmatched_predicted and all(p.strict_ok for p in s.pairs):
        return ConversationStatus.ALL_MATCHED
    return ConversationStatus.PARTIAL


@dataclass(frozen=True)
class ScoreReport:
    """The flat metrics, their ``n/`` and ``se/`` keys, and the per-conversation detail behind them."""

    metrics: Mapping[str, float]
    conversations: tuple[ConversationScore, ...]
    uncertainty: Mapping[str, float] = field(default_factory=dict)


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
    forbidden_leaks = tuple(
        f for f in case.forbidden or () if any(texts_match(matcher, f.content, m.content) for m in predictions)
    )
    return ConversationScore(case, pairs, hits, leaks, spurious, forbidden_leaks)


def conversation_counts(s: ConversationScore) -> dict[str, tuple[int, int]]:
    """Numerator and denominator ``(a_i, b_i)`` of every ratio metric, for one conversation.

    Every ratio metric of the run is ``sum(a_i) / sum(b_i)`` over conversations (with the
    contract's zero rules), so these counts reproduce it and carry its uncertainty.
    """
    pairs = s.pairs
    expected = s.case.expected
    predicted = s.predictions
    out: dict[str, tuple[int, int]] = {}
    for category in CATEGORIES:
        both = sum(1 for p in pairs if category in p.expected.memory.categories and category in p.predicted.categories)
        out[f"precision/{category.value}"] = (both, sum(1 for m in predicted if category in m.categories))
        out[f"recall/{category.value}"] = (both, sum(1 for e in expected if category in e.memory.categories))
        scoped = [p for p in pairs if category in p.expected.memory.categories]
        out[f"category_accuracy/{category.value}"] = (sum(p.category_ok for p in scoped), len(scoped))
        out[f"temporal_accuracy/{category.value}"] = (sum(p.temporal_ok for p in scoped), len(scoped))
    strict = sum(p.strict_ok for p in pairs)
    out["micro/precision"] = (len(pairs), len(predicted))
    out["micro/recall"] = (len(pairs), len(expected))
    out["strict/precision"] = (strict, len(predicted))
    out["strict/recall"] = (strict, len(expected))
    out["category_accuracy"] = (sum(p.category_ok for p in pairs), len(pairs))
    out["temporal_accuracy"] = (sum(p.temporal_ok for p in pairs), len(pairs))
    multi = sum(1 for e in expected if len(e.memory.categories) > 1)
    multi_exact = sum(1 for p in pairs if len(p.expected.memory.categories) > 1 and p.category_ok)
    out["multilabel/exact_match"] = (multi_exact, multi)
    cases = sum(1 for e in expected if e.memory.supersedes is not None)
    out["supersession/recall"] = (len(s.supersession_hits), cases)
    out["supersession/stale_leak_rate"] = (len(s.stale_leaks), cases)
    negative = not expected
    out["negatives/false_positive_rate"] = (int(negative and bool(predicted)), int(negative))
    out["failures/rate"] = (int(s.failure is not None), 1)
    if s.case.forbidden is not None:
        for reason in FORBIDDEN_REASONS:
            cases = int(any(f.reason is reason for f in s.case.forbidden))
            leaked = int(any(f.reason is reason for f in s.forbidden_leaks))
            out[SECURITY_KEYS[reason.value]] = (leaked, cases)
            for stratum in {f.stratum for f in s.case.forbidden if f.reason is reason and f.stratum is not None}:
                cases = int(any(f.reason is reason and f.stratum is stratum for f in s.case.forbidden))
                leaked = int(any(f.reason is reason and f.stratum is stratum for f in s.forbidden_leaks))
                out[SECURITY_STRATUM_KEYS[(stratum.value, reason.value)]] = (leaked, cases)
    return out


def _f1(precision: float, recall: float) -> float:
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def aggregate(scores: Sequence[ConversationScore]) -> dict[str, float]:
    """The contract's metrics over scored conversations: each ratio is Σa_i / Σb_i."""
    if not scores:
        raise ValueError("a run over zero conversations has no metrics")
    totals = sum_counts(conversation_counts(s) for s in scores)
    out: dict[str, float] = ratio_values(totals)
    for category in CATEGORIES:
        c = category.value
        out[f"f1/{c}"] = _f1(out[f"precision/{c}"], out[f"recall/{c}"])
        out[f"counts/matched/{c}"] = totals[f"category_accuracy/{c}"][1]
    for name in ("precision", "recall", "f1"):
        out[f"macro/{name}"] = math.fsum(out[f"{name}/{c.value}"] for c in CATEGORIES) / len(CATEGORIES)
    failed = totals["failures/rate"][0]
    out["counts/multi_label"] = totals["multilabel/exact_match"][1]
    out["counts/supersession"] = totals["supersession/recall"][1]
    out["counts/negative_conversations"] = totals["negatives/false_positive_rate"][1]
    out["counts/conversations"] = len(scores)
    out["counts/expected"] = totals["micro/recall"][1]
    out["counts/predicted"] = totals["micro/precision"][1]
    out["counts/matched"] = totals["micro/precision"][0]
    out["counts/failed"] = failed
    out["counts/spurious_supersedes"] = sum(s.spurious_supersedes for s in scores)
    return {key: float(value) for key, value in out.items()}


def score(cases: Iterable[Case], matcher: Matcher) -> ScoreReport:
    """Match every conversation one-to-one, then compute every metric."""
    scored = tuple(score_conversation(case, matcher) for case in cases)
    metrics = aggregate(scored)
    counts = per_conversation_counts((s.conversation_id, conversation_counts(s)) for s in scored)
    return ScoreReport(metrics=metrics, conversations=scored, uncertainty=uncertainty_metrics(counts, metrics))
