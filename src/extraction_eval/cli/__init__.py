"""The ``extraction-eval`` command line."""

from __future__ import annotations

from . import _baseline, _cassettes, _gate, _gold, _matcher, _oracle_gate, _rescore, _run  # noqa: F401  (register commands)
from ._app import app


def main() -> None:
    """Console-script entry point."""
    app(prog_name="extraction-eval")


__all__ = ["app", "main"]
