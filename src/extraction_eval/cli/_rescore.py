"""``extraction-eval rescore``: a run's stored responses scored again, as a new run, with no call."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._options import DEFAULT_GOLD, DEFAULT_OUTPUT, GoldOption, OutputOption


@app.command("rescore")
def rescore_command(
    run_id: Annotated[str, typer.Option("--run-id", help="The run whose stored responses are scored again.")],
    matcher: Annotated[
        str | None,
        typer.Option(
            "--matcher",
            help="name@version or a bare name (its latest); judge; reviewed (the run's answer set's reviewed "
            "decisions); default: the default.",
        ),
    ] = None,
    gold: GoldOption = DEFAULT_GOLD,
    output_dir: Annotated[
        Path | None,
        typer.Option(
            "--output-dir",
            help="Where the rescored run's files go (default output/rescore-<run id>: never the eval's own "
            "folder, so a plain `gate` still judges the eval run).",
            file_okay=False,
        ),
    ] = None,
    no_traces: Annotated[
        bool,
        typer.Option(
            "--no-traces",
            help="Log no per-conversation MLflow traces (by default each conversation is a trace with an "
            "assessment per memory, as on a run).",
        ),
    ] = False,
) -> None:
    """Score a run's stored raw responses again (no provider call); log a new run tagged rescored_from."""
    from ..evaluation._judging import JUDGMENTS_FILE, choose_matcher
    from ..evaluation._reviewing import is_reviewed
    from ..pipeline._rescore import rescore_run
    from ..scoring import Matcher

    command = f"extraction-eval run --mode record --matcher judge --gold {gold}"
    # reviewed: built from the source run's answer set once its stored responses are read
    chosen: Matcher | str = (
        matcher
        if matcher is not None and is_reviewed(matcher)
        else choose_matcher(matcher, gold / JUDGMENTS_FILE, command)
    )
    target = output_dir if output_dir is not None else DEFAULT_OUTPUT / f"rescore-{run_id}"
    result = rescore_run(run_id, chosen, gold, target, traces=not no_traces, source_folders=(DEFAULT_OUTPUT,))
    m = result.metrics
    typer.echo(
        f"run {result.logged.run_id} in experiment {result.logged.experiment_name!r}: run {result.source_run_id} "
        f"rescored under matcher {result.matcher} from {result.responses_source} (no provider call)"
    )
    for key in ("macro/precision", "macro/recall", "macro/f1", "strict/recall"):
        if key in m:
            typer.echo(f"{key:<16} {m[key]:.4f}")
    typer.echo("wrote " + ", ".join(str(path) for path in result.files))
    typer.echo(
        f"A plain `extraction-eval gate` still judges the eval run in {DEFAULT_OUTPUT}/. To gate this rescored run "
        f"on purpose: extraction-eval gate --run-id {result.logged.run_id} --output-dir {target} --gold {gold}"
    )


@app.command("diff")
def diff_command(
    run_a: Annotated[str, typer.Argument(help="The first run's id (A).")],
    run_b: Annotated[str, typer.Argument(help="The second run's id (B).")],
    output_dir: OutputOption = DEFAULT_OUTPUT,
) -> None:
    """Per metric, the expected memories that flipped between matched and unmatched from A to B."""
    from ..gates._diff import diff_runs

    _, markdown = diff_runs(run_a, run_b, (output_dir,))
    typer.echo(markdown, nl=False)
