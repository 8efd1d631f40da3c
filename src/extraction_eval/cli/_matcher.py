"""``extraction-eval matcher calibrate``: a matcher's agreement with the hand-labeled pairs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app, new_app
from ._options import DEFAULT_GOLD, GoldOption

matcher_app = new_app("Matchers: when a predicted memory states the same fact as an expected one.")
app.add_typer(matcher_app, name="matcher")

PairsOption = Annotated[
    Path,
    typer.Option("--pairs", help="The calibration folder (tuning.jsonl, heldout.jsonl).", file_okay=False),
]


@matcher_app.command("calibrate")
def calibrate_command(
    matcher: Annotated[
        str | None, typer.Option("--matcher", help="name@version or a bare name (its latest); default: the default.")
    ] = None,
    pairs: PairsOption = Path("gold/matcher-calibration"),
    half: Annotated[
        str, typer.Option("--half", help="heldout (the reported figures) or tuning (for development).")
    ] = "heldout",
    gold: GoldOption = DEFAULT_GOLD,
) -> None:
    """Acceptance, refusal, precision, F1 and kappa with 95% intervals, by kind and category; then the misses."""
    from .._exceptions import ConfigurationError
    from ..evaluation._judging import JUDGMENTS_FILE, choose_matcher
    from ..gold import load_gold
    from ..gold._calibration import Half, load_pairs
    from ..scoring._calibration import LabeledPair, calibrate

    try:
        chosen_half = Half(half)
    except ValueError:
        raise ConfigurationError(f"--half {half!r} is not a half; use one of {[h.value for h in Half]!r}.") from None
    command = f"extraction-eval matcher record-judgments --pairs {pairs} --half {half}"
    chosen = choose_matcher(matcher, Path(pairs) / JUDGMENTS_FILE, command)
    data = load_gold(gold, require_manifest=False)
    rows = load_pairs(pairs, chosen_half, data.memories)
    labeled = [
        LabeledPair(
            pair_id=p.pair_id,
            cluster=p.memory_id,
            gold=p.gold,
            candidate=p.candidate,
            same_fact=p.same_fact,
            kind=p.kind.value,
            categories=tuple(c.value for c in p.categories),
        )
        for p in rows
    ]
    report = calibrate(chosen, labeled)
    for line in render_report(report, Path(pairs) / chosen_half.file_name):
        typer.echo(line)


@matcher_app.command("record-judgments")
def record_judgments_command(
    pairs: PairsOption = Path("gold/matcher-calibration"),
    half: Annotated[str, typer.Option("--half", help="heldout or tuning.")] = "heldout",
    gold: GoldOption = DEFAULT_GOLD,
) -> None:
    """Ask the judge model (OPENAI_API_KEY, EXTRACTION_EVAL_JUDGE_MODEL) about every calibration pair
    with no recorded judgment; store them in the pairs folder's judgments.jsonl."""
    from .._exceptions import ConfigurationError
    from ..evaluation._judging import JUDGMENTS_FILE, record_judgments
    from ..gold import load_gold
    from ..gold._calibration import Half, load_pairs

    try:
        chosen_half = Half(half)
    except ValueError:
        raise ConfigurationError(f"--half {half!r} is not a half; use one of {[h.value for h in Half]!r}.") from None
    rows = load_pairs(pairs, chosen_half, load_gold(gold, require_manifest=False).memories)
    command = f"extraction-eval matcher record-judgments --pairs {pairs} --half {half}"
    asked, failed = record_judgments([(p.gold, p.candidate) for p in rows], Path(pairs) / JUDGMENTS_FILE, command)
    typer.echo(
        f"asked the judge about {asked} pair(s) ({failed} without a usable answer); {Path(pairs) / JUDGMENTS_FILE}"
    )


