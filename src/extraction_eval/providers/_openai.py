"""OpenAI and vLLM through the ``openai`` SDK: strict structured outputs from the schema."""

from __future__ import annotations

import time
from typing import Any

import httpx

from .._exceptions import ProviderError
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


def answer_from_completion(completion: dict[str, Any], latency_s: float) -> ProviderAnswer:
    """The fields a cassette keeps, from a chat.completion object (missing parts are None)."""
    choices = completion.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message") or {}
    usage = completion.get("usage")
    return ProviderAnswer(
        content=message.get("content"),
        finish_reason=choice.get("finish_reason"),
        refusal=message.get("refusal"),
        system_fingerprint=completion.get("system_fingerprint"),
        usage=usage if isinstance(usage, dict) else None,
        latency_s=latency_s,
    )


class ChatCompletionsClient:
    """One chat-completions call per conversation, with the fixed sampling parameters."""

    def __init__(self, name: str, model: str, *, api_key: str, base_url: str | None, timeout_s: float):
        from openai import AsyncOpenAI, DefaultAioHttpClient

        self._name = name
        self._model = model
        # The SDK's aiohttp transport: about 30% less CPU per request than its default
        # httpx one, which is what bounds throughput at high concurrency (docs/benchmarks.md).
        self._client = AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
            http_client=DefaultAioHttpClient(timeout=timeout_s),
        )
        self._format = response_format()
        # The absolute URL, joined once: the SDK parses a relative path and joins it to the base
        # URL on every call (about 0.1 ms of CPU, docs/benchmarks.md).
        self._url = str(self._client.base_url.join("chat/completions"))
        # The SDK detects the platform (for its telemetry headers) on a client's first request,
        # in a worker thread, and does it again for every request started before the first
        # returns: 16 threads at the start of a concurrent run. Detect it once, here.
        if getattr(self._client, "_platform", "unknown") is None:
            from openai._base_client import get_platform

            self._client._platform = get_platform()

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> str:
        return self._model

    async def complete(self, conversation: Conversation) -> ProviderAnswer:
        started = time.perf_counter()
        # The SDK's low-level `post` with the body `chat.completions.create` would send, read
        # as a raw response: the resource method's recursive parameter transform and the
        # pydantic response model (2-3.5 ms of CPU per call together, docs/decisions.md) capped throughput below
        # concurrency / latency. Auth, timeouts and error mapping stay the SDK's.
        response: httpx.Response = await self._client.post(
            self._url,
            cast_to=httpx.Response,
            body={
                "model": self._model,
                "messages": full_messages(conversation),
                "response_format": self._format,
                **SAMPLING,
            },
        )
        latency = time.perf_counter() - started
        try:
            completion = response.json()
        except ValueError:
            raise ProviderError(
                f"{self._name} answered {response.status_code} to {self._url} with a body that is not JSON "
                f"(content-type {response.headers.get('content-type')!r}); check that the base URL is an "
                "OpenAI-compatible /v1 endpoint."
            ) from None
        return answer_from_completion(completion if isinstance(completion, dict) else {}, latency)

    async def aclose(self) -> None:
        await self._client.close()
