"""``extraction-eval gate``: the regression gate (exit 0 pass, 1 regression, 2 could not evaluate)."""

from __future__ import annotations

from typing import Annotated

import typer

from ._app import app
from ._options import DEFAULT_GOLD, DEFAULT_OUTPUT, GoldOption, OutputOption


@app.command("gate")
def gate_command(
    run_id: Annotated[
        str | None,
        typer.Option("--run-id", help="Judge this run (default: output/run.json, else the newest full run of HEAD)."),
    ] = None,
    output_dir: OutputOption = DEFAULT_OUTPUT,
    gold: GoldOption = DEFAULT_GOLD,
) -> None:
    """Judge one run against its provider's registered baseline."""
    from ..gates._gate_run import run_gate

    result, markdown = run_gate(run_id, output_dir, gold)
    typer.echo(markdown)
    typer.echo(f"wrote {output_dir / 'gate.md'}; exit {result.exit_code} ({result.verdict.value})")
    raise typer.Exit(result.exit_code)
