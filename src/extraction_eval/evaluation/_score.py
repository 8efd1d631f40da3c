"""Scoring the collected answers against the gold set: the metrics and the failure bound."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..gold import Conversation, GoldSet
from ..scoring import DEFAULT_MATCHER, Case, ExpectedItem, Matcher, Memory, ScoreReport, score
from ._answers import Answer
from ._usage import usage_metrics


@dataclass(frozen=True)
class ScoredRun:
    """The score report, every metric (quality, usage, latency), and the answers in gold order."""

    report: ScoreReport
    metrics: Mapping[str, float]
    answers: tuple[Answer, ...]
    failed: bool
    notes: tuple[str, ...] = ()


def build_cases(gold: GoldSet, selected: Sequence[Conversation], answers: Mapping[str, Answer]) -> list[Case]:
    """One case per selected conversation: its expected memories and its parsed answer."""
    cases = []
    for conversation in selected:
        cid = conversation.conversation_id
        expected = tuple(
            ExpectedItem(m.memory_id, Memory(m.content, frozenset(m.categories), m.temporal_kind, m.supersedes))
            for m in gold.by_conversation[cid]
        )
        cases.append(Case(cid, expected, answers[cid].outcome()))
    return cases


def score_answers(
    gold: GoldSet,
    selected: Sequence[Conversation],
    answers: Mapping[str, Answer],
    *,
    model: str,
    max_failure_rate: float | None = None,
    matcher: Matcher = DEFAULT_MATCHER,
) -> ScoredRun:
    """Score every selected conversation; the run fails when more than ``max_failure_rate`` failed."""
    report = score(build_cases(gold, selected, answers), matcher)
    in_order = tuple(answers[c.conversation_id] for c in selected)
    metrics = {**report.metrics, **report.uncertainty, **usage_metrics(in_order, model)}
    failed = max_failure_rate is not None and metrics["failures/rate"] > max_failure_rate
    notes: tuple[str, ...] = ()
    if failed:
        notes = (
            f"failure rate {metrics['failures/rate']:.3f} is above --max-failure-rate "
            f"{max_failure_rate}: the run is marked FAILED.",
        )
    return ScoredRun(report, metrics, in_order, failed, notes)
