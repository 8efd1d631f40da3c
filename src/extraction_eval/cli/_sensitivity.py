"""``extraction-eval sensitivity``: seeded known mutations; every metric must move by its computed amount."""

from __future__ import annotations

from typing import Annotated

import typer

from ._app import app
from ._options import DEFAULT_GOLD, DEFAULT_OUTPUT, GoldOption, OutputOption


@app.command("sensitivity")
def sensitivity_command(
    gold: GoldOption = DEFAULT_GOLD,
    output_dir: OutputOption = DEFAULT_OUTPUT,
    seed: Annotated[int, typer.Option("--seed", help="Picks which memories and conversations are mutated.")] = 20261203,
    log: Annotated[
        bool, typer.Option("--log/--no-log", help="Log the table as a run in experiment extraction-eval-sensitivity.")
    ] = True,
) -> None:
    """The scorer's self-test (exit 0 every check held, 1 a metric did not move as computed)."""
    from ..pipeline._sensitivity import run_sensitivity_test

    result = run_sensitivity_test(gold, output_dir, seed=seed, log=log)
    typer.echo(result.markdown)
    where = f"; logged as run {result.run_id}" if result.run_id else ""
    typer.echo("wrote " + ", ".join(str(p) for p in result.files) + where)
    raise typer.Exit(0 if result.report.ok else 1)
