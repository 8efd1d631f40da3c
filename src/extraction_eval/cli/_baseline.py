"""``extraction-eval baseline show | register | promote | refresh``."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from .._exceptions import GoldDataError
from ._app import app, new_app
from ._options import DEFAULT_GOLD, GoldOption

baseline_app = new_app("The registered baseline: alias 'baseline' of 'extraction-eval-<provider>'.")
app.add_typer(baseline_app, name="baseline")


@baseline_app.command("show")
def show_command() -> None:
    """List each provider's registered baseline and the numbers behind it."""
    from .._settings import tracking_uri
    from ..evidence import evidence_line
    from ..tracking._client import open_reader

    reader = open_reader(tracking_uri())
    try:
        baselines = reader.baselines()
    finally:
        reader.close()
    if not baselines:
        typer.echo("no registered baseline; seed one: extraction-eval baseline register")
        raise typer.Exit(2)
    for b in sorted(baselines, key=lambda b: b.provider):
        t = b.tags
        typer.echo(
            f"{b.provider}: {b.model_name} v{b.version} run {b.run_id} | model {t.get('model')} | "
            f"enforcement {b.enforcement} | gold {t.get('gold_version')} | subset "
            f"{t.get('subset')} | matcher {t.get('matcher') or '-'} | source "
            f"{t.get('baseline_source')} | refreshed {t.get('last_refreshed') or '-'}"
        )
        typer.echo(f"  {evidence_line(t.get('cassette_kind'), model=t.get('model'))}")
        metrics = b.measured_metrics
        if metrics is None:
            typer.echo("  metrics: null (not measured yet)")
            continue
        for key in b.gated_metrics:
            value = metrics.get(key)
            typer.echo(f"  {key:<24} {'missing' if value is None else f'{value:.4f}'}")


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
    from .._git import git_state, resolve_rev, show_file
    from .._settings import project_root, tracking_uri
    from ..gold import BASELINE_FILE, BaselineFile
    from ..gold._load import parse_document
    from ..tracking._baseline import register_from_file

    path = gold / BASELINE_FILE
    if from_rev is not None:
        root = project_root()
        sha = resolve_rev(root, from_rev)
        data = show_file(root, sha, path)
        if data is None:
            raise GoldDataError(
                f"{path} does not exist at revision {from_rev!r} ({sha[:12]}); a fresh server is "
                "seeded from the base revision's file: add it there first, or omit --from-rev "
                "for a local store."
            )
        try:
            baseline = BaselineFile.model_validate(json.loads(data))
        except (ValueError, TypeError) as exc:
            raise GoldDataError(f"{path} at {from_rev!r}: {exc}") from None
        origin, rev = f"{path}@{sha}", sha
    else:
        baseline = parse_document(path, BaselineFile, what="baseline file")
        # The working tree's file: record the commit it sits on, and whether the tree differs from it.
        state = git_state(project_root())
        if state.commit is None:
            origin, rev = f"{path} (working tree, no git repository)", "working-tree"
        else:
            rev = f"working-tree@{state.commit}" + ("+dirty" if state.dirty else "")
            origin = f"{path} ({rev})"
    for item in register_from_file(
        tracking_uri(), baseline, origin=origin, source_rev=rev, if_missing=if_missing, replace=replace
    ):
        typer.echo(f"{item.provider}: {item.action} version {item.version} (run {item.run_id})")


@baseline_app.command("promote")
def promote_command(
    run_id: Annotated[str, typer.Option("--run-id", help="The finished full-set run to promote.")],
    gold: GoldOption = DEFAULT_GOLD,
) -> None:
    """Move the provider's baseline alias to a run and rewrite baseline_results.json for review."""
    from .._settings import tracking_uri
    from ..gold import BASELINE_FILE
    from ..tracking._baseline import promote

    item, block = promote(tracking_uri(), run_id, gold / BASELINE_FILE)
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
    from .._settings import tracking_uri
    from ..gold import BASELINE_FILE
    from ..tracking._baseline import promote

    item, block = promote(tracking_uri(), run_id, gold / BASELINE_FILE, manual_refresh=True, expect_provider=provider)
    typer.echo(
        f"{item.provider}: published run {run_id} (version {item.version}); enforcement stays "
        f"{block.enforcement.value}; last_refreshed {block.last_refreshed}. Commit "
        f"{gold / BASELINE_FILE} for review."
    )
