"""Retry policy: what is retried, how long it waits, and what an error may say."""

from __future__ import annotations

import asyncio
import email.utils
import time

import httpx
import openai
import pytest

from extraction_eval import ProviderError
from extraction_eval.providers import Redactor, RetryPolicy, TransportFailure, call_with_retries, retry_after_seconds

REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


def status_error(status: int, headers: dict[str, str] | None = None, message: str = "boom") -> openai.APIStatusError:
    response = httpx.Response(status, headers=headers or {}, request=REQUEST)
    cls = {429: openai.RateLimitError, 500: openai.InternalServerError, 401: openai.AuthenticationError}.get(
        status, openai.APIStatusError
    )
    return cls(message, response=response, body=None)


def run(errors: list[Exception], policy: RetryPolicy = RetryPolicy(max_retries=3)) -> tuple[str, int, list[float]]:
    slept: list[float] = []
    queue = list(errors)

    async def fn() -> str:
        if queue:
            raise queue.pop(0)
        return "ok"

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    result, retries = asyncio.run(call_with_retries(fn, policy, Redactor([]), sleep=sleep))
    return result, retries, slept


def test_retry_after_is_honoured_exactly() -> None:
    result, retries, slept = run(
        [status_error(429, {"retry-after": "2.5"}), status_error(429, {"retry-after-ms": "40"})]
    )
    assert (result, retries, slept) == ("ok", 2, [2.5, 0.04])


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(max_retries=4, base_delay_s=1.0, max_delay_s=3.0)
    _, retries, slept = run([status_error(500)] * 4, policy)
    assert retries == 4
    assert 0.5 <= slept[0] <= 1.0 and 1.0 <= slept[1] <= 2.0 and 1.5 <= slept[2] <= 3.0 and slept[3] <= 3.0


def test_timeouts_and_dropped_connections_are_retried() -> None:
    _, retries, _ = run([openai.APITimeoutError(request=REQUEST), openai.APIConnectionError(request=REQUEST)])
    assert retries == 2


def test_giving_up_is_a_transport_failure() -> None:
    with pytest.raises(TransportFailure, match=r"500 server error after 3 attempt\(s\)"):
        run([status_error(500)] * 5, RetryPolicy(max_retries=2))


def test_client_errors_are_not_retried_and_secrets_are_redacted() -> None:
    secret = "sk-live-abcdef123456"

    async def fn() -> str:
        raise status_error(401, message=f"Incorrect API key provided: {secret}")

    with pytest.raises(ProviderError) as info:
        asyncio.run(call_with_retries(fn, RetryPolicy(), Redactor([secret])))
    assert "401 AuthenticationError" in str(info.value)
    assert str(info.value).endswith(". Check the key (OPENAI_API_KEY, or IBEX_WORKER_EXTRACTION_API_KEY for vLLM).")
    assert secret not in str(info.value) and "[REDACTED]" in str(info.value)


def test_a_missing_model_or_route_names_the_model_and_the_base_url() -> None:
    async def fn() -> str:
        raise status_error(404, message="The model `gpt-9` does not exist")

    with pytest.raises(ProviderError) as info:
        asyncio.run(call_with_retries(fn, RetryPolicy(), Redactor([])))
    assert str(info.value) == (
        "provider call failed and will not get better by retrying: 404 APIStatusError (The model `gpt-9` does "
        "not exist). Check the model name and the base URL (OPENAI_BASE_URL, or IBEX_WORKER_EXTRACTION_BASE_URL "
        "for vLLM)."
    )


def test_an_error_that_is_not_the_sdks_propagates_unchanged() -> None:
    """A bug is not a bad key: it is neither retried nor turned into "check the key"."""
    with pytest.raises(KeyError, match="choices"):
        run([KeyError("choices")])


def test_retry_after_parsing() -> None:
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({}) is None
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (retry_after_seconds({"retry-after": future}) or 0) <= 31
