"""The ``extraction-eval`` command line."""

from __future__ import annotations

from . import (  # noqa: F401  (register commands)
    _baseline,
    _cassettes,
    _gate,
    _gold,
    _matcher,
    _oracle_gate,
    _rescore,
    _run,
    _sensitivity,
)
from ._app import app


def main() -> None:
    """Console-script entry point."""
    app(prog_name="extraction-eval")


__all__ = ["app", "main"]
