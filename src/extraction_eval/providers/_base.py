"""What plugs in as a provider (``ProviderClient``), what one call returns, and the redactor."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..gold import Conversation


@dataclass(frozen=True)
class ProviderAnswer:
    """The provider's raw answer for one conversation (what a cassette stores)."""

    content: str | None
    finish_reason: str | None
    refusal: str | None
    system_fingerprint: str | None
    usage: dict[str, Any] | None
    latency_s: float
    #: Why the body is not a usable chat completion (HTML or ``[]`` with status 200, content that is
    #: not text, usage counts that are not numbers): a typed failure of this conversation, never kept.
    malformed: str | None = None


class ProviderClient(Protocol):
    """A client that answers one extraction request per call; OpenAI and vLLM plug in here.

    (``extraction_eval.Provider`` is the closed set of provider *names*.)
    """

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    async def complete(self, conversation: Conversation) -> ProviderAnswer: ...

    async def aclose(self) -> None: ...


REDACTED = "[REDACTED]"


class Redactor:
    """Removes secrets from any text before it can reach a file, a log or an exception."""

    def __init__(self, secrets: Iterable[str | None]):
        self._secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self._secrets:
            value = value.replace(secret, REDACTED)
        return value

    def maybe(self, value: str | None) -> str | None:
        return None if value is None else self.text(value)

    def answer(self, answer: ProviderAnswer) -> ProviderAnswer:
        usage = answer.usage
        if usage is not None:
            usage = {k: (self.text(v) if isinstance(v, str) else v) for k, v in usage.items()}
        return replace(
            answer,
            content=self.maybe(answer.content),
            refusal=self.maybe(answer.refusal),
            system_fingerprint=self.maybe(answer.system_fingerprint),
            usage=usage,
        )
