"""Routing, auth, request checks and scripted behaviour: one request in, one reply out.

Nothing here knows the transport: ``_server.py`` turns an aiohttp request into an
:class:`Incoming` and a :class:`Reply` into a response (or a closed connection).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..contract._judge import JUDGE_SCHEMA_NAME, judge_pair
from ._responses import (
    answer_message,
    completion_body,
    dumps,
    error_body,
    models_body,
    retry_after,
    status_error,
)
from ._schema_check import strict_schema_errors

if TYPE_CHECKING:
    from ._server import StubProviderServer

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
MODELS_PATHS = ("/v1/models", "/models")
_INVALID: Any = object()


@dataclass(frozen=True, slots=True)
class Incoming:
    """One request as the handler sees it (header names lower-cased, a repeated name keeps
    its last value)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    #: The event loop's clock when the request reached the handler: latency counts from here.
    received_at: float


@dataclass(frozen=True, slots=True)
class Reply:
    """A JSON response: status, body object and extra headers (after Content-Type)."""

    status: int
    body: Any
    serial: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    #: A body sent as these bytes (with ``content_type``) instead of JSON: a proxy's HTML page.
    raw: bytes | None = None
    content_type: str = "application/json"

    def header_list(self) -> list[tuple[str, str]]:
        out = [("Content-Type", self.content_type)]
        if self.serial is not None:
            out.append(("x-request-id", f"req_stub_{self.serial}"))
        out.extend(self.headers)
        return out

    def encoded_body(self) -> bytes:
        return self.raw if self.raw is not None else dumps(self.body)


#: What a handler returns when the connection must close without a response.
DROP = None
#: What a handler returns when the connection must be reset (TCP RST) without a response.
RESET = Reply(0, None)


def bearer_key(headers: Mapping[str, str]) -> str | None:
    """The key of an ``Authorization: Bearer KEY`` header, or None."""
    scheme, _, key = headers.get("authorization", "").partition(" ")
    return (key.strip() or None) if scheme.lower() == "bearer" else None


