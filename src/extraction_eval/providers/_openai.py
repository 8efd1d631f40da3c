"""OpenAI and vLLM through the ``openai`` SDK: strict structured outputs from the schema."""

from __future__ import annotations

import time
from typing import Any

import httpx

from .._json import utf8_problem
from ..contract import SAMPLING, batch_extraction_schema, full_messages
from ..gold import Conversation
from ..gold._models import FIELD_LIMITS, usage_problem
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


_TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens", "input_tokens", "output_tokens")


def _malformed(completion: Any) -> str | None:
    """Why ``completion`` is not a chat.completion object the harness can keep; None when it is."""
    if not isinstance(completion, dict):
        return f"the body is a JSON {type(completion).__name__}, not a chat.completion object"
    choices = completion.get("choices")
    if choices is None:
        return None  # no choice at all: an empty answer, typed as such when it is scored
    if not isinstance(choices, list) or (choices and not isinstance(choices[0], dict)):
        return f"'choices' is {type(choices).__name__} {str(choices)[:60]!r}, not a list of objects"
    choice = choices[0] if choices else {}
    message = choice.get("message")
    if message is not None and not isinstance(message, dict):
        return f"'message' is {type(message).__name__}, not an object"
    for where, value in (
        ("message.content", (message or {}).get("content")),
        ("message.refusal", (message or {}).get("refusal")),
        ("finish_reason", choice.get("finish_reason")),
        ("system_fingerprint", completion.get("system_fingerprint")),
    ):
        if value is not None and not isinstance(value, str):
            return f"'{where}' is {type(value).__name__} {str(value)[:60]!r}, not text"
        limit = FIELD_LIMITS.get(where.removeprefix("message."))
        if value is not None and limit is not None and len(value) > limit:
            return f"'{where}' has {len(value):,} characters (limit {limit:,}); nothing of it is kept"
    usage = completion.get("usage")
    if usage is not None:
        if not isinstance(usage, dict):
            return f"'usage' is {type(usage).__name__}, not an object"
        for key in _TOKEN_FIELDS:
            count = usage.get(key)
            if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 0):
                return f"'usage.{key}' is {str(count)[:40]!r}, not a count of tokens"
        if (bad := usage_problem(usage)) is not None:
            return bad
    # every string that would be kept must be writable as UTF-8 (a lone surrogate is legal JSON)
    return utf8_problem(
        {
            "message.content": (message or {}).get("content"),
            "message.refusal": (message or {}).get("refusal"),
            "finish_reason": choice.get("finish_reason"),
            "system_fingerprint": completion.get("system_fingerprint"),
            "usage": usage,
        }
    )


def answer_from_completion(completion: Any, latency_s: float) -> ProviderAnswer:
    """The fields a cassette keeps, from a chat.completion object (missing parts are None); a body
    of the wrong shape is an answer marked ``malformed``, with nothing of it kept."""
    if (why := _malformed(completion)) is not None:
        return ProviderAnswer(None, None, None, None, None, latency_s, malformed=why)
    choices = completion.get("choices") or [{}]
    choice = choices[0]
    message = choice.get("message") or {}
    return ProviderAnswer(
        content=message.get("content"),
        finish_reason=choice.get("finish_reason"),
        refusal=message.get("refusal"),
        system_fingerprint=completion.get("system_fingerprint"),
        usage=completion.get("usage"),
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
        except (ValueError, RecursionError):
            # a 200 that is not JSON (an HTML error page from a proxy): this conversation's typed
            # failure, not the whole run's; the next conversation may well get a real answer
            kind = response.headers.get("content-type")
            snippet = response.text[:60]
            why = (
                f"{self._name} answered {response.status_code} to {self._url} with a body that is not JSON "
                f"(content-type {kind!r}): {snippet!r}; check that the base URL is an OpenAI-compatible /v1 endpoint."
            )
            return ProviderAnswer(None, None, None, None, None, latency, malformed=why)
        return answer_from_completion(completion, latency)

    async def aclose(self) -> None:
        await self._client.close()