@matcher_app.command("validate")
def validate_command(
    answers: Annotated[
        str,
        typer.Option("--answers", help="The hand-written answer set (<gold>/answers/SET/) with reviewed decisions."),
    ],
    matcher: Annotated[
        str | None, typer.Option("--matcher", help="name@version or a bare name (its latest); default: the default.")
    ] = None,
    half: Annotated[
        str, typer.Option("--half", help="heldout (the reported figures), tuning (for development) or all.")
    ] = "heldout",
    gold: GoldOption = DEFAULT_GOLD,
    output_dir: Annotated[
        Path, typer.Option("--output-dir", help="Where validity.md and validity.json go.", file_okay=False)
    ] = Path("output/validity"),
    log: Annotated[
        bool,
        typer.Option("--log/--no-log", help="Log the table as a run in experiment extraction-eval-matcher-validity."),
    ] = True,
    reviewed_only: Annotated[
        bool,
        typer.Option(
            "--reviewed-only",
            help="Score only the half's conversations that matches.jsonl decides (a review still in progress); "
            "the table's title says how many of the half that is.",
        ),
    ] = False,
) -> None:
    """A matcher's metric-level validity: each metric under the matcher and under the reviewers' decisions,
    their difference with a paired 95% interval clustered by conversation, and the rows behind it."""
    from .._exceptions import ConfigurationError
    from ..gold._halves import Half
    from ..pipeline._validity import validate_matcher

    try:
        chosen_half = Half(half)
    except ValueError:
        raise ConfigurationError(f"--half {half!r} is not a half; use one of {[h.value for h in Half]!r}.") from None
    result = validate_matcher(
        gold, answers, output_dir, matcher=matcher, half=chosen_half, log=log, reviewed_only=reviewed_only
    )
    typer.echo(result.markdown.split("\n## ", 1)[0].rstrip())
    misses = result.report.headline_misses
    typer.echo("")
    typer.echo(
        f"{len(misses)} headline metric(s) more than 2 points from the reviewers"
        + (f": {', '.join(r.metric for r in misses)}" if misses else "")
        + f". {len(result.report.flips)} row(s) behind the difference in {result.files[0]}"
        + (f"; logged as run {result.run_id}." if result.run_id else ".")
    )


def render_report(report: object, path: Path) -> list[str]:
    """The report as text: a header, three tables, the misses."""
    from ..scoring._calibration import CalibrationReport, Figures
    from ..scoring._intervals import Estimate

    assert isinstance(report, CalibrationReport)

    def cell(e: Estimate) -> str:
        if e.value is None:
            return "-"
        if e.low is None or e.high is None:
            return f"{e.value:.3f}"
        return f"{e.value:.3f} [{e.low:.3f}, {e.high:.3f}]"

    header = ("group", "pairs", "rows", "same", "diff", "acceptance", "refusal", "precision", "F1", "kappa")

    def row(name: str, f: Figures) -> tuple[str, ...]:
        return (
            name,
            str(f.pairs),
            str(f.clusters),
            str(f.true_positive + f.false_negative),
            str(f.true_negative + f.false_positive),
            cell(f.acceptance),
            cell(f.refusal),
            cell(f.precision),
            cell(f.f1),
            cell(f.kappa),
        )

    def table(title: str, rows: list[tuple[str, ...]]) -> list[str]:
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

        def line(cells: tuple[str, ...]) -> str:
            padded = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
            return "  ".join(padded)

        return ["", title, line(header), *(line(r) for r in rows)]

    o = report.overall
    lines = [
        f"matcher {report.matcher} on {path}: {o.pairs} pairs over {o.clusters} gold rows",
        "95% intervals: Wilson for acceptance and refusal; for precision, F1 and kappa a percentile bootstrap "
        f"over gold rows ({report.resamples} resamples, seed {report.seed})",
    ]
    lines += table("overall", [row("all", o)])
    lines += table("by pair kind", [row(k, f) for k, f in report.by_kind.items()])
    lines += table("by category", [row(k, f) for k, f in report.by_category.items()])
    lines += ["", f"misses ({len(report.misses)}): pair, kind, label, similarity, the rule that decided"]
    for d in report.misses:
        label = "same fact, refused" if d.pair.same_fact else "different fact, accepted"
        lines.append(f"  {d.pair.pair_id}  {d.pair.kind}  {label}  {d.similarity:.3f}  {d.rule}")
        lines.append(f"      gold:      {d.pair.gold}")
        lines.append(f"      candidate: {d.pair.candidate}")
    return lines
