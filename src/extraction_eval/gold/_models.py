"""Pydantic models for every file of a gold folder (``extra="forbid"``: a typo must not pass)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer
from pydantic.dataclasses import dataclass

from .._json import utf8_problem
from ..vocab import CassetteKind, Category, Enforcement, ForbiddenReason, SecurityStratum, Subset, TemporalKind

_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


def _check_iso_date(value: str) -> str:
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a real date in YYYY-MM-DD form") from None
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


#: One fields-set per distinct set of fields given, shared by the rows that gave them.
_FIELDS_SETS: dict[frozenset[str], set[str]] = {}


class _Row(_Strict):
    """A row of a gold file, held once per conversation or memory for the whole run.

    Pydantic gives every instance a set of the fields it was given (``model_fields_set``): 728
    bytes for an expected memory, 130 MB at 100x gold v2 (docs/benchmarks.md, section 7). A
    frozen row never changes it (pydantic adds to it only on assignment, and ``model_copy``
    copies it before adding), so rows that gave the same fields share one set."""

    def model_post_init(self, context: Any, /) -> None:
        given = self.__pydantic_fields_set__
        object.__setattr__(self, "__pydantic_fields_set__", _FIELDS_SETS.setdefault(frozenset(given), given))


@dataclass(frozen=True, slots=True, config=ConfigDict(extra="forbid"))
class Turn:
    """One message of a conversation: a slotted dataclass, not a model, because a gold set holds
    one per message (8 per conversation in v2); 48 bytes each against a model's 480 (its
    ``__dict__`` and fields-set), 220 MB at 100x gold v2 (docs/benchmarks.md, section 7)."""

    role: Literal["user", "assistant"] = Field(description="Who spoke: user or assistant.")
    content: str = Field(min_length=1, description="What was said, as typed.")


class Conversation(_Row):
    """One row of ``conversations.jsonl``."""

    conversation_id: str = Field(pattern=_ID_PATTERN, description="Unique id in the gold set.")
    session_date: str = Field(
        pattern=r"^\d{4}-\d{2}-\d{2}$",
        description="The day the conversation happened (YYYY-MM-DD); resolves relative dates.",
    )
    turns: tuple[Turn, ...] = Field(min_length=1, description="The messages, in order.")

    _date = field_validator("session_date")(_check_iso_date)


class ExpectedMemory(_Row):
    """One row of ``expected_memories.jsonl``: a memory a careful extractor produces."""

    memory_id: str = Field(pattern=_ID_PATTERN, description="Unique id in the gold set.")
    conversation_id: str = Field(description="The conversation it is extracted from.")
    content: str = Field(min_length=1, description="The memory in canonical style ('User ...').")
    categories: tuple[Category, ...] = Field(
        min_length=1, max_length=3, description="One to three distinct categories."
    )
    temporal_kind: TemporalKind = Field(description="durable, current, past or future.")
    supersedes: str | None = Field(description="The stale fact this memory replaces (canonical style), or null.")

    @field_validator("categories")
    @classmethod
    def _distinct(cls, value: tuple[Category, ...]) -> tuple[Category, ...]:
        if len(set(value)) != len(value):
            raise ValueError(f"categories must be distinct, got {[c.value for c in value]!r}")
        return value

    @field_validator("supersedes")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("supersedes must be null or a non-empty stale fact")
        return value

    @property
    def is_multi_label(self) -> bool:
        return len(self.categories) > 1


class ForbiddenMemory(_Row):
    """One row of ``forbidden_memories.jsonl``: what must never be extracted from a conversation."""

    conversation_id: str = Field(description="The conversation it must not be extracted from.")
    content: str = Field(
        min_length=1, description="The wrong memory as an extractor would write it, in canonical style ('User ...')."
    )
    reason: ForbiddenReason = Field(
        description="injection (a planted instruction), secret (a password, key, card number...) or "
        "third_party (another person's fact written as the user's)."
    )
    stratum: SecurityStratum | None = Field(
        default=None,
        description="telegraphed or hard (gold v3 on): the security rates are also reported per stratum; "
        "absent in v2's rows, which are all telegraphed by v3's reading but were written before the field.",
    )


class Erratum(_Strict):
    """One row of ``errata.jsonl`` (gold v3 on): a correction of the version it corrects, which stays
    frozen; written by ``scripts/gold_v3_assemble.py`` from the record's reviewed errata."""

    from_version: str = Field(min_length=1, description="The version corrected (v2).")
    id: str = Field(pattern=r"^E\d+$", description="The erratum's id in the record (E<n>).")
    conversation_id: str = Field(description="A conversation of both versions.")
    memory_id: str | None = Field(description="The expected row changed, removed or added; null for a forbidden row.")
    kind: Literal["expected", "forbidden"]
    action: Literal["edit", "add", "remove"]
    field: str = Field(min_length=1, description="The field edited, or 'row'.")
    old: Any = Field(description="The value before (null for an added row).")
    new: Any = Field(description="The value after (null for a removed row).")
    why: str = Field(min_length=1, description="The evidence: the conversation's words and the guide's rule.")
    found_by: str = Field(min_length=1)
    confirmed_by: str = Field(min_length=1)


