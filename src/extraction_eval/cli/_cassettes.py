"""``extraction-eval cassettes oracle``."""

from __future__ import annotations

from typing import Annotated

import typer

from ._app import app, new_app
from ._options import DEFAULT_GOLD, GoldOption

cassettes_app = new_app("Cassettes: recorded provider answers, replayed for free.")
app.add_typer(cassettes_app, name="cassettes")


@cassettes_app.command("oracle")
def oracle_command(gold: GoldOption = DEFAULT_GOLD) -> None:
    """Write oracle-aligned cassettes (the expected JSON) and the manifest for a gold folder."""
    from ..cassettes import write_oracle_cassettes

    result = write_oracle_cassettes(gold)
    m = result.manifest
    typer.echo(
        f"gold {m.gold_version!r}: {result.cassettes_written} cassette(s) written, "
        f"{result.cassettes_kept} unchanged; manifest "
        f"{'written' if result.manifest_written else 'unchanged'} "
        f"(kind {m.cassette_kind.value}, prompt {m.prompt_sha256[:12]}…, schema "
        f"{m.schema_sha256[:12]}…, smoke {len(m.subsets.smoke)}, fast {len(m.subsets.fast)})."
    )
    typer.echo("Oracle-aligned cassettes embed the expected JSON: they test the plumbing, not the model.")


@cassettes_app.command("answers")
def answers_command(
    gold: GoldOption = DEFAULT_GOLD,
    answer_set: Annotated[
        str, typer.Option("--set", help="The answer set: the folder <gold>/answers/SET/ holding answers.jsonl.")
    ] = ...,  # type: ignore[assignment]
) -> None:
    """Write a hand-written answer set's cassettes and manifest from its answers.jsonl."""
    from ..cassettes._answers import write_answer_cassettes

    result = write_answer_cassettes(gold, answer_set)
    m = result.manifest
    writers = ", ".join(f"{w}: {n}" for w, n in result.writers.items())
    typer.echo(
        f"gold {m.gold_version!r}, answer set {answer_set!r}: {result.cassettes_written} cassette(s) written, "
        f"{result.cassettes_kept} unchanged; manifest {'written' if result.manifest_written else 'unchanged'} "
        f"(kind {m.cassette_kind.value}, model {m.model}); writers {writers}."
    )
    typer.echo("Hand-written answers, written blind to the gold rows: they measure the harness, not a model.")
