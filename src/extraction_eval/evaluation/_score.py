"""Scoring the collected answers against the gold set: the metrics and the failure bound."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..gold import Conversation, GoldSet
from ..scoring import (
    DEFAULT_MATCHER,
    Case,
    ConversationScore,
    ExpectedItem,
    ForbiddenItem,
    Matcher,
    Memory,
    ScoreReport,
    aggregate,
    score,
)
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
    #: The sample index of each entry of ``report.conversations`` and ``answers`` (all 0 unless ``--repeat``).
    samples: tuple[int, ...] = ()


def build_cases(gold: GoldSet, selected: Sequence[Conversation], answers: Mapping[str, Answer]) -> list[Case]:
    """One case per selected conversation: its expected memories, its parsed answer, and its
    forbidden memories (None for every case when the gold set has no forbidden file)."""
    forbidden = gold.forbidden_by_conversation
    cases = []
    for conversation in selected:
        cid = conversation.conversation_id
        expected = tuple(
            ExpectedItem(m.memory_id, Memory(m.content, frozenset(m.categories), m.temporal_kind, m.supersedes))
            for m in gold.by_conversation[cid]
        )
        banned = None
        if forbidden is not None:
            banned = tuple(ForbiddenItem(f.content, f.reason, f.stratum) for f in forbidden[cid])
        cases.append(Case(cid, expected, answers[cid].outcome(), banned))
    return cases


def score_answers(
    gold: GoldSet,
    selected: Sequence[Conversation],
    answers: Mapping[str, Answer],
    *,
    model: str,
    max_failure_rate: float | None = None,
    matcher: Matcher = DEFAULT_MATCHER,
    extra_samples: Sequence[Mapping[str, Answer]] = (),
) -> ScoredRun:
    """Score every selected conversation (every sample of it, with ``--repeat``); the run fails
    when more than ``max_failure_rate`` of them failed.

    With several samples the metrics pool every sample of every conversation, and the standard
    errors are clustered by conversation (its samples' counts summed); ``repeat/*`` keys say how
    far the samples agree (docs/metrics.md#repeated-samples).
    """
    samples = (answers, *extra_samples)
    cases = [case for sample in samples for case in build_cases(gold, selected, sample)]
    report = score(cases, matcher)
    in_order = tuple(sample[c.conversation_id] for sample in samples for c in selected)
    indexes = tuple(k for k in range(len(samples)) for _ in selected)
    metrics = {**report.metrics, **report.uncertainty, **usage_metrics(in_order, model)}
    if len(samples) > 1:
        metrics.update(repeat_metrics(report.conversations, len(samples), len(selected)))
    failed = max_failure_rate is not None and metrics["failures/rate"] > max_failure_rate
    notes: tuple[str, ...] = ()
    if failed:
        notes = (
            f"failure rate {metrics['failures/rate']:.3f} is above --max-failure-rate "
            f"{max_failure_rate}: the run is marked FAILED.",
        )
    return ScoredRun(report, metrics, in_order, failed, notes, indexes)


#: The metrics whose between-sample spread a ``--repeat`` run logs.
HEADLINE_KEYS: tuple[str, ...] = (
    "macro/precision",
    "macro/recall",
    "macro/f1",
    "micro/precision",
    "micro/recall",
    "strict/precision",
    "strict/recall",
    "category_accuracy",
    "temporal_accuracy",
    "failures/rate",
)


def repeat_metrics(scores: Sequence[ConversationScore], n_samples: int, n_conversations: int) -> dict[str, float]:
    """How far the samples of a ``--repeat`` run agree.

    - ``repeat/samples``: N.
    - ``repeat/agreement``: the share of conversations whose N samples all give the same outcome
      (the same failure status, the same matched expected memories, the same number of predictions).
    - ``repeat/spread/<key>``, ``repeat/sd/<key>``: max − min and the sample standard deviation
      (n − 1) of each headline metric computed on each sample alone.
    """
    by_sample = [scores[k * n_conversations : (k + 1) * n_conversations] for k in range(n_samples)]
    out: dict[str, float] = {"repeat/samples": float(n_samples)}

    def outcome(s: ConversationScore) -> tuple[bool, frozenset[str], int]:
        return (s.failure is not None, frozenset(p.expected.memory_id for p in s.pairs), len(s.predictions))

    same = sum(1 for i in range(n_conversations) if len({outcome(sample[i]) for sample in by_sample}) == 1)
    out["repeat/agreement"] = same / n_conversations
    per_sample = [aggregate(sample) for sample in by_sample]
    for key in HEADLINE_KEYS:
        values = [m[key] for m in per_sample if key in m]
        if len(values) == n_samples:
            out[f"repeat/spread/{key}"] = max(values) - min(values)
            out[f"repeat/sd/{key}"] = statistics.stdev(values)
    return out
