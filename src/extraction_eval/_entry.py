"""One toolkit for every entry point: the CLI, the stub provider, scripts/ and benchmarks/.

Each is a typer app made here, so all of them answer ``-h`` and ``--help`` alike, print plain
help (no rich markup, which would eat ``[tool.mutmut]``-style text) and show a user error
without a traceback. Light on purpose: importing it loads typer and nothing of the harness.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

#: ``-h`` is ``--help`` everywhere.
HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}


def entry_app(help_text: str | None = None, *, no_args_is_help: bool = False) -> typer.Typer:
    """A typer app with the project's conventions (see the module docstring)."""
    return typer.Typer(
        help=help_text,
        no_args_is_help=no_args_is_help,
        add_completion=False,
        context_settings=HELP_OPTIONS,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
    )


def run_entry(command: Callable[..., object], help_text: str | None = None, prog_name: str | None = None) -> None:
    """Run one function as a whole entry point (a script's or benchmark's ``__main__``)."""
    app = entry_app()
    app.command(help=help_text)(command)
    app(prog_name=prog_name)
