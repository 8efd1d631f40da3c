"""One function run in a worker thread while the caller waits on the tracking store.

Used for the run's plots (``_log.log_eval_run``): drawing them is CPU work in this process, and
logging the traces is mostly waiting for the server, so the two overlap. The worker's
exception is never lost and never changed: ``result`` raises ``WorkerFailed`` carrying it,
and the caller re-raises the original (so a plot that cannot be written fails the run with
the same ``OSError`` as before). ``wait`` returns only when the worker has stopped, so
nothing is written into the output folder's staging folder after the run's failure
handling removed it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class WorkerFailed(Exception):
    """The exception a background worker raised, carried to the thread that asked for its result."""

    def __init__(self, error: BaseException):
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error


class Background(Generic[T]):
    """``fn()`` started at once in a thread of its own; ``result()`` waits for it."""

    def __init__(self, fn: Callable[[], T], name: str):
        self._fn = fn
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as exc:  # carried to the caller, never printed by the thread
            self._error = exc

    def wait(self) -> None:
        """Return once the worker has stopped (whether it succeeded or not)."""
        self._thread.join()

    def result(self) -> T:
        """The worker's return value; ``WorkerFailed`` carrying its exception if it raised."""
        self.wait()
        if self._error is not None:
            raise WorkerFailed(self._error)
        return self._value  # type: ignore[return-value]
