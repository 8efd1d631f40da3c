"""The stub provider's life as a server: a burst of concurrent requests overlapping their
latency, close() cutting every kind of connection, starting again, and what aiohttp's
defaults would refuse but the stub accepts (any method, a large body). HTTP framing itself
(keep-alive, pipelining, 100-continue, malformed requests) is aiohttp's, not tested here."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from extraction_eval.contract import full_messages
from extraction_eval.gold import Conversation
from extraction_eval.stub_provider import StubProviderServer

from .conftest import KEY, assert_close_cuts_the_request, request_body


@pytest.fixture
def server(gold_dir: Path) -> Iterator[StubProviderServer]:
    with StubProviderServer(gold_dir) as stub:
        yield stub


def wait_for_eof(sock: socket.socket) -> bytes:
    """Everything the server still sends until it closes its side (a reset counts as closed);
    times out (an error) after the socket's timeout."""
    received = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            received += chunk
    return received


# --- what aiohttp's defaults would refuse ----------------------------------------------------


def test_any_method_reaches_the_stub_and_gets_its_own_refusal(server: StubProviderServer) -> None:
    refused = httpx.put(f"{server.base_url}/chat/completions", json={"x": 1})
    assert refused.status_code == 501
    assert refused.json()["error"]["message"] == "Unsupported method ('PUT')."
    assert httpx.get(f"{server.base_url}/nowhere").json()["error"]["message"] == "Invalid URL (GET /v1/nowhere)"


def test_a_body_larger_than_aiohttps_default_limit_is_read_whole(server: StubProviderServer) -> None:
    big = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "x" * 3_000_000}]}
    headers = {"Authorization": f"Bearer {KEY}"}
    response = httpx.post(f"{server.base_url}/chat/completions", json=big, headers=headers, timeout=10.0)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "unknown_conversation"
    (recorded,) = server.requests
    assert recorded.body["messages"][0]["content"] == "x" * 3_000_000


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
    with socket.create_connection(("127.0.0.1", server.port), timeout=5.0) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n")
        start = time.monotonic()
        server.close()
        assert time.monotonic() - start < 10.0  # waiting for the idle connection would never end
        assert wait_for_eof(sock) == b""


def test_close_cuts_connections_accepted_a_moment_before(gold_dir: Path) -> None:
    """A connection the loop accepts as close() begins is closed too, not left open with the
    client waiting for ever (asyncio drops one whose transport is built after its server
    closed). Without the fix, 25 of 40 such rounds left the client waiting in one trial."""
    for round_ in range(30):
        server = StubProviderServer(gold_dir).start()
        with socket.create_connection(("127.0.0.1", server.port), timeout=5.0) as sock:
            if round_ % 2:
                sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            server.close()
            received = wait_for_eof(sock)
        assert received == b"" or received.startswith(b"HTTP/1.1 200 OK\r\n")


def test_a_closed_server_can_start_again(gold_dir: Path) -> None:
    server = StubProviderServer(gold_dir)
    for _ in range(2):
        with server:
            assert httpx.get(f"http://127.0.0.1:{server.port}/health").json() == {"status": "ok"}
        with pytest.raises(RuntimeError, match="not running"):
            _ = server.port
    assert len(server.requests) == 2


def test_a_stub_bug_is_a_500_in_openais_shape_with_the_traceback_on_stderr(
    server: StubProviderServer, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from extraction_eval.stub_provider import _server

    async def broken(stub: Any, request: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(_server, "handle", broken)
    response = httpx.get(f"{server.base_url}/models")
    assert response.status_code == 500
    assert response.headers["connection"] == "close"
    assert response.json()["error"] == {
        "message": "stub provider: internal error: RuntimeError: boom",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    assert "RuntimeError: boom" in capfd.readouterr().err
