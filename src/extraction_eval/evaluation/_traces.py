"""Each scored conversation as an MLflow trace record (pure; ``tracking._traces`` logs them).

A record holds the conversation as the trace's input, the parsed memories (or the failure)
as its output, and its assessments:

- ``status``: the conversation's status (``all_matched``, ``partial``, ``all_missed``,
  ``failed``, ``negative_ok``, ``false_positive``), one per trace;
- ``outcome``: one per expected memory and per spurious prediction, the outcome of
  ``scoring.memory_rows`` (``matched``, ``missed``, ``spurious``, ``category_mismatch``,
  ``temporal_mismatch``), with the similarity and the matcher's rule in its rationale and
  metadata. For a matched pair they are the pair's own; for a missed memory those of the
  closest prediction (why it was refused); for a spurious prediction those of the closest
  expected memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from ..gold import Conversation
from ..scoring import ConversationScore, Matcher, Memory, conversation_status
from ..scoring._matcher import explain
from ..scoring._outcomes import MemoryOutcome, pair_outcome

if TYPE_CHECKING:
    from ._score import ScoredRun

STATUS_ASSESSMENT = "status"
OUTCOME_ASSESSMENT = "outcome"
#: The outcome of a correct negative conversation (no memory to have an outcome of its own).
NEGATIVE_OK = "negative_ok"


#: The trace's Expectation: the gold rows of the conversation (MLflow's "expected" side).
EXPECTATION_NAME = "expected_memories"
#: Numeric per-conversation Feedback, so MLflow's averages over traces mean something.
RECALL_FEEDBACK = "recall"
PRECISION_FEEDBACK = "precision"
STRICT_RECALL_FEEDBACK = "strict_recall"


@dataclass(frozen=True)
class AssessmentRecord:
    """A Feedback (the matcher's verdict, a label or a number), or with ``expectation`` the gold
    side (an Expectation whose source is the gold set, not the matcher)."""

    name: str
    value: Any
    rationale: str
    metadata: Mapping[str, str]
    expectation: bool = False


@dataclass(frozen=True)
class TraceRecord:
    """One conversation (one sample of it under ``--repeat``) as a trace."""

    name: str
    conversation_id: str
    inputs: Mapping[str, Any]
    outputs: Mapping[str, Any]
    assessments: tuple[AssessmentRecord, ...]
    #: The provider call's latency (0 for a replay).
    latency_s: float
    failed: bool


def _closest(matcher: Matcher, text: str, candidates: Sequence[str]) -> tuple[float | None, str, str]:
    """(similarity, rule, candidate) of the candidate closest to ``text``; (None, why, "") when none."""
    if not candidates:
        return None, "nothing on the other side", ""
    best: tuple[float, str, str] | None = None
    for candidate in candidates:
        similarity, rule = _explain(matcher, text, candidate)
        if best is None or similarity > best[0]:
            best = (similarity, rule, candidate)
    assert best is not None
    return best


def _explain(matcher: Matcher, a: str, b: str) -> tuple[float, str]:
    try:
        return explain(matcher, a, b)
    except Exception as exc:
        return 0.0, f"not explained ({type(exc).__name__})"


def _labels(memory: Memory) -> tuple[str, str]:
    return ", ".join(sorted(c.value for c in memory.categories)), memory.temporal_kind.value


def _assessment(
    outcome: MemoryOutcome,
    *,
    memory_id: str,
    expected: Memory | None,
    predicted: Memory | None,
    similarity: float | None,
    rule: str,
    closest: str = "",
) -> AssessmentRecord:
    metadata = {"memory_id": memory_id, "rule": rule}
    if similarity is not None:
        metadata["similarity"] = repr(round(similarity, 6))
    parts = []
    for side, memory in (("expected", expected), ("predicted", predicted)):
        if memory is not None:
            categories, kind = _labels(memory)
            metadata[side] = memory.content
            metadata[f"{side}_categories"] = categories
            metadata[f"{side}_temporal"] = kind
            parts.append(f"{side}: {memory.content!r} [{categories}; {kind}]")
    if closest:
        metadata["closest"] = closest
        parts.append(f"closest on the other side: {closest!r}")
    score = "no similarity" if similarity is None else f"similarity {similarity:.3f}"
    parts.append(f"{score}, rule: {rule}")
    return AssessmentRecord(OUTCOME_ASSESSMENT, outcome.value, "; ".join(parts), metadata)


def memory_assessments(score: ConversationScore, matcher: Matcher) -> tuple[AssessmentRecord, ...]:
    """One ``outcome`` assessment per expected memory and per spurious prediction."""
    out = []
    by_id = {p.expected.memory_id: p for p in score.pairs}
    predicted_texts = [m.content for m in score.predictions]
    for item in score.case.expected:
        pair = by_id.get(item.memory_id)
        if pair is None:
            similarity, rule, closest = _closest(matcher, item.memory.content, predicted_texts)
            out.append(
                _assessment(
                    MemoryOutcome.MISSED,
                    memory_id=item.memory_id,
                    expected=item.memory,
                    predicted=None,
                    similarity=similarity,
                    rule=rule if predicted_texts else "nothing predicted",
                    closest=closest,
                )
            )
            continue
        outcome = pair_outcome(pair)
        _, rule = _explain(matcher, item.memory.content, pair.predicted.content)
        out.append(
            _assessment(
                outcome,
                memory_id=item.memory_id,
                expected=item.memory,
                predicted=pair.predicted,
                similarity=pair.similarity,
                rule=rule,
            )
        )
    if not score.case.expected and not score.predictions and score.failure is None:
        # a correct negative conversation: one outcome, so the outcome column reads it, not null
        out.append(
            AssessmentRecord(
                OUTCOME_ASSESSMENT,
                NEGATIVE_OK,
                "nothing expected and nothing predicted: correct",
                {"memory_id": "-", "conversation_id": score.conversation_id},
            )
        )
    expected_texts = [e.memory.content for e in score.case.expected]
    for index in score.unmatched_predicted:
        memory = score.predictions[index]
        similarity, rule, closest = _closest(matcher, memory.content, expected_texts)
        out.append(
            _assessment(
                MemoryOutcome.SPURIOUS,
                memory_id=f"predicted[{index}]",
                expected=None,
                predicted=memory,
                similarity=similarity,
                rule=rule if expected_texts else "negative conversation: nothing is expected",
                closest=closest,
            )
        )
    return tuple(out)


def status_rationale(score: ConversationScore) -> str:
    """The counts behind a conversation's status, each outcome named (a category or temporal
    mismatch is matched in content, but not exactly: "1 of 1 matched" alone read as a pass)."""
    n = len(score.case.expected)
    outcomes = [pair_outcome(pair) for pair in score.pairs]
    exact = outcomes.count(MemoryOutcome.MATCHED)
    parts = [f"{exact} of {n} expected memories matched exactly"]
    if len(outcomes) > exact:
        kinds = outcomes.count(MemoryOutcome.CATEGORY_MISMATCH), outcomes.count(MemoryOutcome.TEMPORAL_MISMATCH)
        parts.append(f"{kinds[0]} with another category set, {kinds[1]} with another temporal kind")
    parts.append(f"{n - len(score.pairs)} missed, {len(score.unmatched_predicted)} spurious")
    if score.failure is not None:
        parts.append(f"failed: {score.failure.reason.value}")
    if n == 0 and not score.predictions and score.failure is None:
        parts = ["nothing expected and nothing predicted: a correct negative conversation"]
    return "; ".join(parts)


def expectation(score: ConversationScore) -> AssessmentRecord:
    """The conversation's gold rows as one Expectation (an empty list for a negative conversation)."""
    rows = [{"memory_id": item.memory_id, **item.memory.to_json()} for item in score.case.expected]
    return AssessmentRecord(
        EXPECTATION_NAME,
        rows,
        "",
        {"conversation_id": score.conversation_id},
        expectation=True,
    )


