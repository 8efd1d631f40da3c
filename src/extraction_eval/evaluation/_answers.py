"""One provider answer per conversation, raw, with what it cost: from a cassette or a live call.

The raw response is kept, not just its parse: scoring parses it (``Answer.outcome``), the
one path for a replayed and a live answer, and a later step can parse it again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..gold import Cassette
from ..providers import CallResult, ProviderAnswer, usage_tokens
from ..scoring import Failure, FailureReason, Outcome, parse_response, pathological
from ..vocab import CassetteKind


@dataclass(frozen=True)
class Answer:
    """One conversation's answer. ``failure`` is set when no response came back at all (a
    transport failure after retries, or a call the budget did not allow)."""

    conversation_id: str
    response: str | None = None
    finish_reason: str | None = None
    refusal: str | None = None
    failure: Failure | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    system_fingerprint: str | None = None
    recorded_at: str | None = None
    retries: int = 0
    #: The provider's usage object as it reported it (None when it reported none).
    usage: Mapping[str, Any] | None = None

    def outcome(self) -> Outcome:
        """Predictions or a typed failure, parsed from the raw response (never repaired)."""
        if self.failure is not None:
            return Outcome(failure=self.failure)
        return parse_response(self.response, finish_reason=self.finish_reason, refusal=self.refusal)


@dataclass(frozen=True)
class CollectedAnswers:
    """What the collect step hands to scoring: every selected conversation's answer, where the
    answers came from, and what the run should say or tag about collecting them."""

    answers: Mapping[str, Answer]
    cassette_kind: CassetteKind
    unused: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)
    #: Samples 1..N-1 of a ``--repeat N`` run (``answers`` is sample 0).
    extra_samples: tuple[Mapping[str, Answer], ...] = ()

    @property
    def samples(self) -> tuple[Mapping[str, Answer], ...]:
        return (self.answers, *self.extra_samples)


def answer_from_cassette(cassette: Cassette) -> Answer:
    tokens_in, tokens_out = usage_tokens(cassette.usage)
    return Answer(
        conversation_id=cassette.conversation_id,
        response=cassette.response,
        finish_reason=cassette.finish_reason,
        refusal=cassette.refusal,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        system_fingerprint=cassette.system_fingerprint,
        recorded_at=cassette.recorded_at,
        usage=cassette.usage,
    )


def keepable(answer: ProviderAnswer) -> bool:
    """Whether a live answer may be written to a cassette: parsed and classified first, so a
    malformed, oversized or too deeply nested answer never poisons the cassette file."""
    return answer.malformed is None and pathological(answer.content) is None


def answer_from_call(result: CallResult, recorded_at: str | None) -> Answer:
    cid = result.conversation_id
    if result.skipped:
        return Answer(cid, failure=Failure(FailureReason.BUDGET_EXHAUSTED, "not attempted: the budget was reached"))
    if result.answer is None:
        failure = Failure(FailureReason.TRANSPORT, result.transport_error or "transport")
        return Answer(cid, failure=failure, retries=result.retries)
    answer = result.answer
    if answer.malformed is not None:
        failure = Failure(FailureReason.MALFORMED_RESPONSE, answer.malformed)
        return Answer(cid, failure=failure, latency_s=answer.latency_s, retries=result.retries)
    if (bad := pathological(answer.content)) is not None and bad.failure is not None:
        return Answer(cid, failure=bad.failure, latency_s=answer.latency_s, retries=result.retries)
    tokens_in, tokens_out = usage_tokens(answer.usage)
    return Answer(
        cid,
        response=answer.content,
        finish_reason=answer.finish_reason,
        refusal=answer.refusal,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        latency_s=answer.latency_s,
        system_fingerprint=answer.system_fingerprint,
        recorded_at=recorded_at,
        retries=result.retries,
        usage=answer.usage,
    )
