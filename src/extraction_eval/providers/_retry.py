"""Retries with backoff that honour ``Retry-After``, for the faults worth retrying.

Retried: 429, 5xx, timeouts, dropped connections. Not retried: other 4xx (a bad
key or a bad request will not get better). The SDK's own retries are off
(``max_retries=0``) so this is the one place that decides. Only the SDK's errors
(``openai.APIError``) are handled here; any other exception propagates unchanged.
"""

from __future__ import annotations

import asyncio
import email.utils
import errno
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # imported where used: a cassette run never loads the SDK (about 0.4 s)
    import openai

from .._exceptions import ProviderError
from .._settings import BASE_URL_VAR, OPENAI_BASE_URL_VAR, OPENAI_KEY_VAR, VLLM_KEY_VAR
from ._base import Redactor

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0


class TransportFailure(Exception):
    """The call failed in transport after every retry: not a cassette, retried next time."""

    def __init__(self, detail: str, attempts: int):
        super().__init__(detail)
        self.detail = detail
        self.attempts = attempts


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def _was_reset(exc: BaseException) -> bool:
    """Whether a TCP reset is behind ``exc``: the aiohttp transport reports one as a connect
    *timeout* (``ConnectTimeout('[Errno 104] Connection reset by peer')``), so look down the chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionResetError) or getattr(current, "errno", None) == errno.ECONNRESET:
            return True
        current = current.__cause__ or current.__context__
    return False


def _classify(exc: openai.APIError) -> tuple[bool, str, float | None]:
    """(retryable, short description, server-requested delay) of an SDK error."""
    import openai

    if isinstance(exc, openai.APIConnectionError) and _was_reset(exc):
        return True, "connection_reset", None
    if isinstance(exc, openai.APITimeoutError):
        return True, "timeout", None
    if isinstance(exc, openai.APIConnectionError):
        return True, "connection error (dropped or refused)", None
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        delay = retry_after_seconds(exc.response.headers if exc.response is not None else None)
        if status == 429:
            return True, "429 rate limited", delay
        if status >= 500:
            return True, f"{status} server error", delay
        return False, f"{status} {type(exc).__name__}", None
    return False, type(exc).__name__, None


def _fix(exc: openai.APIError) -> str:
    """What to check for a call that will not succeed, by what the server said."""
    import openai

    status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
    if status in (401, 403):
        return f"Check the key ({OPENAI_KEY_VAR}, or {VLLM_KEY_VAR} for vLLM)."
    if status == 404:
        return f"Check the model name and the base URL ({OPENAI_BASE_URL_VAR}, or {BASE_URL_VAR} for vLLM)."
    return f"Check the key ({OPENAI_KEY_VAR}), the model name and the base URL."


async def call_with_retries(
    fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    redactor: Redactor,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> tuple[T, int]:
    """Run ``fn`` until it succeeds; returns its result and the number of retries used.

    Only the SDK's errors are classified (retried, or a ProviderError naming what to check);
    anything else is a bug or a failure the caller owns, and propagates as it is.
    """
    import openai

    attempt = 0
    while True:
        try:
            return await fn(), attempt
        except openai.APIError as exc:
            retryable, what, delay = _classify(exc)
            if not retryable:
                body = ""
                if isinstance(exc, openai.APIStatusError):
                    body = redactor.text(str(getattr(exc, "message", "")))[:300]
                raise ProviderError(
                    f"provider call failed and will not get better by retrying: {what}"
                    + (f" ({body})" if body else "")
                    + ". "
                    + _fix(exc)
                ) from None
            if attempt >= policy.max_retries:
                raise TransportFailure(f"{what} after {attempt + 1} attempt(s)", attempts=attempt + 1) from None
            backoff = min(policy.max_delay_s, policy.base_delay_s * 2**attempt)
            wait = delay if delay is not None else backoff * (0.5 + random.random() / 2)
            await sleep(min(wait, policy.max_delay_s))
            attempt += 1
