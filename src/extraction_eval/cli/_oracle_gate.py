"""``extraction-eval oracle-gate``: contract changes need live cassettes or a visible exception."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._options import DEFAULT_GOLD, GoldOption


@app.command("oracle-gate")
def oracle_gate_command(
    base: Annotated[str, typer.Option("--base", help="The pull request's base revision.")],
    pr_body_file: Annotated[
        Path | None, typer.Option("--pr-body-file", help="File holding the pull request body.", dir_okay=False)
    ] = None,
    gold: GoldOption = DEFAULT_GOLD,
) -> None:
    """Fail a contract change that keeps oracle-aligned cassettes without the exception token."""
    from ..gates._oracle_gate import run_oracle_gate

    result, markdown = run_oracle_gate(base, gold, pr_body_file)
    typer.echo(markdown)
    raise typer.Exit(result.exit_code)
