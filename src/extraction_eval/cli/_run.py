"""``extraction-eval run``: one evaluation, one MLflow run."""

from __future__ import annotations

from typing import Annotated

import typer

from ..vocab import Mode
from ._app import app
from ._options import DEFAULT_GOLD, DEFAULT_OUTPUT, GoldOption, OutputOption


@app.command("run")
def run_command(
    mode: Annotated[
        Mode,
        typer.Option(
            "--mode", help="cassette/smoke/fast replay; record, live, vllm call a provider.", case_sensitive=False
        ),
    ] = Mode.CASSETTE,
    gold: GoldOption = DEFAULT_GOLD,
    output_dir: OutputOption = DEFAULT_OUTPUT,
    max_failure_rate: Annotated[
        float | None,
        typer.Option(
            "--max-failure-rate",
            min=0.0,
            max=1.0,
            help="Mark the run FAILED (exit 1) when more conversations failed than this fraction.",
        ),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=256, help="Live calls in flight at once.")
    ] = 8,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds per provider request.")] = 60.0,
    max_retries: Annotated[
        int, typer.Option("--max-retries", min=0, max=20, help="Retries on 429, 5xx, timeouts and dropped connections.")
    ] = 4,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", min=1, help="Token budget: no new request once this many tokens were used."),
    ] = None,
    max_cost_usd: Annotated[
        float | None,
        typer.Option("--max-cost-usd", min=0.0, help="Dollar budget (estimated): no new request once reached."),
    ] = None,
    matcher: Annotated[
        str | None,
        typer.Option(
            "--matcher",
            help="name@version, a bare name (its latest), judge (recorded judgments; asked in --mode record), "
            "or reviewed (an answer set's reviewed match decisions; with --answers).",
        ),
    ] = None,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            help="Live calls: a progress bar (--progress), nothing (--no-progress); default: a bar on a terminal, "
            "plain lines otherwise.",
        ),
    ] = None,
    repeat: Annotated[
        int,
        typer.Option(
            "--repeat",
            min=1,
            help="Samples per conversation (live and vllm only): metrics over all samples, standard errors "
            "clustered by conversation, and the samples' agreement.",
        ),
    ] = 1,
    answers: Annotated[
        str | None,
        typer.Option(
            "--answers",
            help="Replay the gold folder's hand-written answer set SET (<gold>/answers/SET/) instead of its "
            "oracle cassettes; with --matcher reviewed, scored as its reviewers matched it.",
        ),
    ] = None,
    no_traces: Annotated[
        bool,
        typer.Option(
            "--no-traces",
            help="Log no per-conversation MLflow traces (by default each conversation is a trace with an "
            "assessment per memory).",
        ),
    ] = False,
) -> None:
    """Run one evaluation and log it as one MLflow run."""
    from .._settings import mask_secrets
    from ..pipeline import RunOptions, run_eval, summary_lines

    result = run_eval(
        mode,
        gold,
        output_dir,
        RunOptions(
            max_failure_rate=max_failure_rate,
            concurrency=concurrency,
            timeout_s=timeout,
            max_retries=max_retries,
            max_tokens=max_tokens,
            max_cost_usd=max_cost_usd,
            progress=progress,
            repeat=repeat,
            matcher=matcher,
            traces=not no_traces,
            answers=answers,
        ),
    )
    for line in summary_lines(result):
        typer.echo(mask_secrets(line))
    if result.comparison is not None:
        typer.echo("")
        typer.echo(result.comparison)
    typer.echo("wrote " + ", ".join(str(path) for path in result.files))
    if result.failed:
        raise typer.Exit(1)
