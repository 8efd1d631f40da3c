"""SIGINT and SIGTERM wait while the store is written: a signal never cuts a write in half.

A signal raised inside a database write (SQLite's ``executemany`` half done) left the
connection holding the file's write lock, so ending the run afterwards failed with "database
is locked" and the run stayed RUNNING (issue 21, point 5). Each write runs with the two
signals' handlers replaced by one that only remembers them; when the write is done the
handlers come back and a remembered signal is raised again, so it ends the run KILLED as
before. (Blocking the signals with a thread mask is not enough: a worker thread, such as the
plots', still receives them, and Python then raises them in the main thread anyway.) Only the
main thread may set handlers; elsewhere nothing changes.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass
class Held:
    """The handlers a hold replaced, and the signals that came while it lasted."""

    previous: dict[int, Any]
    pending: list[int] = field(default_factory=list)


def hold_signals() -> Held | None:
    """Remember SIGINT and SIGTERM instead of acting on them (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    held = Held(previous={})

    def remember(signum: int, frame: object) -> None:
        held.pending.append(signum)

    for sig in _SIGNALS:
        held.previous[sig] = signal.signal(sig, remember)
    return held


def release_signals(held: Held | None) -> None:
    """Put the handlers back; a signal that came meanwhile is raised now, through its handler."""
    if held is None:
        return
    for sig, handler in held.previous.items():
        signal.signal(sig, handler)
    if held.pending:
        signal.raise_signal(held.pending[0])


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM wait (remembered, not lost) until the block ends."""
    held = hold_signals()
    try:
        yield
    finally:
        release_signals(held)
