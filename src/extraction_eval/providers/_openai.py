"""OpenAI and vLLM through the ``openai`` SDK: strict structured outputs from the schema."""

from __future__ import annotations

import time
from typing import Any

from ..contract import SAMPLING, batch_extraction_schema, full_messages
from ..gold import Conversation
from ._base import ProviderAnswer


def response_format() -> dict[str, Any]:
    """Strict JSON-schema output; vLLM's OpenAI server accepts the same shape."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "BatchExtractionResult",
            "strict": True,
            "schema": batch_extraction_schema(),
        },
    }


class ChatCompletionsProvider:
    """One chat-completions call per conversation, with the fixed sampling parameters."""

    def __init__(self, name: str, model: str, *, api_key: str, base_url: str | None, timeout_s: float):
        from openai import AsyncOpenAI

        self._name = name
        self._model = model
        self._client = AsyncOpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0)
        self._format = response_format()

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> str:
        return self._model

    async def complete(self, conversation: Conversation) -> ProviderAnswer:
        started = time.perf_counter()
        create: Any = self._client.chat.completions.create
        completion: Any = await create(
            model=self._model,
            messages=full_messages(conversation),
            response_format=self._format,
            **SAMPLING,
        )
        latency = time.perf_counter() - started
        choice = completion.choices[0]
        message = choice.message
        usage = completion.usage.model_dump() if completion.usage is not None else None
        return ProviderAnswer(
            content=message.content,
            finish_reason=choice.finish_reason,
            refusal=getattr(message, "refusal", None),
            system_fingerprint=getattr(completion, "system_fingerprint", None),
            usage=usage,
            latency_s=latency,
        )

    async def aclose(self) -> None:
        await self._client.close()
