"""The stub provider: an OpenAI-compatible chat-completions server on a background thread."""

from __future__ import annotations

import contextlib
import signal
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from .._jsonio import atomic_write_text
from ..contract import render_conversation
from ..gold import load_gold
from ._handler import StubHandler
from ._responses import last_user_text
from ._script import AnswerSet, StubScript, coerce_answers

DEFAULT_MODELS: tuple[str, ...] = ("gpt-4o-mini", "Qwen/Qwen2.5-14B-Instruct")


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


class _HTTPServer(ThreadingHTTPServer):
    """A threading server that can cut its open connections and join their threads."""

    daemon_threads = True
    request_queue_size = 256

    def __init__(self, address: tuple[str, int], stub: StubProviderServer) -> None:
        self.stub = stub
        self._lock = threading.Lock()
        self._active: dict[socket.socket, threading.Thread] = {}
        super().__init__(address, StubHandler)

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name="stub-provider-connection",
            daemon=True,
        )
        with self._lock:
            self._active[request] = thread
        thread.start()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._lock:
                self._active.pop(request, None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # the client went away: expected with drop, hang and client timeouts
        super().handle_error(request, client_address)

    def abort_connections(self, timeout: float) -> None:
        with self._lock:
            items = list(self._active.items())
        for sock, _ in items:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for _, thread in items:
            thread.join(timeout)


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
        models: Sequence[str] = DEFAULT_MODELS,
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
        self.stop_event = threading.Event()
        self._requested_port = port
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._attempts: Counter[str] = Counter()
        self._serial = 0
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -------------------------------------------------------------------------------

    def start(self) -> StubProviderServer:
        """Bind and serve on a daemon thread; returns self."""
        if self._httpd is not None:
            raise RuntimeError("stub provider already started")
        self.stop_event.clear()
        self._httpd = _HTTPServer((self.host, self._requested_port), self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="stub-provider",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, cut open connections (hanging ones too) and join every thread."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self.stop_event.set()
        httpd.shutdown()
        httpd.abort_connections(timeout=5.0)
        httpd.server_close()
        if thread is not None:
            thread.join(5.0)
        self._httpd = self._thread = None

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
        if self._httpd is None:
            raise RuntimeError("stub provider is not running; call start() or use `with`")
        return int(self._httpd.server_address[1])

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
            self._requests.append(
                RecordedRequest(method, path, headers, body, conversation_id, attempt, time.time())
            )
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
