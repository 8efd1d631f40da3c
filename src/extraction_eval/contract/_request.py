"""How a conversation becomes a chat request, and the request hash cassettes are keyed by."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .._jsonio import canonical_json, sha256_hex
from ._prompt import system_prompt

#: Fixed sampling parameters: recorded in every cassette's request hash.
SAMPLING: Mapping[str, Any] = {
    "temperature": 0.0,
    "top_p": 1.0,
    "max_completion_tokens": 2048,
    "seed": 20260901,
}


class TurnLike(Protocol):
    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


class ConversationLike(Protocol):
    @property
    def conversation_id(self) -> str: ...

    @property
    def session_date(self) -> str: ...

    @property
    def turns(self) -> Sequence[TurnLike]: ...


def render_conversation(conversation: ConversationLike) -> str:
    """The user message: session date with weekday, then each turn marked with its role."""
    day = dt.date.fromisoformat(conversation.session_date)
    parts = [f"Session date: {day.isoformat()} ({day.strftime('%A')})", "", "Conversation:"]
    for turn in conversation.turns:
        parts.append(f'<turn role="{turn.role}">')
        parts.append(turn.content)
        parts.append("</turn>")
    return "\n".join(parts)


def request_messages(conversation: ConversationLike) -> list[dict[str, str]]:
    """The messages after the system prompt (what the request hash covers)."""
    return [{"role": "user", "content": render_conversation(conversation)}]


def full_messages(conversation: ConversationLike) -> list[dict[str, str]]:
    """Everything sent to the provider: system prompt first."""
    return [{"role": "system", "content": system_prompt()}, *request_messages(conversation)]


@dataclass(frozen=True)
class RequestKey:
    """What a cassette is keyed by: the parts of the request the hash covers."""

    model: str
    sampling: Mapping[str, Any]
    messages: list[dict[str, str]]

    def payload(self) -> dict[str, Any]:
        return {"model": self.model, "sampling": dict(self.sampling), "messages": self.messages}

    @property
    def sha256(self) -> str:
        return sha256_hex(canonical_json(self.payload()))


def request_key(conversation: ConversationLike, model: str) -> RequestKey:
    return RequestKey(model=model, sampling=dict(SAMPLING), messages=request_messages(conversation))


def request_sha256(conversation: ConversationLike, model: str) -> str:
    """sha256 of canonical ``{"model", "sampling", "messages"}`` (system prompt excluded)."""
    return request_key(conversation, model).sha256
