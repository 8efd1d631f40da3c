"""What the stub answers: answer sets (conversation -> memories) and per-conversation behaviour."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .._exceptions import ConfigurationError, GoldDataError
from .._jsonio import iter_jsonl, read_json
from ..cassettes._oracle import oracle_result
from ..gold import GoldSet

AnswerSet = dict[str, list[dict[str, Any]]]

#: The ``answer`` values a behaviour may name.
ANSWERS = (
    "ok",
    "invalid_json",
    "schema_invalid",
    "refusal",
    "length",
    "content_filter",
    "echo_key",
    # malformed answers with status 200 (issue 12's fault suite): each a typed failure of its conversation
    "html",
    "empty_list",
    "content_list",
    "content_int",
    "usage_string",
    "deep_nesting",
    # poisoned answers (issue 21, point 4): legal JSON that must never be recorded or reach arithmetic
    "lone_surrogate",
    "huge_refusal",
    "huge_fingerprint",
    "huge_usage",
)
#: Non-numeric failure modes of ``fail_first`` (``reset``: close with a TCP RST, no response).
FAILURE_MODES = ("hang", "drop", "reset")

Failure = int | str


@dataclass(frozen=True)
class Behavior:
    """How the stub treats one conversation's requests."""

    latency_ms: float = 0.0
    fail_first: tuple[Failure, ...] = ()
    retry_after_s: float = 0.1
    hang_s: float = 30.0
    answer: str = "ok"

    def __post_init__(self) -> None:
        if self.answer not in ANSWERS:
            raise ConfigurationError(f"stub script: answer {self.answer!r} is unknown; use one of {list(ANSWERS)!r}.")
        for failure in self.fail_first:
            ok_status = isinstance(failure, int) and not isinstance(failure, bool)
            if ok_status and 400 <= int(failure) <= 599:
                continue
            if failure in FAILURE_MODES:
                continue
            raise ConfigurationError(
                f"stub script: fail_first entry {failure!r} is unknown; use an HTTP status "
                f"(400-599, e.g. 429 or 500) or one of {list(FAILURE_MODES)!r}."
            )
        for name in ("latency_ms", "retry_after_s", "hang_s"):
            if getattr(self, name) < 0:
                raise ConfigurationError(f"stub script: {name} must be >= 0.")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Behavior:
        """A behaviour from its JSON form; unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ConfigurationError(f"stub script: unknown behaviour key(s) {unknown!r}; use {sorted(known)!r}.")
        values = dict(raw)
        if "fail_first" in values:
            if not isinstance(values["fail_first"], list | tuple):
                raise ConfigurationError(f"stub script: fail_first must be a list, got {values['fail_first']!r}.")
            values["fail_first"] = tuple(values["fail_first"])
        return cls(**values)

    def failure_for(self, attempt: int) -> Failure | None:
        """The failure of the 1-based ``attempt``, or None when it should answer."""
        return self.fail_first[attempt - 1] if attempt <= len(self.fail_first) else None


@dataclass(frozen=True)
class StubScript:
    """A default behaviour plus per-conversation behaviours (already merged with the default)."""

    default: Behavior = field(default_factory=Behavior)
    conversations: Mapping[str, Behavior] = field(default_factory=dict)

    def behavior_for(self, conversation_id: str) -> Behavior:
        return self.conversations.get(conversation_id, self.default)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> StubScript:
        """``{"default": {...}, "conversations": {"c001": {...}}}``; conversation keys override
        the default's, key by key."""
        unknown = sorted(set(raw) - {"default", "conversations"})
        if unknown:
            raise ConfigurationError(
                f"stub script: unknown top-level key(s) {unknown!r}; use 'default' and 'conversations'."
            )
        default_raw = dict(raw.get("default") or {})
        per = raw.get("conversations") or {}
        return cls(
            default=Behavior.from_dict(default_raw),
            conversations={cid: Behavior.from_dict({**default_raw, **dict(b)}) for cid, b in per.items()},
        )

    @classmethod
    def load(cls, path: Path | str) -> StubScript:
        """Read a script from a JSON file."""
        raw = read_json(Path(path))
        if not isinstance(raw, Mapping):
            raise ConfigurationError(f"{path}: a stub script must be a JSON object.")
        return cls.from_dict(raw)

    @classmethod
    def coerce(cls, value: StubScript | Mapping[str, Any] | Path | str | None) -> StubScript:
        if value is None:
            return cls()
        if isinstance(value, StubScript):
            return value
        if isinstance(value, Mapping):
            return cls.from_dict(value)
        return cls.load(value)


def load_answer_set(path: Path | str) -> AnswerSet:
    """Read a JSONL of ``{"conversation_id": ..., "memories": [...]}`` rows."""
    out: AnswerSet = {}
    for row in iter_jsonl(Path(path)):
        cid = row.value.get("conversation_id")
        memories = row.value.get("memories")
        where = f"{row.path}:{row.line}"
        if not isinstance(cid, str) or not cid:
            raise GoldDataError(f"{where}: field 'conversation_id' must be a non-empty string.")
        if not isinstance(memories, list) or not all(isinstance(m, dict) for m in memories):
            raise GoldDataError(f"{where}: field 'memories' must be a list of memory objects.")
        if cid in out:
            raise GoldDataError(f"{where}: conversation {cid!r} appears twice; keep one row.")
        out[cid] = memories
    return out


def gold_answer_set(gold: GoldSet) -> AnswerSet:
    """The gold's expected memories as an answer set (every conversation, negatives empty):
    what the oracle cassettes answer."""
    return {
        cid: oracle_result(memories).model_dump(mode="json")["memories"]
        for cid, memories in gold.by_conversation.items()
    }


def coerce_answers(
    value: Mapping[str, Sequence[Mapping[str, Any]]] | Path | str | None, gold: GoldSet | None
) -> AnswerSet:
    """An answer set from its mapping or JSONL form; None means the gold's expected memories
    (or, without a gold, no memories for any conversation)."""
    if value is None:
        return {} if gold is None else gold_answer_set(gold)
    if isinstance(value, Mapping):
        return {cid: [dict(m) for m in ms] for cid, ms in value.items()}
    return load_answer_set(value)


def dumps_memories(memories: Sequence[Mapping[str, Any]]) -> str:
    return json.dumps({"memories": list(memories)}, ensure_ascii=False)
