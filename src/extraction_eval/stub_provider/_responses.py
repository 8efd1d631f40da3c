"""OpenAI-shaped response bodies: chat completions and error objects."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ._script import dumps_memories

SYSTEM_FINGERPRINT = "fp_stub_1"
REFUSAL_TEXT = "I can't help with that."


def error_body(
    message: str,
    *,
    type_: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def status_error(status: int) -> dict[str, Any]:
    """The body OpenAI sends with a scripted failure status."""
    if status == 429:
        return error_body(
            "Rate limit reached for requests (stub provider). Please try again later.",
            type_="requests",
            code="rate_limit_exceeded",
        )
    if status >= 500:
        return error_body(
            "The server had an error while processing your request. Sorry about that!",
            type_="server_error",
        )
    return error_body(f"Scripted failure with status {status} (stub provider).")


def message_text(messages: Any) -> str:
    """All text of the request's messages, concatenated (string or content-part form)."""
    parts: list[str] = []
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            texts = (p.get("text") for p in content if isinstance(p, Mapping))
            parts.extend(t for t in texts if isinstance(t, str))
    return "".join(parts)


def last_user_text(messages: Any) -> str | None:
    """The content of the last user message, or None when there is none."""
    users = [
        m
        for m in (messages if isinstance(messages, list) else [])
        if isinstance(m, Mapping) and m.get("role") == "user"
    ]
    return message_text(users[-1:]) if users else None


def answer_message(
    answer: str, memories: Sequence[Mapping[str, Any]], *, api_key: str
) -> tuple[str | None, str | None, str]:
    """(content, refusal, finish_reason) for a scripted answer kind."""
    ok = dumps_memories(memories)
    if answer == "invalid_json":
        return "Sure! Here are the memories I found: {memories: [", None, "stop"
    if answer == "schema_invalid":
        first = (
            dict(memories[0])
            if memories
            else {
                "content": "User likes tea.",
                "categories": ["preference"],
                "supersedes": None,
            }
        )
        first.pop("temporal_kind", None)
        return dumps_memories([first]), None, "stop"
    if answer == "refusal":
        return None, REFUSAL_TEXT, "stop"
    if answer == "length":
        return ok[: max(1, len(ok) // 2)], None, "length"
    if answer == "content_filter":
        return None, None, "content_filter"
    if answer == "echo_key":
        leak = {
            "content": f"User's API key is {api_key}.",
            "categories": ["factual"],
            "temporal_kind": "current",
            "supersedes": None,
        }
        return dumps_memories([leak]), None, "stop"
    return ok, None, "stop"


def usage(request_messages: Any, answer_text: str) -> dict[str, int]:
    """Token counts approximated as characters // 4: of every request message, and of the answer."""
    prompt_tokens = len(message_text(request_messages)) // 4
    completion_tokens = len(answer_text) // 4
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def retry_after(seconds: float) -> str:
    """The ``Retry-After`` value of a scripted 429."""
    return f"{seconds:g}"


def completion_body(
    *,
    request_id: str,
    model: str,
    request_messages: Any,
    content: str | None,
    refusal: str | None,
    finish_reason: str,
) -> dict[str, Any]:
    """A ``chat.completion`` object with deterministic usage (see :func:`usage`)."""
    return {
        "id": request_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": content,
                    "refusal": refusal,
                    "annotations": [],
                },
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": usage(request_messages, content or refusal or ""),
        "service_tier": "default",
        "system_fingerprint": SYSTEM_FINGERPRINT,
    }


def models_body(models: Sequence[str]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": m, "object": "model", "created": 0, "owned_by": "stub"} for m in models],
    }


def dumps(body: Any) -> bytes:
    text = json.dumps(body, ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (the poisoned answers): JSON's \uXXXX escape carries it
        return json.dumps(body).encode("ascii")
