"""``extraction-eval baseline show | register | promote | refresh``."""

from __future__ import annotations

from typing import Annotated

import typer

from ._app import app, new_app
from ._options import DEFAULT_GOLD, GoldOption

baseline_app = new_app("The registered baseline: alias 'baseline' of 'extraction-eval-<provider>'.")
app.add_typer(baseline_app, name="baseline")


@baseline_app.command("show")
def show_command() -> None:
    """List each provider's registered baseline and the numbers behind it."""
    from ..tracking._show import baseline_lines

    lines = baseline_lines()
    if not lines:
        typer.echo("no registered baseline; seed one: extraction-eval baseline register")
        raise typer.Exit(2)
    for line in lines:
        typer.echo(line)


@baseline_app.command("register")
def register_command(
    gold: GoldOption = DEFAULT_GOLD,
    from_rev: Annotated[
        str | None,
        typer.Option(
            "--from-rev",
            help="Read baseline_results.json at this git revision (CI: the pull request's base), not the working tree.",
        ),
    ] = None,
    if_missing: Annotated[
        bool, typer.Option("--if-missing", help="Keep a provider's existing baseline instead of failing.")
    ] = False,
    replace: Annotated[bool, typer.Option("--replace", help="Seed over an existing baseline.")] = False,
) -> None:
    """Seed the tracking server's baselines from the reviewed baseline_results.json."""
    from ..gold import read_baseline_source
    from ..tracking._baseline import register_baseline

    source = read_baseline_source(gold, from_rev)
    for item in register_baseline(source, if_missing=if_missing, replace=replace):
        typer.echo(f"{item.provider}: {item.action} version {item.version} (run {item.run_id})")


@baseline_app.command("promote")
def promote_command(
    run_id: Annotated[str, typer.Option("--run-id", help="The finished full-set run to promote.")],
    gold: GoldOption = DEFAULT_GOLD,
) -> None:
    """Move the provider's baseline alias to a run and rewrite baseline_results.json for review."""
    from ..gold import BASELINE_FILE
    from ..tracking._baseline import promote

    item, block = promote(run_id, gold / BASELINE_FILE)
    typer.echo(
        f"{item.provider}: promoted run {run_id} as version {item.version}; rewrote "
        f"{gold / BASELINE_FILE} ({block.cassette_kind.value if block.cassette_kind else '-'}, "
        f"refreshed {block.last_refreshed}). Commit it for review."
    )


@baseline_app.command("refresh")
def refresh_command(
    provider: Annotated[str, typer.Argument(help="A manual provider, e.g. vllm.")],
    run_id: Annotated[str, typer.Option("--run-id", help="The manual run whose metrics to publish.")],
    gold: GoldOption = DEFAULT_GOLD,
) -> None:
    """Publish a manual provider's run (the vLLM runbook): metrics, date; enforcement stays manual."""
    from ..gold import BASELINE_FILE
    from ..tracking._baseline import promote

    item, block = promote(run_id, gold / BASELINE_FILE, manual_refresh=True, expect_provider=provider)
    typer.echo(
        f"{item.provider}: published run {run_id} (version {item.version}); enforcement stays "
        f"{block.enforcement.value}; last_refreshed {block.last_refreshed}. Commit "
        f"{gold / BASELINE_FILE} for review."
    )