def parse_json(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _INVALID


def route(path: str) -> str:
    """The request path without its trailing slash."""
    return path.rstrip("/") or "/"


def request_problem(body: Any) -> tuple[str, str] | None:
    """(message, param) when the body is not a usable chat request."""
    if not isinstance(body, Mapping):
        return "The request body must be a JSON object.", "body"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "You must provide a model parameter.", "model"
    if not isinstance(body.get("messages"), list) or not body["messages"]:
        return "Missing required parameter: 'messages'.", "messages"
    response_format = body.get("response_format")
    if not isinstance(response_format, Mapping) or response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema")
    if not isinstance(spec, Mapping):
        return "Missing required parameter: 'response_format.json_schema'.", "response_format"
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        return (
            "Missing required parameter: 'response_format.json_schema.name'.",
            "response_format",
        )
    if spec.get("strict") is True:
        errors = strict_schema_errors(spec.get("schema"))
        if errors:
            return f"Invalid schema for response_format '{name}': " + " ".join(errors), ("response_format")
    return None


def _is_judge(body: Mapping[str, Any]) -> bool:
    spec = (body.get("response_format") or {}).get("json_schema") or {}
    return isinstance(spec, Mapping) and spec.get("name") == JUDGE_SCHEMA_NAME


def judge_answer(verdict: str) -> tuple[str | None, str | None]:
    """(content, refusal) of a scripted judge answer."""
    if verdict == "same":
        return '{"same_fact": true}', None
    if verdict == "different":
        return '{"same_fact": false}', None
    if verdict == "malformed":
        return "Yes, they are the same fact.", None
    if verdict == "refusal":
        return None, "I can't help with comparing these texts."
    raise ValueError(f"stub judgments: {verdict!r} is not one of 'same', 'different', 'malformed', 'refusal'")


async def handle(stub: StubProviderServer, request: Incoming) -> Reply | None:
    """The reply to one request, or None (:data:`DROP`) to close without answering."""
    if request.method == "GET":
        return handle_get(stub, request)
    if request.method == "POST":
        return await handle_post(stub, request)
    return Reply(501, error_body(f"Unsupported method ({request.method!r})."))


def handle_get(stub: StubProviderServer, request: Incoming) -> Reply:
    path, headers = route(request.path), request.headers
    _, serial = stub.record("GET", path, headers, None, None)
    if path == "/health":
        return Reply(200, {"status": "ok"}, serial)
    if path not in MODELS_PATHS:
        return Reply(404, error_body(f"Invalid URL (GET {path})"), serial)
    if bearer_key(headers) is None:
        return Reply(401, _NO_KEY, serial)
    return Reply(200, models_body(stub.models), serial)


async def handle_post(stub: StubProviderServer, request: Incoming) -> Reply | None:
    path, headers = route(request.path), request.headers
    body = parse_json(request.body)
    is_chat = path in CHAT_PATHS
    cid = stub.identify(body) if is_chat and body is not _INVALID else None
    recorded = None if body is _INVALID else body
    attempt, serial = stub.record("POST", path, headers, recorded, cid)
    key = bearer_key(headers)
    if not is_chat:
        return Reply(404, error_body(f"Invalid URL (POST {path})"), serial)
    if key is None:
        return Reply(401, _NO_KEY, serial)
    if body is _INVALID:
        return Reply(400, error_body(_BAD_JSON), serial)
    if (problem := request_problem(body)) is not None:
        return Reply(400, error_body(problem[0], param=problem[1]), serial)
    if (pair := judge_pair(body.get("messages"))) is not None and _is_judge(body):
        content, refusal = judge_answer(stub.judgments.get(pair, "different"))
        completion = completion_body(
            request_id=f"chatcmpl-stub-{serial}",
            model=body["model"],
            request_messages=body["messages"],
            content=content,
            refusal=refusal,
            finish_reason="stop",
        )
        return Reply(200, completion, serial)
    if cid is None or attempt is None:
        message = (
            "stub provider: the last user message matches no conversation of gold folder "
            f"{str(stub.gold_dir)!r} (it must equal "
            "extraction_eval.contract.render_conversation of one of them)."
        )
        problem_body = error_body(message, param="messages", code="unknown_conversation")
        return Reply(400, problem_body, serial)
    return await scripted(stub, cid, attempt, body, key, serial, received_at=request.received_at)


async def scripted(
    stub: StubProviderServer,
    cid: str,
    attempt: int,
    body: Mapping[str, Any],
    key: str,
    serial: str,
    *,
    received_at: float,
) -> Reply | None:
    """Latency, then the scripted failure of this attempt, or the scripted answer.

    The latency counts from the request's arrival (``received_at``, the loop's clock when it
    reached the handler, before its body was read), as a client measures it: the stub's own
    parsing and checks are part of the scripted latency, not added to it. Closing the server
    cancels the sleeps, which closes the connection without a response.
    """
    behavior = stub.script.behavior_for(cid)
    if behavior.latency_ms:
        loop = asyncio.get_running_loop()
        deadline = received_at + behavior.latency_ms / 1000
        await asyncio.sleep(max(0.0, deadline - loop.time()))
    failure = behavior.failure_for(attempt)
    if failure == "drop":
        return DROP
    if failure == "reset":
        return RESET
    if failure == "hang":
        await asyncio.sleep(behavior.hang_s)
        return DROP
    if isinstance(failure, int):
        extra = (("Retry-After", retry_after(behavior.retry_after_s)),) if failure == 429 else ()
        return Reply(failure, status_error(failure), serial, extra)
    content, refusal, finish = answer_message(behavior.answer, stub.answers.get(cid, []), api_key=key)
    completion = completion_body(
        request_id=f"chatcmpl-stub-{serial}",
        model=body["model"],
        request_messages=body["messages"],
        content=content,
        refusal=refusal,
        finish_reason=finish,
    )
    extra = (("x-echo-key", key),) if behavior.answer == "echo_key" else ()
    return malformed_reply(behavior.answer, completion, serial) or Reply(200, completion, serial, extra)


def malformed_reply(answer: str, completion: dict[str, Any], serial: str) -> Reply | None:
    """A 200 whose body a client must not trust (the fault suite's answers); None for the others."""
    message = completion["choices"][0]["message"]
    if answer == "html":
        return Reply(200, None, serial, raw=b"<html><body>Sign in</body></html>", content_type="text/html")
    if answer == "empty_list":
        return Reply(200, [], serial)
    if answer == "content_list":
        message["content"] = [{"type": "text", "text": message["content"]}]
    elif answer == "content_int":
        message["content"] = 42
    elif answer == "usage_string":
        completion["usage"]["prompt_tokens"] = "many"
    elif answer == "deep_nesting":
        message["content"] = "[" * 100_000 + "]" * 100_000
    elif answer == "lone_surrogate":  # JSON's \ud800 escape: legal JSON, not encodable as UTF-8
        message["content"] = message["content"].replace("User", "User\ud800", 1)
    elif answer == "huge_refusal":
        message["refusal"] = "no " * 500_000
    elif answer == "huge_fingerprint":
        completion["system_fingerprint"] = "fp_" + "0" * 1_000_000
    elif answer == "huge_usage":
        completion["usage"]["prompt_tokens"] = 10**400
    else:
        return None
    return Reply(200, completion, serial)


_NO_KEY = error_body(
    "You didn't provide an API key. You need to provide your API key in an Authorization "
    "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
)
_BAD_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
    "using your HTTP library correctly.)"
)
