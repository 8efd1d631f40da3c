"""``extraction-eval baseline show | register | promote | refresh``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app, new_app
from ._options import DEFAULT_GOLD, GoldOption

baseline_app = new_app(
    "The registered baselines: alias 'baseline-<gold version>' of 'extraction-eval-<provider>', one per gold version."
)
app.add_typer(baseline_app, name="baseline")

AnswersOption = Annotated[
    str | None,
    typer.Option(
        "--answers",
        help="A hand-written answer set of the gold folder: its baseline (alias baseline-<v>-hand-written), "
        "seeded from <gold>/answers/SET/baseline_results.json.",
    ),
]


def _gold_version(gold: Path) -> str:
    from ..gold import load_gold

    return load_gold(gold, require_manifest=False).version


def _baseline_folder(gold: Path, answers: str | None) -> Path:
    from ..gold import answer_set_dir

    return gold if answers is None else answer_set_dir(gold, answers)


@baseline_app.command("show")
def show_command(gold: GoldOption = DEFAULT_GOLD, answers: AnswersOption = None) -> None:
    """List each provider's registered baseline for the gold folder's version and the numbers behind it."""
    from ..tracking._show import baseline_lines

    version = _gold_version(gold)
    lines = baseline_lines(version, hand_written=answers is not None)
    if not lines:
        extra = f" --answers {answers}" if answers else ""
        typer.echo(
            f"no registered baseline for gold {version!r}; seed one: "
            f"extraction-eval baseline register --gold {gold}{extra}"
        )
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
        bool, typer.Option("--if-missing", help="Keep a provider's existing baseline for this gold version.")
    ] = False,
    replace: Annotated[bool, typer.Option("--replace", help="Seed over an existing baseline.")] = False,
    answers: AnswersOption = None,
    replay: Annotated[
        bool,
        typer.Option(
            "--replay/--seed",
            help="--replay: run the revision's own cassette eval (its code, its cassettes) into the store, check "
            "it reproduces the reviewed file, and promote that complete run; --seed: a run holding the file's "
            "metrics alone.",
        ),
    ] = False,
) -> None:
    """Register the store's baselines for the gold folder's version from its reviewed baseline_results.json."""
    from ..gold import read_baseline_source
    from ..tracking._baseline import register_baseline

    version = read_baseline_source(_baseline_folder(gold, answers), from_rev).baseline.gold_version
    if replay:
        from .._settings import project_root
        from ..pipeline._baseline_replay import replay_baseline

        items = replay_baseline(
            gold, from_rev=from_rev, if_missing=if_missing, replace=replace, answers=answers, project=project_root()
        )
    else:
        source = read_baseline_source(_baseline_folder(gold, answers), from_rev)
        items = register_baseline(source, if_missing=if_missing, replace=replace)
    for item in items:
        typer.echo(
            f"{item.provider}: {item.action} version {item.version} (run {item.run_id}) as the baseline of gold "
            f"{version!r} (alias {item.alias})"
        )


@baseline_app.command("promote")
def promote_command(
    run_id: Annotated[str, typer.Option("--run-id", help="The finished full-set run to promote.")],
    gold: GoldOption = DEFAULT_GOLD,
    reason: Annotated[
        str | None,
        typer.Option(
            "--reason",
            help="Why a run on edited cassettes, or a live run, should be the bar (refused without it); "
            "recorded on the model version.",
        ),
    ] = None,
    write_file: Annotated[
        bool,
        typer.Option(
            "--write-file/--no-write-file",
            help="Also rewrite the tracked baseline_results.json and baseline_per_conversation.jsonl (for review).",
        ),
    ] = False,
) -> None:
    """Make a run the registered baseline of its provider and gold version (numbers fixed at promotion)."""
    from ..gold import BASELINE_FILE
    from ..mlflow_names import TAG_ANSWER_SET
    from ..tracking._baseline import promote
    from ..tracking._client import open_reader

    reader = open_reader(_tracking_uri())
    try:
        found = reader.get_run(run_id)
    finally:
        reader.close()
    answers = found.tags.get(TAG_ANSWER_SET) if found is not None else None
    path = _baseline_folder(gold, answers) / BASELINE_FILE
    if answers is not None and not path.is_file():
        if write_file:
            # the set's first baseline file: the gold folder's block for this provider (gated
            # metrics, enforcement), never a rewrite of the gold folder's own (oracle) file
            from ..gold import answer_set_file_from

            answer_set_file_from(gold / BASELINE_FILE, path, found.tags.get("provider", "") if found else "")
        else:
            path = gold / BASELINE_FILE  # the gold folder's gated metrics and enforcement
    item, block = promote(run_id, path, reason=reason, write_file=write_file)
    typer.echo(
        f"{item.provider}: promoted run {run_id} as version {item.version} (alias {item.alias}; "
        f"{block.cassette_kind.value if block.cassette_kind else '-'}, refreshed {block.last_refreshed})."
    )
    if write_file:
        typer.echo(f"Rewrote {path} and its per-conversation counts: commit them for review.")
    else:
        typer.echo(
            f"{path} is unchanged: to make this the bar of fresh stores (CI seeds from the base revision's file), "
            f"run `extraction-eval baseline promote --run-id {run_id} --gold {gold} --write-file` and commit it."
        )


@baseline_app.command("migrate")
def migrate_command() -> None:
    """Give a store made before issue 22 (one alias 'baseline' per provider) its per-gold-version aliases."""
    from ..tracking._baseline import migrate_legacy

    moved = migrate_legacy()
    if not moved:
        typer.echo("nothing to migrate: no legacy 'baseline' alias without its gold version's alias.")
    for name, alias, version in moved:
        typer.echo(f"{name}: alias {alias} -> version {version} (the legacy alias 'baseline' stays)")


@baseline_app.command("refresh")
def refresh_command(
    provider: Annotated[str, typer.Argument(help="A manual provider, e.g. vllm.")],
    run_id: Annotated[str, typer.Option("--run-id", help="The manual run whose metrics to publish.")],
    gold: GoldOption = DEFAULT_GOLD,
) -> None:
    """Publish a manual provider's run (the vLLM runbook): metrics, date; enforcement stays manual."""
    from ..gold import BASELINE_FILE
    from ..tracking._baseline import promote

    item, block = promote(run_id, gold / BASELINE_FILE, manual_refresh=True, expect_provider=provider, write_file=True)
    typer.echo(
        f"{item.provider}: published run {run_id} (version {item.version}); enforcement stays "
        f"{block.enforcement.value}; last_refreshed {block.last_refreshed}. Commit "
        f"{gold / BASELINE_FILE} for review."
    )


def _tracking_uri() -> str:
    from .._settings import tracking_uri

    return tracking_uri()
