"""The stub's scripted behaviours at the provider seam, in process: no socket, no server.

Like httpx's ``MockTransport`` and inspect_ai's ``mockllm``, :class:`FakeProvider` answers
where a real provider does (``await provider.complete(conversation)``), with what
``ChatCompletionsClient`` gets from :class:`StubProviderServer` under the same script and
answers (a test checks that they agree): the same content, refusal, finish reason,
fingerprint and usage, and the SDK's own exceptions for failures.

| script | at the seam |
| --- | --- |
| ``latency_ms`` | an ``asyncio.sleep``; ``latency_s`` of the answer measures the whole call |
| ``fail_first`` status | the SDK's exception for it (``RateLimitError`` with ``Retry-After``, ...) |
| ``"drop"`` | what the SDK raises for a connection closed without a response: see below |
| ``"hang"`` | the same, after ``hang_s`` (the server closes the connection then) |
| latency or hang past ``timeout_s`` | ``openai.APITimeoutError`` at ``timeout_s`` |
| ``answer`` | the same answer kinds, by the same code as the server's |

A connection closed without a response is ``openai.APITimeoutError`` ("Request timed out."),
not ``APIConnectionError``: the SDK's aiohttp transport, which ``ChatCompletionsClient``
uses, maps every ``aiohttp.ClientConnectionError`` (``ServerDisconnectedError`` among them)
to ``httpx.ConnectTimeout``. The fake raises what the real provider raises.

What needs a request or a connection (strict-schema 400s, unknown conversations, a missing
key, close() cutting a request) has no meaning here: test it against the server.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import httpx
import openai

from ..contract import full_messages
from ..gold import Conversation
from ..providers import ProviderAnswer
from ._responses import SYSTEM_FINGERPRINT, answer_message, retry_after, status_error, usage
from ._script import AnswerSet, StubScript, coerce_answers

#: The request a fake failure names (the SDK's exceptions carry one).
_REQUEST = httpx.Request("POST", "http://fake-provider.invalid/v1/chat/completions")

#: The SDK's exception for each status; others are a plain ``APIStatusError``.
_STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}


@dataclass(frozen=True)
class FakeCall:
    """One ``complete`` call as the fake received it."""

    conversation_id: str
    attempt: int
    time: float


def status_exception(status: int, retry_after_s: float) -> openai.APIStatusError:
    """What the SDK raises for the stub's scripted ``status``: the same class, message and body."""
    error = status_error(status)["error"]
    headers = {"content-type": "application/json"}
    if status == 429:
        headers["retry-after"] = retry_after(retry_after_s)
    response = httpx.Response(status, headers=headers, json={"error": error}, request=_REQUEST)
    cls = _STATUS_ERRORS.get(status, openai.InternalServerError if status >= 500 else openai.APIStatusError)
    # The exception reads status_code, headers and request: httpx's Response has them, whichever
    # HTTP library (httpx, or its fork httpx2) the installed SDK is typed against.
    return cls(f"Error code: {status} - {error['message']}", response=cast(Any, response), body=error)


def _closed_without_a_response() -> openai.APIConnectionError:
    """What the SDK's aiohttp transport raises when the server closes without answering."""
    return openai.APITimeoutError(request=cast(Any, _REQUEST))


class FakeProvider:
    """A provider that answers from an answer set and a :class:`StubScript`, in process.

    ``answers``: conversation_id -> memories, or a JSONL path (default: every conversation
    answers ``[]``). ``script``: a :class:`StubScript`, its dict form or a JSON path.
    ``api_key`` is what an ``echo_key`` answer leaks; ``timeout_s`` is the client timeout a
    long latency or hang runs into. Attempts are counted per conversation, as the server does.
    """

    def __init__(
        self,
        answers: Mapping[str, Sequence[Mapping[str, Any]]] | Path | str | None = None,
        script: StubScript | Mapping[str, Any] | Path | str | None = None,
        *,
        name: str = "openai",
        model: str = "gpt-4o-mini",
        api_key: str = "sk-fake-provider",
        timeout_s: float = 600.0,
    ) -> None:
        self.answers: AnswerSet = coerce_answers(answers, None)
        self.script = StubScript.coerce(script)
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.calls: list[FakeCall] = []
        self.closed = False
        self._name = name
        self._model = model
        self._attempts: Counter[str] = Counter()

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> str:
        return self._model

    def attempts(self, conversation_id: str) -> int:
        """How many calls for this conversation arrived (whatever their outcome)."""
        return self._attempts[conversation_id]

    def reset(self) -> None:
        """Forget calls and attempt counts (fail_first starts over)."""
        self.calls.clear()
        self._attempts.clear()

    async def complete(self, conversation: Conversation) -> ProviderAnswer:
        started = time.perf_counter()
        cid = conversation.conversation_id
        self._attempts[cid] += 1
        attempt = self._attempts[cid]
        self.calls.append(FakeCall(cid, attempt, time.time()))
        behavior = self.script.behavior_for(cid)
        await self._wait(behavior.latency_ms / 1000, started)
        failure = behavior.failure_for(attempt)
        if failure == "hang":
            await self._wait(behavior.hang_s, started)
        if failure in ("drop", "hang"):
            raise _closed_without_a_response()
        if isinstance(failure, int):
            raise status_exception(failure, behavior.retry_after_s)
        content, refusal, finish = answer_message(behavior.answer, self.answers.get(cid, []), api_key=self.api_key)
        return ProviderAnswer(
            content=content,
            finish_reason=finish,
            refusal=refusal,
            system_fingerprint=SYSTEM_FINGERPRINT,
            usage=usage(full_messages(conversation), content or refusal or ""),
            latency_s=time.perf_counter() - started,
        )

    async def _wait(self, seconds: float, started: float) -> None:
        """Sleep ``seconds``, or time out where the client would give up first."""
        left = started + self.timeout_s - time.perf_counter()
        if seconds > left:
            await asyncio.sleep(max(0.0, left))
            raise openai.APITimeoutError(request=cast(Any, _REQUEST))
        await asyncio.sleep(seconds)

    async def aclose(self) -> None:
        self.closed = True
