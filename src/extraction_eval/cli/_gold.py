"""``extraction-eval gold validate``."""

from __future__ import annotations

from typing import Annotated

import typer

from .._exceptions import GoldDataError
from ._app import app, new_app
from ._options import DEFAULT_GOLD, GoldOption

gold_app = new_app("Gold data: the versioned, hand-labeled conversations.")
app.add_typer(gold_app, name="gold")


@gold_app.command("validate")
def validate_command(gold: GoldOption = DEFAULT_GOLD) -> None:
    """Check every file, row, count, subset, pinned hash and cassette request; print the counts."""
    from ..gates._contract_gate import replay_mode_problems
    from ..gold import BASELINE_FILE, PINNED_GOLD, Problem, ProblemKind, load_baseline_file, load_gold
    from ..gold._check import read_cassettes

    data = load_gold(gold)
    assert data.manifest is not None
    cassettes = read_cassettes(data, data.manifest)
    problems, _ = replay_mode_problems(data, data.manifest, cassettes)  # what a replay would refuse
    baseline_path = gold / BASELINE_FILE
    if baseline_path.exists():
        baseline = load_baseline_file(baseline_path)
        if baseline.gold_version != data.version:
            problems.append(
                Problem(
                    ProblemKind.DATA,
                    f"{baseline_path}: field 'gold_version' is {baseline.gold_version!r} but the "
                    f"folder holds gold {data.version!r}; a baseline names the version it measured.",
                )
            )
    stats = data.stats()
    typer.echo(f"gold {data.version!r} at {gold}")
    width = max(len(k) for k in stats)
    for key, value in stats.items():
        typer.echo(f"  {key:<{width}}  {value}")
    typer.echo(f"  {'cassettes':<{width}}  {len(cassettes)} ({data.manifest.cassette_kind.value})")
    typer.echo(f"  {'subset smoke':<{width}}  {len(data.manifest.subsets.smoke)}")
    typer.echo(f"  {'subset fast':<{width}}  {len(data.manifest.subsets.fast)}")
    pinned = "pinned" if data.version in PINNED_GOLD else "not pinned (no baseline yet)"
    typer.echo(f"  {'frozen inputs':<{width}}  {pinned}")
    if problems:
        raise GoldDataError(f"{len(problems)} problem(s):\n" + "\n".join(p.message for p in problems))
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
    import datetime as dt

    from .._jsonio import write_json
    from ..gold import MANIFEST_FILE, LabelReview, load_manifest

    path = gold / MANIFEST_FILE
    manifest = load_manifest(path)
    try:
        review = LabelReview(date=date or dt.date.today().isoformat(), summary=summary)
    except ValueError as exc:
        raise GoldDataError(f"--date {date!r} / --summary: {exc}. Use YYYY-MM-DD and a non-empty summary.") from None
    write_json(path, manifest.model_copy(update={"label_review": review}).model_dump(mode="json"))
    typer.echo(f"{path}: label_review recorded ({review.date}).")
