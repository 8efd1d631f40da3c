"""The stub provider's HTTP/1.1 transport over raw sockets: keep-alive and pipelining,
``Connection: close``, malformed requests refused in OpenAI's error shape, a burst of
concurrent requests overlapping their latency, and close() cutting every kind of connection."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import httpx
import pytest

from extraction_eval.contract import full_messages
from extraction_eval.gold import Conversation
from extraction_eval.stub_provider import StubProviderServer

from .conftest import KEY, assert_close_cuts_the_request, request_body

Response = tuple[int, dict[str, str], bytes]


@pytest.fixture
def server(gold_dir: Path) -> Iterator[StubProviderServer]:
    with StubProviderServer(gold_dir) as stub:
        yield stub


def connect(server: StubProviderServer) -> tuple[socket.socket, BinaryIO]:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5.0)
    return sock, sock.makefile("rb")


def raw_request(
    method: str,
    path: str,
    body: Any = None,
    *headers: str,
    version: str = "HTTP/1.1",
) -> bytes:
    data = b"" if body is None else json.dumps(body).encode()
    lines = [f"{method} {path} {version}", "Host: 127.0.0.1", f"Authorization: Bearer {KEY}"]
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
    lines += headers
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def read_response(stream: BinaryIO) -> Response:
    status_line = stream.readline()
    if not status_line:
        raise EOFError("the server closed the connection without a response")
    _, code, _ = status_line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(code), headers, stream.read(int(headers.get("content-length", "0")))


def is_closed(sock: socket.socket, stream: BinaryIO) -> bool:
    """Whether the server closed its side (EOF), waiting up to the socket timeout."""
    return stream.read(1) == b""


# --- persistent connections -----------------------------------------------------------------


def test_keep_alive_serves_several_requests_on_one_connection(
    server: StubProviderServer, conversations: dict[str, Conversation]
) -> None:
    c001, c002 = (request_body(full_messages(conversations[c])) for c in ("c001", "c002"))
    sock, stream = connect(server)
    with sock, stream:
        answers = []
        for request in (
            raw_request("GET", "/health"),
            raw_request("POST", "/v1/chat/completions", c001),
            raw_request("GET", "/v1/models"),
            raw_request("POST", "/v1/chat/completions", c002),
        ):
            sock.sendall(request)
            answers.append(read_response(stream))
    assert [status for status, _, _ in answers] == [200, 200, 200, 200]
    assert all("connection" not in headers for _, headers, _ in answers)
    assert [h["x-request-id"] for _, h, _ in answers] == [f"req_stub_00000{i}" for i in range(1, 5)]
    content = json.loads(answers[3][2])["choices"][0]["message"]["content"]
    assert json.loads(content)["memories"][0]["content"].startswith("User is running")
    assert [r.conversation_id for r in server.requests] == [None, "c001", None, "c002"]


def test_pipelined_requests_are_answered_in_order(
    server: StubProviderServer, conversations: dict[str, Conversation]
) -> None:
    bodies = [request_body(full_messages(conversations[c])) for c in ("c002", "c001", "c003")]
    sock, stream = connect(server)
    with sock, stream:
        sock.sendall(b"".join(raw_request("POST", "/v1/chat/completions", b) for b in bodies))
        answers = [read_response(stream) for _ in bodies]
    ids = [json.loads(body)["id"] for _, _, body in answers]
    assert ids == ["chatcmpl-stub-000001", "chatcmpl-stub-000002", "chatcmpl-stub-000003"]
    assert [r.conversation_id for r in server.requests] == ["c002", "c001", "c003"]


def test_connection_close_is_honoured(server: StubProviderServer) -> None:
    sock, stream = connect(server)
    with sock, stream:
        sock.sendall(raw_request("GET", "/health", None, "Connection: close"))
        status, headers, body = read_response(stream)
        assert is_closed(sock, stream)
    assert (status, headers["connection"], json.loads(body)) == (200, "close", {"status": "ok"})


def test_http_1_0_closes_unless_it_asks_for_keep_alive(server: StubProviderServer) -> None:
    sock, stream = connect(server)
    with sock, stream:
        keep_alive = raw_request("GET", "/health", None, "Connection: keep-alive", version="HTTP/1.0")
        sock.sendall(keep_alive)
        kept = read_response(stream)
        sock.sendall(raw_request("GET", "/health", version="HTTP/1.0"))
        closed = read_response(stream)
        assert is_closed(sock, stream)
    assert (kept[0], kept[1]["connection"]) == (200, "keep-alive")
    assert (closed[0], closed[1]["connection"]) == (200, "close")


def test_expect_100_continue(server: StubProviderServer, conversations: dict[str, Conversation]) -> None:
    full = raw_request(
        "POST",
        "/v1/chat/completions",
        request_body(full_messages(conversations["c001"])),
        "Expect: 100-continue",
    )
    head, _, body = full.partition(b"\r\n\r\n")
    sock, stream = connect(server)
    with sock, stream:
        sock.sendall(head + b"\r\n\r\n")
        assert stream.readline() == b"HTTP/1.1 100 Continue\r\n"
        assert stream.readline() == b"\r\n"
        sock.sendall(body)
        status, _, _ = read_response(stream)
    assert status == 200


def test_unsupported_method_is_501_and_keeps_the_connection(server: StubProviderServer) -> None:
    sock, stream = connect(server)
    with sock, stream:
        sock.sendall(raw_request("PUT", "/v1/chat/completions", {"x": 1}))
        refused = read_response(stream)
        sock.sendall(raw_request("GET", "/health"))
        health = read_response(stream)
    assert refused[0] == 501
    assert json.loads(refused[2])["error"]["message"] == "Unsupported method ('PUT')."
    assert health[0] == 200


# --- malformed requests -----------------------------------------------------------------------

GOOD_HEAD = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"


@pytest.mark.parametrize(
    ("raw", "status", "needle"),
    [
        (b"GARBAGE\r\n\r\n", 400, "Bad request line 'GARBAGE'"),
        (b"GET /health HTTP/1.1 extra\r\n\r\n", 400, "Bad request line"),
        (b"GET /health HTTX/1.1\r\n\r\n", 400, "Bad request line"),
        (b"G(T /health HTTP/1.1\r\n\r\n", 400, "Bad request line"),
        (b"GET /health HTTP/2.0\r\n\r\n", 505, "HTTP version HTTP/2.0 is not supported"),
        (b"GET /health HTTP/1.1\r\nNo colon here\r\n\r\n", 400, "Bad header field"),
        (b"GET /health HTTP/1.1\r\nBad Name: x\r\n\r\n", 400, "Bad header field"),
        (b"GET /health HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n", 400, "line folding"),
        (
            (GOOD_HEAD + "Content-Length: 12abc\r\n\r\n").encode(),
            400,
            "Bad Content-Length header.",
        ),
        (
            (GOOD_HEAD + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}").encode(),
            400,
            "Bad Content-Length header.",
        ),
        (
            (GOOD_HEAD + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n").encode(),
            411,
            "Chunked request bodies are not supported",
        ),
        (
            (GOOD_HEAD + "Transfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}").encode(),
            400,
            "Transfer-Encoding 'gzip' is not supported",
        ),
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414, "request line is too long"),
        (b"GET / HTTP/1.1\r\nX-A: " + b"a" * 70_000 + b"\r\n\r\n", 431, "header field is too long"),
    ],
)
def test_malformed_requests_are_refused_in_openai_shape_and_closed(
    server: StubProviderServer, raw: bytes, status: int, needle: str
) -> None:
    sock, stream = connect(server)
    with sock, stream:
        sock.sendall(raw)
        code, headers, body = read_response(stream)
        assert is_closed(sock, stream)
    assert code == status
    assert headers["content-type"] == "application/json"
    assert headers["connection"] == "close"
    error = json.loads(body)["error"]
    assert needle in error["message"]
    assert (error["type"], error["param"], error["code"]) == ("invalid_request_error", None, None)
    assert server.requests == []


def test_a_body_cut_short_leaves_the_server_serving(
    server: StubProviderServer, conversations: dict[str, Conversation]
) -> None:
    sock, stream = connect(server)
    with sock, stream:
        sock.sendall(GOOD_HEAD.encode() + b'Content-Length: 1000\r\n\r\n{"model":')
    body = request_body(full_messages(conversations["c001"]))
    response = httpx.post(
        f"{server.base_url}/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=5.0,
    )
    assert response.status_code == 200
    assert [r.conversation_id for r in server.requests] == ["c001"]


# --- concurrency and close() ----------------------------------------------------------------


def test_a_burst_of_32_concurrent_requests_overlaps_its_latency(
    gold_dir: Path, conversations: dict[str, Conversation]
) -> None:
    """Every request of the burst has arrived before the first answer leaves: the latency
    sleeps overlap. (Served one at a time, the second request would be read only after the
    first answer.) Proved by order, not by a wall-clock bound that a busy machine breaks."""
    bodies = [request_body(full_messages(conversations[f"c00{1 + i % 3}"])) for i in range(32)]

    async def burst(url: str) -> list[tuple[int, float]]:
        limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
        headers = {"Authorization": f"Bearer {KEY}"}
        async with httpx.AsyncClient(limits=limits, headers=headers, timeout=30.0) as client:

            async def post(body: dict[str, Any]) -> tuple[int, float]:
                response = await client.post(url, json=body)
                return response.status_code, time.time()

            return await asyncio.gather(*(post(b) for b in bodies))

    with StubProviderServer(gold_dir, script={"default": {"latency_ms": 500}}) as server:
        answers = asyncio.run(burst(f"{server.base_url}/chat/completions"))
        arrivals = [r.time for r in server.requests]
    assert [status for status, _ in answers] == [200] * 32
    assert len(arrivals) == 32
    assert max(arrivals) < min(done for _, done in answers)


def test_close_interrupts_a_latency_sleep(gold_dir: Path, conversations: dict[str, Conversation]) -> None:
    body = request_body(full_messages(conversations["c001"]))
    server = StubProviderServer(gold_dir, script={"default": {"latency_ms": 30_000}}).start()
    assert_close_cuts_the_request(server, body)


def test_close_cuts_idle_keep_alive_connections(gold_dir: Path) -> None:
    server = StubProviderServer(gold_dir).start()
    sock, stream = connect(server)
    with sock, stream:
        sock.sendall(raw_request("GET", "/health"))
        assert read_response(stream)[0] == 200
        start = time.monotonic()
        server.close()
        assert time.monotonic() - start < 10.0  # waiting for the idle connection would never end
        assert is_closed(sock, stream)


def test_a_closed_server_can_start_again(gold_dir: Path) -> None:
    server = StubProviderServer(gold_dir)
    for _ in range(2):
        with server:
            assert httpx.get(f"http://127.0.0.1:{server.port}/health").json() == {"status": "ok"}
        with pytest.raises(RuntimeError, match="not running"):
            _ = server.port
    assert len(server.requests) == 2


def test_a_body_larger_than_the_line_limit_is_read_whole(server: StubProviderServer) -> None:
    big = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "x" * 3_000_000}]}
    sock, stream = connect(server)
    with sock, stream:
        sock.sendall(raw_request("POST", "/v1/chat/completions", big))
        status, _, body = read_response(stream)
        sock.sendall(raw_request("GET", "/health"))
        assert read_response(stream)[0] == 200
    assert status == 400
    assert json.loads(body)["error"]["code"] == "unknown_conversation"
    (recorded, _) = server.requests
    assert recorded.body["messages"][0]["content"] == "x" * 3_000_000
