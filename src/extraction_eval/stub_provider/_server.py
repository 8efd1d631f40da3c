"""The stub provider: an OpenAI-compatible chat-completions server on aiohttp.

aiohttp's low-level server (``aiohttp.web.Server``: one handler for every request, no
router) runs on an event loop in one background daemon thread (``stub-provider``), so that
synchronous tests can use the stub as a context manager. Every connection is a task on that
loop, scripted latency and hangs are ``asyncio.sleep`` calls, and JSON parsing and response
building run inline on the loop, so concurrent requests overlap instead of competing for the
GIL from one thread each. HTTP itself (framing, keep-alive, pipelining, ``100-continue``,
malformed requests) is aiohttp's.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from aiohttp import web

from .._jsonio import atomic_write_text
from ..contract import render_conversation
from ..gold import load_gold
from ..vocab import DEFAULT_MODELS
from ._handler import DROP, RESET, Incoming, Reply, handle
from ._responses import error_body, last_user_text
from ._script import AnswerSet, StubScript, coerce_answers

#: The models the stub answers for: each provider's default model.
STUB_MODELS: tuple[str, ...] = tuple(DEFAULT_MODELS.values())

#: Pending connections the listening socket queues while the loop is busy.
LISTEN_BACKLOG = 256
#: How long close() waits for the loop thread.
CLOSE_TIMEOUT_S = 5.0
#: How long close() lets a request in flight finish before cutting it (aiohttp's shutdown
#: timeout): scripted latency and hangs are cut, not waited for.
CUT_AFTER_S = 0.01


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the stub received it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    conversation_id: str | None
    attempt: int | None
    time: float


class StubProviderServer:
    """Answers ``POST /v1/chat/completions`` for the conversations of a gold folder.

    ``answers``: conversation_id -> memories, or a JSONL path (default: the gold's expected
    memories; a conversation missing from a given answer set answers ``[]``).
    ``script``: a :class:`StubScript`, its dict form or a JSON path.
    """

    def __init__(
        self,
        gold_dir: Path | str,
        answers: Mapping[str, Sequence[Mapping[str, Any]]] | Path | str | None = None,
        script: StubScript | Mapping[str, Any] | Path | str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        models: Sequence[str] = STUB_MODELS,
        judgments: Mapping[tuple[str, str], str] | None = None,
    ) -> None:
        gold = load_gold(Path(gold_dir), require_manifest=False)
        self.gold_dir = Path(gold_dir)
        self.conversation_by_text: dict[str, str] = {
            render_conversation(c): c.conversation_id for c in gold.conversations
        }
        self.answers: AnswerSet = coerce_answers(answers, gold)
        self.script = StubScript.coerce(script)
        self.models = tuple(models)
        #: Scripted judge answers by (A, B): "same", "different", "malformed" or "refusal";
        #: a pair not listed is "different" (docs/matcher.md, the judge).
        self.judgments: dict[tuple[str, str], str] = dict(judgments or {})
        self.host = host
        self._requested_port = port
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._attempts: Counter[str] = Counter()
        self._serial = 0
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None

    # lifecycle -------------------------------------------------------------------------------

    def start(self) -> StubProviderServer:
        """Bind, then serve from an event loop on a daemon thread; returns self."""
        if self._thread is not None:
            raise RuntimeError("stub provider already started")
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.create_server((self.host, self._requested_port), family=family, backlog=LISTEN_BACKLOG)
        ready = threading.Event()
        failed: list[BaseException] = []
        thread = threading.Thread(target=self._run, args=(sock, ready, failed), name="stub-provider", daemon=True)
        thread.start()
        ready.wait()
        if failed:
            thread.join(CLOSE_TIMEOUT_S)
            sock.close()
            raise failed[0]
        self._port = int(sock.getsockname()[1])
        self._thread = thread
        return self

    def close(self) -> None:
        """Stop serving, cut open connections (hanging ones too) and join the loop thread."""
        thread, loop, stopping = self._thread, self._loop, self._stopping
        if thread is None:
            return
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(stopping.set)
        if thread is not threading.current_thread():
            thread.join(CLOSE_TIMEOUT_S)
        self._thread = self._loop = self._stopping = None
        self._port = None

    def _run(self, sock: socket.socket, ready: threading.Event, failed: list[BaseException]) -> None:
        """The loop thread: serve until close(), then cut every connection."""
        try:
            asyncio.run(self._main(sock, ready))
        except BaseException as exc:
            if ready.is_set():
                raise
            failed.append(exc)
        finally:
            ready.set()
            sock.close()

    async def _main(self, sock: socket.socket, ready: threading.Event) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        runner = web.ServerRunner(web.Server(self._serve, access_log=None), shutdown_timeout=CUT_AFTER_S)
        await runner.setup()
        try:
            await web.SockSite(runner, sock, backlog=LISTEN_BACKLOG).start()
            ready.set()
            await self._stopping.wait()
            # Accept nothing new, and let what was accepted a moment ago reach aiohttp (it takes
            # two loop iterations): asyncio leaves a connection whose transport is built after
            # its server closed open and unanswered, and the client would wait for ever.
            self._loop.remove_reader(sock)
            for _ in range(3):
                await asyncio.sleep(0)
        finally:
            # Stops listening, closes idle keep-alive connections, and cancels the handlers still
            # running after CUT_AFTER_S: their connections close without a response.
            await runner.cleanup()

    async def _serve(self, request: web.BaseRequest) -> web.StreamResponse:
        """aiohttp's handler for every request: the reply of :func:`handle` as a response."""
        received_at = asyncio.get_running_loop().time()
        headers = {name.lower(): value for name, value in request.headers.items()}
        body = await request.content.read()  # the whole body, whatever its size
        incoming = Incoming(request.method, request.path, headers, body, received_at)
        try:
            reply = await handle(self, incoming)
        except Exception as exc:  # a stub bug: say so rather than hang up silently
            traceback.print_exc(file=sys.stderr)
            message = f"stub provider: internal error: {type(exc).__name__}: {exc}"
            failed = _response(Reply(500, error_body(message, type_="server_error")))
            failed.force_close()
            return failed
        if reply is DROP:  # scripted drop or hang: close without a byte of response
            if request.transport is not None:
                request.transport.close()
            return web.Response()  # never sent: aiohttp finds the connection closed
        if reply is RESET:  # scripted reset: SO_LINGER 0, so closing sends an RST
            if request.transport is not None:
                sock = request.transport.get_extra_info("socket")
                if sock is not None:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                request.transport.abort()
            return web.Response()  # never sent: the connection was reset
        return _response(reply)

    def __enter__(self) -> StubProviderServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # addresses -------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("stub provider is not running; call start() or use `with`")
        return self._port

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``: what ``AsyncOpenAI(base_url=...)`` takes."""
        return f"http://{self.host}:{self.port}/v1"

    # bookkeeping -----------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def attempts(self, conversation_id: str) -> int:
        """How many requests for this conversation arrived (whatever their outcome)."""
        with self._lock:
            return self._attempts[conversation_id]

    def reset(self) -> None:
        """Forget recorded requests and attempt counts (fail_first starts over)."""
        with self._lock:
            self._requests.clear()
            self._attempts.clear()

    def identify(self, body: Any) -> str | None:
        """The conversation whose rendering equals the request's last user message."""
        messages = body.get("messages") if isinstance(body, Mapping) else None
        text = last_user_text(messages)
        return None if text is None else self.conversation_by_text.get(text)

    def record(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        body: Any,
        conversation_id: str | None,
    ) -> tuple[int | None, str]:
        """Store the request; returns (attempt number for its conversation, request serial id)."""
        with self._lock:
            self._serial += 1
            attempt = None
            if conversation_id is not None:
                self._attempts[conversation_id] += 1
                attempt = self._attempts[conversation_id]
            self._requests.append(RecordedRequest(method, path, headers, body, conversation_id, attempt, time.time()))
            return attempt, f"{self._serial:06d}"


def _response(reply: Reply) -> web.Response:
    return web.Response(status=reply.status, body=reply.encoded_body(), headers=reply.header_list())


def serve(
    gold_dir: Path | str,
    answers: Mapping[str, Sequence[Mapping[str, Any]]] | Path | str | None = None,
    script: StubScript | Mapping[str, Any] | Path | str | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    port_file: Path | str | None = None,
) -> None:
    """Run the stub in the foreground until SIGTERM or SIGINT."""
    stop = threading.Event()
    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, lambda *_: stop.set())
    try:
        with StubProviderServer(gold_dir, answers, script, host=host, port=port) as server:
            print(f"listening on {server.base_url}", flush=True)
            if port_file is not None:
                atomic_write_text(Path(port_file), f"{server.port}\n")
            while not stop.wait(0.5):
                pass
        print("stopped", flush=True)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
