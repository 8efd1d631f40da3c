"""``extraction-eval gold validate | review``."""

from __future__ import annotations

from typing import Annotated

import typer

from ._app import app, new_app
from ._options import DEFAULT_GOLD, GoldOption

gold_app = new_app("Gold data: the versioned, hand-labeled conversations.")
app.add_typer(gold_app, name="gold")


@gold_app.command("validate")
def validate_command(gold: GoldOption = DEFAULT_GOLD) -> None:
    """Check every file, row, count, subset, pinned hash and cassette request; print the counts."""
    from ..gates._contract_gate import validate_gold_folder

    report = validate_gold_folder(gold)
    for line in report.lines():
        typer.echo(line)
    report.check()
    typer.echo("ok")


@gold_app.command("review")
def review_command(
    summary: Annotated[str, typer.Option("--summary", help="What the independent second read found and changed.")],
    date: Annotated[
        str | None, typer.Option("--date", help="The day the review was done (YYYY-MM-DD; default today).")
    ] = None,
    gold: GoldOption = DEFAULT_GOLD,
) -> None:
    """Record the independent label review in the manifest (label_review)."""
    from ..gold import record_label_review

    path, review = record_label_review(gold, summary, date)
    typer.echo(f"{path}: label_review recorded ({review.date}).")
