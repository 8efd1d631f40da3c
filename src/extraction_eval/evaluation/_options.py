"""The knobs of one evaluation."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunOptions:
    """Knobs of live calls and the failure bound (replay ignores the live ones)."""

    max_failure_rate: float | None = None
    concurrency: int = 8
    timeout_s: float = 60.0
    max_retries: int = 4
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    progress: bool | None = None
    #: ``--matcher``: a registered matcher's name (None: the default), or ``judge``.
    matcher: str | None = None