def rate_assessments(score: ConversationScore) -> tuple[AssessmentRecord, ...]:
    """This conversation's recall, precision and strict recall as numbers, every one on every
    trace (so no column reads null), a zero denominator by the contract's rule: 1.0 when nothing
    was expected and nothing predicted, else 0.0."""
    n_expected, n_predicted, n_matched = len(score.case.expected), len(score.predictions), len(score.pairs)
    strict = sum(1 for pair in score.pairs if pair_outcome(pair) is MemoryOutcome.MATCHED)
    empty = 1.0 if n_expected == 0 and n_predicted == 0 else 0.0
    meta = {"conversation_id": score.conversation_id}

    def rate(num: int, den: int) -> float:
        return num / den if den else empty

    return (
        AssessmentRecord(
            RECALL_FEEDBACK, rate(n_matched, n_expected), f"{n_matched} of {n_expected} expected memories matched", meta
        ),
        AssessmentRecord(
            PRECISION_FEEDBACK, rate(n_matched, n_predicted), f"{n_matched} of {n_predicted} predictions matched", meta
        ),
        AssessmentRecord(
            STRICT_RECALL_FEEDBACK,
            rate(strict, n_expected),
            f"{strict} of {n_expected} expected memories matched with the same categories and temporal kind",
            meta,
        ),
    )


