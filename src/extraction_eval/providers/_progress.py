"""Progress of live calls: a bar on a terminal, plain lines in CI and logs."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class Progress:
    """Conversations done, failures, tokens, cost and ETA."""

    def __init__(self, total: int, *, bar: bool | None = None, stream: TextIO | None = None, every_s: float = 10.0):
        self.stream = stream or sys.stderr
        self.total = total
        self.bar = self.stream.isatty() if bar is None else bar
        self.every_s = every_s
        self.done = self.failed = self.tokens = 0
        self.cost = 0.0
        self.started = time.monotonic()
        self._last_line = 0.0
        self._last_decile = -1

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        return (
            f"{self.done}/{self.total} conversations | {self.failed} failed | "
            f"{self.tokens:,} tokens | ${self.cost:.4f} | ETA {_clock(eta)}"
        )

    def update(self, *, failed: bool, tokens: int, cost: float) -> None:
        self.done += 1
        self.failed += int(failed)
        self.tokens += tokens
        self.cost += cost
        if self.bar:
            width = 24
            filled = int(width * self.done / max(1, self.total))
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.line()}")
            self.stream.flush()
            return
        now = time.monotonic()
        decile = (10 * self.done) // max(1, self.total)
        if decile != self._last_decile or now - self._last_line >= self.every_s or self.done == self.total:
            self._last_decile, self._last_line = decile, now
            self.stream.write(f"progress: {self.line()}\n")
            self.stream.flush()

    def close(self) -> None:
        if self.bar:
            self.stream.write("\n")
            self.stream.flush()
