"""The HTTP request handler: routing, auth, request checks and scripted behaviour."""

from __future__ import annotations

import json
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._responses import (
    answer_message,
    completion_body,
    dumps,
    error_body,
    models_body,
    status_error,
)
from ._schema_check import strict_schema_errors

if TYPE_CHECKING:
    from ._server import StubProviderServer

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
MODELS_PATHS = ("/v1/models", "/models")
_INVALID: Any = object()


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
    """The request path without query string and trailing slash."""
    return urlsplit(path).path.rstrip("/") or "/"


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
            return f"Invalid schema for response_format '{name}': " + " ".join(errors), (
                "response_format"
            )
    return None


class StubHandler(BaseHTTPRequestHandler):
    """One connection to the stub provider (HTTP/1.1, keep-alive)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes
    server_version = "stub-provider/1"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``server.requests`` instead."""

    @property
    def stub(self) -> StubProviderServer:
        return self.server.stub  # type: ignore[attr-defined, no-any-return]

    # plumbing --------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def _read_body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is not None:
            return self.rfile.read(int(length))
        if "chunked" not in self.headers.get("Transfer-Encoding", "").lower():
            return b""
        chunks: list[bytes] = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()

    def _send(
        self, status: int, body: Any, serial: str, headers: Mapping[str, str] | None = None
    ) -> None:
        data = dumps(body)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-request-id", f"req_stub_{serial}")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _drop(self) -> None:
        """Close the connection without sending a byte of response."""
        self.close_connection = True

    # routes ----------------------------------------------------------------------------------

    def do_GET(self) -> None:
        path, headers = route(self.path), self._headers()
        _, serial = self.stub.record("GET", path, headers, None, None)
        if path == "/health":
            self._send(200, {"status": "ok"}, serial)
        elif path not in MODELS_PATHS:
            self._send(404, error_body(f"Invalid URL (GET {path})"), serial)
        elif bearer_key(headers) is None:
            self._send(401, _NO_KEY, serial)
        else:
            self._send(200, models_body(self.stub.models), serial)

    def do_POST(self) -> None:
        path, headers = route(self.path), self._headers()
        body = parse_json(self._read_body())
        is_chat = path in CHAT_PATHS
        cid = self.stub.identify(body) if is_chat and body is not _INVALID else None
        recorded = None if body is _INVALID else body
        attempt, serial = self.stub.record("POST", path, headers, recorded, cid)
        key = bearer_key(headers)
        if not is_chat:
            self._send(404, error_body(f"Invalid URL (POST {path})"), serial)
        elif key is None:
            self._send(401, _NO_KEY, serial)
        elif body is _INVALID:
            self._send(400, error_body(_BAD_JSON), serial)
        elif (problem := request_problem(body)) is not None:
            self._send(400, error_body(problem[0], param=problem[1]), serial)
        elif cid is None or attempt is None:
            message = (
                "stub provider: the last user message matches no conversation of gold folder "
                f"{str(self.stub.gold_dir)!r} (it must equal "
                "extraction_eval.contract.render_conversation of one of them)."
            )
            self._send(
                400, error_body(message, param="messages", code="unknown_conversation"), serial
            )
        else:
            self._scripted(cid, attempt, body, key, serial)

    def _scripted(
        self, cid: str, attempt: int, body: Mapping[str, Any], key: str, serial: str
    ) -> None:
        behavior = self.stub.script.behavior_for(cid)
        stop = self.stub.stop_event
        if behavior.latency_ms and stop.wait(behavior.latency_ms / 1000):
            return self._drop()
        failure = behavior.failure_for(attempt)
        if failure == "drop":
            return self._drop()
        if failure == "hang":
            stop.wait(behavior.hang_s)
            return self._drop()
        if isinstance(failure, int):
            extra = {"Retry-After": f"{behavior.retry_after_s:g}"} if failure == 429 else {}
            return self._send(failure, status_error(failure), serial, extra)
        content, refusal, finish = answer_message(
            behavior.answer, self.stub.answers.get(cid, []), api_key=key
        )
        completion = completion_body(
            request_id=f"chatcmpl-stub-{serial}",
            model=body["model"],
            request_messages=body["messages"],
            content=content,
            refusal=refusal,
            finish_reason=finish,
        )
        extra = {"x-echo-key": key} if behavior.answer == "echo_key" else {}
        return self._send(200, completion, serial, extra)


_NO_KEY = error_body(
    "You didn't provide an API key. You need to provide your API key in an Authorization "
    "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
)
_BAD_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
    "using your HTTP library correctly.)"
)
