"""``matcher validate``: a matcher's numbers against the reviewers' on an answer set, and the rows behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mlflow import MlflowClient
from typer.testing import CliRunner

from extraction_eval.cli import app
from extraction_eval.gold import load_gold
from extraction_eval.gold._halves import halves_document

from ..evaluation.test_answer_sets import write_set


@pytest.fixture
def answer_set(tiny_gold: Path) -> Path:
    write_set(tiny_gold)
    doc = halves_document(load_gold(tiny_gold, require_manifest=False))
    (tiny_gold / "answers" / "halves.json").write_text(json.dumps(doc))
    return tiny_gold


def test_validate_against_the_reviewers(answer_set: Path, local_store: str, tmp_path: Path) -> None:
    out = tmp_path / "validity"
    args = ["matcher", "validate", "--gold", str(answer_set), "--answers", "blind-a", "--half", "all"]
    result = CliRunner().invoke(app, [*args, "--output-dir", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "validity.json").read_text())
    rows = {r["metric"]: r for r in report["rows"]}
    # the reviewers: 6 pairs of 8 expected and 8 answered (tests/evaluation/test_answer_sets.py)
    assert rows["micro/recall"]["reviewed"] == pytest.approx(6 / 8)
    # macro recall by hand: factual 2/3, procedural 1/1, preference 1/1, behavioral 1/2, episodic 1/2
    assert rows["macro/recall"]["reviewed"] == pytest.approx((2 / 3 + 1 + 1 + 0.5 + 0.5) / 5)
    # fact-cover@2 refuses t03 (2 of 4 words) and t07-m1 (a step missing), and pairs the merged
    # t07 memory with t07-m2 instead: 6 - 2 + 1 = 5 pairs
    flips = sorted((f["memory_id"], f["side"]) for f in report["flips"])
    assert flips == [("t03-m1", "reviewers only"), ("t07-m1", "reviewers only"), ("t07-m2", "matcher only")]
    assert rows["micro/recall"]["matcher"] == pytest.approx(5 / 8)
    assert rows["micro/recall"]["difference"] == pytest.approx(5 / 8 - 6 / 8)
    low, high = rows["micro/recall"]["ci_low"], rows["micro/recall"]["ci_high"]
    assert low < rows["micro/recall"]["difference"] < high
    assert rows["micro/recall"]["within_goal"] is False and rows["recall/preference"]["within_goal"] is False
    assert report["matcher"] == "fact-cover@2" and report["reviewed"] == "reviewed@1"
    # by hand: factual (2/3 both), behavioral and episodic (1/2 both) agree; the other headline rows do not
    assert result.output.splitlines()[-1].startswith(
        "6 headline metric(s) more than 2 points from the reviewers: micro/precision, micro/recall, "
        "macro/precision, macro/recall, recall/procedural, recall/preference. 3 row(s) behind the difference"
    )
    md = (out / "validity.md").read_text()
    assert "| t03 | t03-m1 | reviewers only |" in md and "covers 2 of 4 words" in md
    runs = MlflowClient(local_store).search_runs(
        [MlflowClient(local_store).get_experiment_by_name("extraction-eval-matcher-validity").experiment_id]
    )
    assert len(runs) == 1
    assert runs[0].data.metrics["reviewed/micro/recall"] == pytest.approx(0.75)
    assert runs[0].data.tags["answer_set"] == "blind-a" and runs[0].data.tags["run_kind"] == "matcher_validity"


def test_validate_takes_one_half(answer_set: Path, tmp_path: Path) -> None:
    halves = json.loads((answer_set / "answers" / "halves.json").read_text())
    result = CliRunner().invoke(
        app,
        [
            "matcher",
            "validate",
            "--gold",
            str(answer_set),
            "--answers",
            "blind-a",
            "--no-log",
            "--output-dir",
            str(tmp_path / "v"),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "v" / "validity.json").read_text())
    assert report["half"] == "heldout" and report["conversations"] == len(halves["heldout"]) == 4


def test_unknown_half(answer_set: Path) -> None:
    result = CliRunner().invoke(
        app, ["matcher", "validate", "--gold", str(answer_set), "--answers", "blind-a", "--half", "x"]
    )
    assert result.exit_code == 2
    assert "--half 'x' is not a half" in result.output


def test_reviewed_only_scores_the_decided_conversations_and_says_so(answer_set: Path, tmp_path: Path) -> None:
    """A review in progress: matches.jsonl decides 5 of the 8 conversations. Without
    --reviewed-only a pair without a decision fails closed; with it, the 5 are scored and the
    title says 5 of the half's 8."""
    matches = answer_set / "answers" / "blind-a" / "matches.jsonl"
    rows = matches.read_text().splitlines()
    kept = [line for line in rows if json.loads(line)["conversation_id"] not in {"t01", "t03", "t07"}]
    matches.write_text("\n".join(kept) + "\n")
    args = ["matcher", "validate", "--gold", str(answer_set), "--answers", "blind-a", "--half", "all", "--no-log"]
    refused = CliRunner().invoke(app, [*args, "--output-dir", str(tmp_path / "a")])
    assert refused.exit_code == 2 and "no reviewed decision for the pair" in refused.output, refused.output
    result = CliRunner().invoke(app, [*args, "--reviewed-only", "--output-dir", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "b" / "validity.json").read_text())
    assert report["conversations"] == 5 and report["conversations_in_half"] == 8
    assert "(reviewed conversations only: 5 of the half's 8)" in result.output
    # the reviewers' recall over t02, t04, t05, t06, t08 (tests/evaluation/test_answer_sets.py's set)
    assert {f["memory_id"].split("-")[0] for f in report["flips"]} <= {"t02", "t04", "t05", "t06", "t08"}


REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("gold", "matcher", "record", "metrics"),
    [  # gold v1 has no security slice: 3 rates fewer
        ("v2", "fact-cover@2", "v2-heldout-fact-cover-2.md", 25),
        ("v1", "fact-cover@2", "v1-heldout-fact-cover-2.md", 22),
        ("v2", "fact-cover-lr@1", "v2-heldout-fact-cover-lr-1.md", 25),
        ("v2", "fact-cover-lr@2", "v2-heldout-fact-cover-lr-2.md", 25),
    ],
)
def test_the_published_held_out_tables_are_the_command_s_output(
    gold: str, matcher: str, record: str, metrics: int, tmp_path: Path
) -> None:
    """docs/matcher.md's metric-level table and the record's held-out tables are what `matcher
    validate` prints on the committed answer set and decisions: a change to the matcher, the
    answers or the decisions that moves a figure fails here until the docs are re-run."""
    out = tmp_path / "validity"
    args = ["matcher", "validate", "--gold", str(REPO / "gold" / gold), "--answers", "blind-a", "--matcher", matcher]
    result = CliRunner().invoke(app, [*args, "--no-log", "--output-dir", str(out)])
    assert result.exit_code == 0, result.output
    produced = (out / "validity.md").read_text(encoding="utf-8")
    rows = [line for line in produced.splitlines() if line.startswith("| **") or line.startswith("| ")]
    metric_rows = [line for line in rows if line.split("|")[1].strip().strip("*").split("/")[0] in METRIC_HEADS]
    assert len(metric_rows) == metrics
    recorded = (REPO / "docs" / "answers-record" / "blind-a" / "validity" / record).read_text(encoding="utf-8")
    assert produced == recorded
    if (gold, matcher) == ("v2", "fact-cover@2"):  # the table docs/matcher.md publishes
        published = (REPO / "docs" / "matcher.md").read_text(encoding="utf-8")
        missing = [row for row in metric_rows if row not in published]
        assert missing == []


METRIC_HEADS = {
    "micro", "macro", "recall", "precision", "strict", "category_accuracy", "temporal_accuracy",
    "multilabel", "supersession", "negatives", "security",
}  # fmt: skip
