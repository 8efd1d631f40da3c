"""The knobs of one evaluation."""

from __future__ import annotations

from dataclasses import dataclass

from .._exceptions import ConfigurationError
from ..vocab import Mode


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
    #: Samples per conversation (``live`` and ``vllm`` only; docs/metrics.md#repeated-samples).
    repeat: int = 1
    #: ``--matcher``: a registered matcher's name (None: the default), or ``judge``.
    matcher: str | None = None
    #: ``--no-traces``: log no per-conversation traces (docs/tracking-reference.md#traces).
    traces: bool = True
    #: ``--answers SET``: replay the gold folder's realistic answer set SET instead of its oracle cassettes.
    answers: str | None = None


def check_options(mode: Mode, options: RunOptions) -> None:
    """What cannot work is refused before anything is called or logged."""
    if options.repeat < 1:
        raise ConfigurationError(f"--repeat {options.repeat!r} must be 1 or more.")
    if options.answers is not None and not mode.is_replay:
        raise ConfigurationError(
            f"--answers {options.answers!r} replays a hand-written answer set: use it with --mode cassette, "
            f"smoke or fast, not --mode {mode.value}."
        )
    if options.repeat > 1 and mode not in (Mode.LIVE, Mode.VLLM):
        what = (
            "a cassette holds one recorded sample per conversation, so `record --repeat` would have "
            "nothing to keep the other samples in"
            if mode is Mode.RECORD
            else "a replay is deterministic, so every sample would be the same cassette"
        )
        raise ConfigurationError(
            f"--repeat {options.repeat} works with --mode live and --mode vllm only: {what}. "
            "Use `run --mode live --repeat N` to measure how far samples of the model agree."
        )
