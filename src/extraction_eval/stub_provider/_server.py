"""The stub provider: an OpenAI-compatible chat-completions server.

The transport is an asyncio server whose event loop runs in one background daemon thread
(``stub-provider``): every connection is a task on that loop, scripted latency and hangs are
``asyncio.sleep`` calls, and JSON parsing and response building run inline on the loop, so
concurrent requests overlap instead of competing for the GIL from one thread each.
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

from .._jsonio import atomic_write_text
from ..contract import render_conversation
from ..gold import load_gold
from ..vocab import DEFAULT_MODELS
from ._handler import RESET, Reply, handle
from ._http import (
    CONTINUE,
    MAX_LINE,
    ProtocolError,
    encode_response,
    read_body,
    read_request_head,
)
from ._responses import dumps, error_body, last_user_text
from ._script import AnswerSet, StubScript, coerce_answers

#: The models the stub answers for: each provider's default model.
STUB_MODELS: tuple[str, ...] = tuple(DEFAULT_MODELS.values())

#: Pending connections the listening socket queues while the loop is busy.
LISTEN_BACKLOG = 256
#: How long close() waits for the loop thread, and the loop for cancelled connections.
CLOSE_TIMEOUT_S = 5.0
#: After refusing a malformed request, how long to drain what the client still sends, so
#: that closing does not reset the connection before the client has read the refusal.
LINGER_S = 1.0


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
    ) -> None:
        gold = load_gold(Path(gold_dir), require_manifest=False)
        self.gold_dir = Path(gold_dir)
        self.conversation_by_text: dict[str, str] = {
            render_conversation(c): c.conversation_id for c in gold.conversations
        }
        self.answers: AnswerSet = coerce_answers(answers, gold)
        self.script = StubScript.coerce(script)
        self.models = tuple(models)
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
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}

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
        self._connections = {}
        server = await asyncio.start_server(self._accept, sock=sock, limit=MAX_LINE)
        ready.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            await self._cut_connections()

    async def _cut_connections(self) -> None:
        """Cancel every connection task (interrupting latency and hangs), then close what is
        still open: cancelled connections end with a FIN, without a response."""
        connections = dict(self._connections)
        for task in connections:
            task.cancel()
        if connections:
            await asyncio.wait(connections, timeout=CLOSE_TIMEOUT_S)
        for writer in connections.values():
            writer.transport.abort()  # a no-op for those already closed
        await asyncio.sleep(0)  # let the transports run their connection_lost callbacks

    # connections -----------------------------------------------------------------------------

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A new connection: registered at once, so that close() can cut it whatever its state."""
        task = asyncio.get_running_loop().create_task(self._connection(reader, writer))
        self._connections[task] = writer
        task.add_done_callback(self._connection_done)

    def _connection_done(self, task: asyncio.Task[None]) -> None:
        writer = self._connections.pop(task, None)
        if writer is not None:
            writer.close()
        exc = None if task.cancelled() else task.exception()
        if exc is not None:
            traceback.print_exception(exc, file=sys.stderr)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while await self._exchange(reader, writer):
                pass

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read one request and answer it; whether the connection stays open for another."""
        try:
            request = await read_request_head(reader)
        except ProtocolError as exc:
            await self._refuse(reader, writer, exc)
            return False
        if request is None:
            return False
        request.received_at = asyncio.get_running_loop().time()
        if request.expect_continue:
            writer.write(CONTINUE)
        request.body = await read_body(reader, request)
        keep_alive = request.keep_alive
        try:
            reply = await handle(self, request)
        except Exception as exc:  # a stub bug: say so rather than hang up silently
            traceback.print_exc(file=sys.stderr)
            message = f"stub provider: internal error: {type(exc).__name__}: {exc}"
            reply, keep_alive = Reply(500, error_body(message, type_="server_error")), False
        if reply is None:  # scripted drop or hang: close without a byte of response
            return False
        if reply is RESET:  # scripted reset: SO_LINGER 0, so closing sends an RST
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        writer.write(
            encode_response(
                reply.status,
                reply.encoded_body(),
                reply.header_list(),
                keep_alive=keep_alive,
                version=request.version,
                include_body=request.method != "HEAD",
            )
        )
        await writer.drain()
        return keep_alive

    async def _refuse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, exc: ProtocolError) -> None:
        """Answer a malformed request in OpenAI's error shape, then close gracefully."""
        body = dumps(error_body(exc.message))
        headers = [("Content-Type", "application/json")]
        writer.write(encode_response(exc.status, body, headers, keep_alive=False))
        await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LINGER_S):
                while await reader.read(MAX_LINE):
                    pass

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
