"""The root ``extraction-eval`` app: sub-apps composed with ``add_typer``, errors turned
into exit codes in one place (``_Group.invoke``)."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

from .._exceptions import ExtractionEvalError


class _Group(TyperGroup):
    """Turns every ExtractionEvalError into a one-line message and its exit code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except ExtractionEvalError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None


def new_app(help_text: str) -> typer.Typer:
    return typer.Typer(
        help=help_text,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )


app = typer.Typer(
    cls=_Group,
    help="Measure LLM memory extraction against a versioned gold set, tracked in MLflow, and gate regressions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