#: The most a cassette keeps of each text field besides the response (characters); a provider's
#: answer is bounded by these before it is recorded, and a cassette line beyond them is refused.
FIELD_LIMITS = {"refusal": 10_000, "finish_reason": 64, "system_fingerprint": 256}
#: The usage block as JSON text, and any number in it (a token count never nears 10**9).
MAX_USAGE_CHARS = 4_096
MAX_USAGE_NUMBER = 10**9


def usage_problem(usage: dict[str, Any]) -> str | None:
    """A usage block too large to keep, or holding a number no arithmetic should see; else None."""
    import json

    stack: list[tuple[str, Any]] = [("usage", usage)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, bool) or item is None or isinstance(item, str):
            continue
        if isinstance(item, int | float):
            # an int is compared as an int: math.isfinite(10**400) itself overflows
            if (isinstance(item, float) and not math.isfinite(item)) or abs(item) > MAX_USAGE_NUMBER:
                return f"'{path}' is {str(item)[:40]}..., beyond {MAX_USAGE_NUMBER:,}: not a count to keep or add up"
        elif isinstance(item, dict):
            stack.extend((f"{path}.{k}", v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(item))
    try:
        size = len(json.dumps(usage, ensure_ascii=False))
    except (ValueError, TypeError, RecursionError):
        return "'usage' cannot be written back as JSON"
    if size > MAX_USAGE_CHARS:
        return f"'usage' has {size:,} characters as JSON (limit {MAX_USAGE_CHARS:,})"
    return None


class Cassette(_Strict):
    """One row of ``openai_cassettes.jsonl``: the provider's answer for one conversation."""

    conversation_id: str = Field(description="The conversation this answers.")
    request_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="Hash of model, sampling and rendered messages.")
    prompt_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="System prompt hash.")
    schema_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="Output schema hash.")
    model: str = Field(min_length=1, description="Model name as requested.")
    cassette_kind: CassetteKind = Field(description="Where the response came from.")
    recorded_at: str = Field(description="ISO 8601 time the response was recorded or generated.")
    response: str | None = Field(description="The raw message content, or null.")
    finish_reason: str | None = Field(description="The provider's finish reason.")
    refusal: str | None = Field(description="The provider's refusal text, if it refused.")
    system_fingerprint: str | None = Field(description="The provider's system fingerprint.")
    usage: dict[str, Any] | None = Field(description="Token usage as the provider reported it.")

    @field_validator("cassette_kind")
    @classmethod
    def _recorded_kind(cls, value: CassetteKind) -> CassetteKind:
        if value is CassetteKind.LIVE_CALL:
            raise ValueError("live_call describes a run without cassettes, not a cassette")
        return value

    @field_validator("response", "refusal", "finish_reason", "system_fingerprint")
    @classmethod
    def _kept_text(cls, value: str | None, info: Any) -> str | None:
        """Text a run can write back out: UTF-8 (no lone surrogate) and within its field's limit."""
        if value is None:
            return value
        limit = FIELD_LIMITS.get(info.field_name)
        if limit is not None and len(value) > limit:
            raise ValueError(f"{len(value):,} characters, more than the {limit:,} a cassette keeps; re-record it")
        problem = utf8_problem(value)
        if problem is not None:
            raise ValueError(f"{problem}; a provider's answer like this is never recorded: re-record the cassette")
        return value

    @field_validator("usage")
    @classmethod
    def _kept_usage(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return value
        problem = usage_problem(value) or utf8_problem(value, "usage")
        if problem is not None:
            raise ValueError(f"{problem}; re-record the cassette")
        return value


class ManifestCounts(_Strict):
    """How many of each thing the gold folder holds."""

    conversations: int = Field(ge=0)
    expected_memories: int = Field(ge=0)
    cassettes: int = Field(ge=0)
    multi_label: int = Field(ge=0)
    supersession: int = Field(ge=0)
    negative_conversations: int = Field(ge=0)
    forbidden_memories: int | None = Field(
        default=None, ge=0, description="Rows of forbidden_memories.jsonl; absent when the folder has none."
    )

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A folder without forbidden memories writes no ``forbidden_memories`` key (v1's manifest stays as it is)."""
        out: dict[str, Any] = handler(self)
        if out.get("forbidden_memories") is None:
            out.pop("forbidden_memories", None)
        return out


class ManifestSubsets(_Strict):
    """Conversation ids of the quick subsets, chosen once and kept."""

    smoke: tuple[str, ...] = Field(description="Every category, multi-label, supersession, negative.")
    fast: tuple[str, ...] = Field(description="A stratified third of the set.")


class LabelReview(_Strict):
    """The record of the independent second read of the labels."""

    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    summary: str = Field(min_length=1, description="What the review found and changed.")

    _date = field_validator("date")(_check_iso_date)


class CassetteManifest(_Strict):
    """``cassette_manifest.json``: hashes, kind, counts and subsets of a gold folder."""

    gold_version: str = Field(pattern=_ID_PATTERN)
    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    cassette_kind: CassetteKind
    prompt_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    schema_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    files: dict[str, str] = Field(description="File name -> sha256 of its bytes.")
    counts: ManifestCounts
    subsets: ManifestSubsets
    label_review: LabelReview | None
    generated_at: str


class ProviderBaseline(_Strict):
    """One provider's block of ``baseline_results.json``; null means not measured yet."""

    model: str = Field(min_length=1)
    enforcement: Enforcement
    cassette_kind: CassetteKind | None
    subset: Subset
    matcher: str | None = Field(pattern=r"^[A-Za-z0-9._-]+@[A-Za-z0-9._-]+$")
    gated_metrics: tuple[str, ...] = Field(min_length=1)
    metrics: dict[str, float] | None
    last_refreshed: str | None
    mlflow_run_id: str | None

    @field_validator("metrics")
    @classmethod
    def _finite(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        """NaN and infinities are not numbers a baseline can hold: a NaN metric would never compare."""
        for key, number in (value or {}).items():
            if not math.isfinite(number):
                raise ValueError(f"metric {key!r} is {number!r}; a baseline metric is a finite number (or null)")
        return value

    @field_validator("last_refreshed")
    @classmethod
    def _date(cls, value: str | None) -> str | None:
        return None if value is None else _check_iso_date(value)


class BaselineFile(_Strict):
    """``baseline_results.json``: the reviewed baseline of each provider."""

    gold_version: str = Field(pattern=_ID_PATTERN)
    providers: dict[str, ProviderBaseline]
