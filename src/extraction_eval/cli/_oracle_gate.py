"""``extraction-eval oracle-gate``: contract changes need live cassettes or a visible exception."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from .._exceptions import ConfigurationError
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
    from .._settings import PR_BODY_VAR
    from ..gates._gate_run import publish_summary
    from ..gates._oracle_gate import oracle_gate

    if pr_body_file is not None:
        if not pr_body_file.is_file():
            raise ConfigurationError(f"--pr-body-file {str(pr_body_file)!r} does not exist.")
        body: str | None = pr_body_file.read_text(encoding="utf-8")
    else:
        body = os.environ.get(PR_BODY_VAR)  # not stripped: only an exact line counts
    result = oracle_gate(base, gold, body)
    title = "PASS" if result.passed else "FAIL"
    markdown = f"## extraction-eval oracle gate: {title}\n\n" + "\n".join(f"- {r}" for r in result.reasons) + "\n"
    publish_summary(markdown)
    typer.echo(markdown)
    raise typer.Exit(result.exit_code)
