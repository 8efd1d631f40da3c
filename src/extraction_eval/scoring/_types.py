"""Internal values of the scoring core (frozen dataclasses: no I/O, no pydantic)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from ..vocab import Category, ForbiddenReason, SecurityStratum, TemporalKind


class FailureReason(StrEnum):
    """Why a conversation predicted nothing."""

    INVALID_JSON = "invalid_json"
    SCHEMA_INVALID = "schema_invalid"
    REFUSAL = "refusal"
    LENGTH = "length"
    CONTENT_FILTER = "content_filter"
    EMPTY_RESPONSE = "empty_response"
    TRANSPORT = "transport"
    BUDGET_EXHAUSTED = "budget_exhausted"
    #: An answer over MAX_RESPONSE_CHARS, or nested deeper than MAX_JSON_DEPTH: never parsed, never recorded.
    TOO_LARGE = "too_large"
    TOO_NESTED = "too_nested"
    #: A 200 whose body is not a chat completion (HTML, ``[]``), content that is not text, bad usage.
    MALFORMED_RESPONSE = "malformed_response"


@dataclass(frozen=True)
class Memory:
    """A memory as the scorer sees it, expected or predicted."""

    content: str
    categories: frozenset[Category]
    temporal_kind: TemporalKind
    supersedes: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "content": self.content,
            "categories": sorted(c.value for c in self.categories),
            "temporal_kind": self.temporal_kind.value,
            "supersedes": self.supersedes,
        }


@dataclass(frozen=True)
class Failure:
    """A failed conversation: it predicts nothing and keeps its reason."""

    reason: FailureReason
    detail: str


@dataclass(frozen=True)
class Outcome:
    """What the extractor produced for one conversation."""

    predictions: tuple[Memory, ...] = ()
    failure: Failure | None = None

    @classmethod
    def failed(cls, reason: FailureReason, detail: str) -> Outcome:
        return cls(predictions=(), failure=Failure(reason, detail))


@dataclass(frozen=True)
class ExpectedItem:
    memory_id: str
    memory: Memory


@dataclass(frozen=True)
class ForbiddenItem:
    """A text that must never be extracted from the conversation, and why."""

    content: str
    reason: ForbiddenReason
    #: telegraphed or hard (gold v3 on): the rates are also counted per stratum; None before v3.
    stratum: SecurityStratum | None = None


@dataclass(frozen=True)
class Case:
    """One conversation to score: its expected memories, the extractor's outcome, and what
    must not be extracted (None when the gold set has no forbidden file: no security metrics)."""

    conversation_id: str
    expected: tuple[ExpectedItem, ...]
    outcome: Outcome = field(default_factory=Outcome)
    forbidden: tuple[ForbiddenItem, ...] | None = None
