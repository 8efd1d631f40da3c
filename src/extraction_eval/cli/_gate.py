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
    from .._settings import next_step_line
    from ..gates._gate_run import baseline_file_note, render_text, run_gate

    result, _ = run_gate(run_id, output_dir, gold)
    typer.echo(render_text(result, baseline_note=baseline_file_note(gold, result.baseline)), nl=False)
    typer.echo(
        f"wrote {output_dir / 'gate.md'} (the report: evidence, paired 95% intervals, resolution) and "
        f"{output_dir / 'gate.json'}; exit {result.exit_code} ({result.verdict.value})"
    )
    typer.echo(next_step_line(output_dir))
    raise typer.Exit(result.exit_code)