def _record(
    score: ConversationScore,
    conversation: Conversation,
    latency: float | None,
    sample: int,
    repeated: bool,
    matcher: Matcher,
) -> TraceRecord:
    cid = score.conversation_id
    status = conversation_status(score).value
    failure = score.failure
    outputs: dict[str, Any] = {"memories": [m.to_json() for m in score.predictions]}
    if failure is not None:
        outputs["failure"] = {"reason": failure.reason.value, "detail": failure.detail}
    inputs: dict[str, Any] = {
        "conversation_id": cid,
        "session_date": conversation.session_date,
        "turns": [{"role": t.role, "content": t.content} for t in conversation.turns],
    }
    if repeated:
        inputs["sample"] = sample
    status_assessment = AssessmentRecord(STATUS_ASSESSMENT, status, status_rationale(score), {"conversation_id": cid})
    return TraceRecord(
        name=f"{cid}#{sample}" if repeated else cid,
        conversation_id=cid,
        inputs=inputs,
        outputs=outputs,
        assessments=(
            expectation(score),
            status_assessment,
            *rate_assessments(score),
            *memory_assessments(score, matcher),
        ),
        latency_s=latency or 0.0,
        failed=failure is not None,
    )


class TraceRecords(Sequence[TraceRecord]):
    """One record per scored conversation (per sample under ``--repeat``), in gold order, each
    built when it is asked for: ``log_traces`` takes them a batch at a time, so a run never holds
    every trace's payload (its inputs, outputs and assessments) at once, only one batch's
    (docs/benchmarks.md, section 7). Indexing twice builds two equal records."""

    def __init__(
        self,
        scores: Sequence[ConversationScore],
        conversations: Mapping[str, Conversation],
        latencies: Sequence[float | None],
        matcher: Matcher,
        samples: Sequence[int] = (),
    ):
        samples = samples or (0,) * len(scores)
        if not len(scores) == len(latencies) == len(samples):
            raise ValueError(f"{len(scores)} scores, {len(latencies)} latencies, {len(samples)} samples")
        self._scores, self._conversations, self._latencies = scores, conversations, latencies
        self._matcher, self._samples, self._repeated = matcher, samples, any(samples)

    def __len__(self) -> int:
        return len(self._scores)

    def _one(self, index: int) -> TraceRecord:
        score = self._scores[index]
        conversation = self._conversations[score.conversation_id]
        return _record(score, conversation, self._latencies[index], self._samples[index], self._repeated, self._matcher)

    @overload
    def __getitem__(self, index: int) -> TraceRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[TraceRecord]: ...
    def __getitem__(self, index: int | slice) -> TraceRecord | list[TraceRecord]:
        if isinstance(index, slice):
            return [self._one(i) for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        return self._one(index % len(self))


def trace_records(
    scores: Sequence[ConversationScore],
    conversations: Mapping[str, Conversation],
    latencies: Sequence[float | None],
    matcher: Matcher,
    samples: Sequence[int] = (),
) -> list[TraceRecord]:
    """One record per scored conversation (per sample under ``--repeat``), in gold order, all
    built at once (``TraceRecords`` builds them as they are asked for)."""
    return list(TraceRecords(scores, conversations, latencies, matcher, samples))


def run_traces(
    scored: ScoredRun, selected: Sequence[Conversation], matcher: Matcher, *, enabled: bool
) -> tuple[Sequence[TraceRecord], str]:
    """A run's traces (``TraceRecords`` of every scored conversation, each built when logged) and
    the value of its ``traces`` tag: their number, or none and ``"off"`` under ``--no-traces``."""
    if not enabled:
        return [], "off"
    records = TraceRecords(
        scored.report.conversations,
        {c.conversation_id: c for c in selected},
        [a.latency_s for a in scored.answers],
        matcher,
        scored.samples,
    )
    return records, str(len(records))
