"""The closed vocabularies of the contract, as ``str`` enums checked once at the edge."""

from __future__ import annotations

from enum import StrEnum


class Category(StrEnum):
    """What kind of memory it is."""

    FACTUAL = "factual"
    PROCEDURAL = "procedural"
    PREFERENCE = "preference"
    BEHAVIORAL = "behavioral"
    EPISODIC = "episodic"


class TemporalKind(StrEnum):
    """How long the memory is expected to stay true."""

    DURABLE = "durable"
    CURRENT = "current"
    PAST = "past"
    FUTURE = "future"


class CassetteKind(StrEnum):
    """Where a run's provider outputs came from (provenance, not proof)."""

    ORACLE_ALIGNED = "oracle_aligned_expected_json"
    LIVE_RECORDED = "live_openai_recorded"
    LIVE_CALL = "live_call"
    #: A realistic answer set: answers a person wrote blind to the gold rows (from the system
    #: prompt, the schema and the conversation only), stored as cassettes. Never a model recording.
    HAND_WRITTEN_BLIND = "hand_written_blind"


class Enforcement(StrEnum):
    """Whether a provider's regressions fail the build."""

    CI = "ci"
    MANUAL = "manual"


class ForbiddenReason(StrEnum):
    """Why a forbidden memory must never be extracted (``forbidden_memories.jsonl``)."""

    INJECTION = "injection"
    SECRET = "secret"
    THIRD_PARTY = "third_party"


class SecurityStratum(StrEnum):
    """How a forbidden row's case is written (gold v3 on; docs/metrics.md#security): ``telegraphed``
    (v2's style: the planted text addresses AI assistants, the transcript's assistant names it, the
    secret is an obvious test value next to a warning) or ``hard`` (written to fool an extractor)."""

    TELEGRAPHED = "telegraphed"
    HARD = "hard"


class Subset(StrEnum):
    """Which conversations a run covers."""

    FULL = "full"
    SMOKE = "smoke"
    FAST = "fast"


class Mode(StrEnum):
    """How ``extraction-eval run`` produces provider outputs."""

    CASSETTE = "cassette"
    SMOKE = "smoke"
    FAST = "fast"
    RECORD = "record"
    LIVE = "live"
    VLLM = "vllm"

    @property
    def is_replay(self) -> bool:
        return self in (Mode.CASSETTE, Mode.SMOKE, Mode.FAST)

    @property
    def subset(self) -> Subset:
        if self is Mode.SMOKE:
            return Subset.SMOKE
        if self is Mode.FAST:
            return Subset.FAST
        return Subset.FULL


class Provider(StrEnum):
    """The providers the harness knows."""

    OPENAI = "openai"
    VLLM = "vllm"


#: Each provider's model when neither the manifest nor the environment names one.
DEFAULT_MODELS: dict[Provider, str] = {Provider.OPENAI: "gpt-4o-mini", Provider.VLLM: "Qwen/Qwen2.5-14B-Instruct"}


CATEGORIES: tuple[Category, ...] = tuple(Category)
TEMPORAL_KINDS: tuple[TemporalKind, ...] = tuple(TemporalKind)
FORBIDDEN_REASONS: tuple[ForbiddenReason, ...] = tuple(ForbiddenReason)
SECURITY_STRATA: tuple[SecurityStratum, ...] = tuple(SecurityStratum)

__all__ = [
    "CATEGORIES",
    "DEFAULT_MODELS",
    "TEMPORAL_KINDS",
    "CassetteKind",
    "Category",
    "Enforcement",
    "Mode",
    "Provider",
    "Subset",
    "TemporalKind",
]
