"""rescore and diff: a run's stored responses scored again under another matcher (no provider
call, a new run tagged rescored_from), never gated against a baseline of the old matcher, and
the memories that flipped listed with both texts, the similarity and the rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mlflow import MlflowClient
from typer.testing import CliRunner

from extraction_eval.cli import app
from extraction_eval.gold import ProviderBaseline
from extraction_eval.pipeline._rescore import comparable_baseline

from ..helpers import mutate_cassettes

#: t02's expected memory is "User lives in Lisbon."; this rewording keeps its fact.
REWORDED = "The user is living in Lisbon now."


def reword_t02(row: dict[str, Any]) -> dict[str, Any] | None:
    if row["conversation_id"] != "t02":
        return None
    body = json.loads(row["response"])
    body["memories"][0]["content"] = REWORDED
    return {**row, "response": json.dumps(body)}


def run_id(folder: Path) -> str:
    return str(json.loads((folder / "run.json").read_text())["run_id"])


def test_rescore_diff_and_the_gate_refuses_another_matcher(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    runner = CliRunner()
    mutate_cassettes(tiny_gold, reword_t02)
    first = tmp_path / "first"
    result = runner.invoke(app, ["run", "--gold", str(tiny_gold), "--output-dir", str(first)])
    assert result.exit_code == 0, result.output
    source = run_id(first)
    # every run stores its raw responses, in the folder and as an artifact
    rows = [json.loads(line) for line in (first / "responses.jsonl").read_text().splitlines()]
    assert [r["conversation_id"] for r in rows] == [f"t0{i}" for i in range(1, 9)]
    assert json.loads(rows[1]["response"])["memories"][0]["content"] == REWORDED
    assert rows[1]["sample"] == 0 and rows[1]["transport_failure"] is None
    client = MlflowClient(local_store)
    assert "responses.jsonl" in {a.path for a in client.list_artifacts(source)}
    assert client.get_run(source).data.metrics["micro/recall"] == 1.0  # fact-cover@2 accepts the rewording
    promoted = runner.invoke(
        app, ["baseline", "promote", "--run-id", source, "--gold", str(tiny_gold), "--reason", "the reworded answers"]
    )
    assert promoted.exit_code == 0, promoted.output

    # no cassette, no provider: the stored responses are all rescore needs
    (tiny_gold / "openai_cassettes.jsonl").unlink()
    again = tmp_path / "again"
    result = runner.invoke(
        app,
        [
            "rescore",
            "--run-id",
            source,
            "--matcher",
            "keyed-dice@3",
            "--gold",
            str(tiny_gold),
            "--output-dir",
            str(again),
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"from run {source} artifact responses.jsonl (no provider call)" in result.output
    rescored = run_id(again)
    assert rescored != source
    old, new = client.get_run(source).data, client.get_run(rescored).data
    assert new.tags["rescored_from"] == source and new.tags["matcher"] == "keyed-dice@3"
    for tag in ("gold_version", "prompt_sha256", "schema_sha256", "cassette_kind", "provider", "model", "mode"):
        assert new.tags[tag] == old.tags[tag], tag
    for tag in ("subset", "enforcement", "mlflow.source.git.commit", "git_dirty"):
        assert new.tags.get(tag) == old.tags.get(tag), tag
    assert new.params["matcher.heldout.acceptance"] == "0.592"  # keyed-dice@3's held-out figures
    # keyed-dice@3 refuses the rewording: 7 of the 8 expected memories matched, 7 of 8 predictions
    assert new.metrics["micro/recall"] == pytest.approx(7 / 8)
    assert new.metrics["micro/precision"] == pytest.approx(7 / 8)
    assert new.metrics["recall/factual"] == pytest.approx(2 / 3)  # t01, t02, t07-m2: t02 lost
    assert json.loads((again / "run.json").read_text())["tags"]["rescored_from"] == source
    # a rescored run has what a run has in the UI: a trace per conversation, assessed under the new
    # matcher (t02 is the one partial conversation: its rewording is missed and spurious), and the
    # plots, the per-category one without the fact-cover baseline's bars (another matcher)
    assert new.tags["traces"] == "8"
    experiment = client.get_run(rescored).info.experiment_id
    traces = client.search_traces(locations=[experiment], run_id=rescored, max_results=100)
    assert sorted(t.info.tags["conversation_id"] for t in traces) == [f"t0{i}" for i in range(1, 9)]
    missed = client.search_traces(
        locations=[experiment], run_id=rescored, filter_string="feedback.outcome = 'missed'", max_results=100
    )
    assert [t.info.tags["conversation_id"] for t in missed] == ["t02"]
    assert {a.path for a in client.list_artifacts(rescored, "plots")} == {
        "plots/per_category.png",
        "plots/category_confusion.png",
        "plots/temporal_confusion.png",
    }

    # from an output folder whose run.json names the run: the same numbers
    result = runner.invoke(
        app,
        [
            "rescore",
            "--run-id",
            source,
            "--matcher",
            "keyed-dice@3",
            "--gold",
            str(tiny_gold),
            "--output-dir",
            str(first),
            "--no-traces",
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"from {first / 'responses.jsonl'} (no provider call)" in result.output
    without = run_id(first)
    assert client.get_run(without).data.tags["traces"] == "off"
    assert client.search_traces(locations=[experiment], run_id=without, max_results=100) == []
    assert json.loads((first / "metrics.json").read_text())["micro/recall"] == pytest.approx(7 / 8)

    # the gate never judges a keyed-dice run against the fact-cover baseline
    gate = runner.invoke(app, ["gate", "--run-id", rescored, "--output-dir", str(again), "--gold", str(tiny_gold)])
    assert gate.exit_code == 2, gate.output
    assert (
        f"run {rescored} has matcher 'keyed-dice@3' but the baseline has 'fact-cover@2'; numbers from another "
        "matcher are not comparable: rescore it under the baseline's matcher (`extraction-eval rescore --run-id "
        f"{rescored} --matcher fact-cover@2`)" in gate.output
    )

    # diff: the one memory that flipped, both texts, the similarity and keyed-dice's rule
    empty = tmp_path / "empty"
    diff = runner.invoke(app, ["diff", source, rescored, "--output-dir", str(empty)])
    assert diff.exit_code == 0, diff.output
    assert "### `micro/recall`: 1 lost, 0 gained" in diff.output
    assert "### `recall/factual`: 1 lost, 0 gained" in diff.output
    assert "### `strict/recall`: 1 lost, 0 gained" in diff.output
    line = next(x for x in diff.output.splitlines() if x.startswith("| t02 | t02-m1 | lost |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[3:6] == ["User lives in Lisbon.", REWORDED, "1.000"]
    assert cells[7] == REWORDED and cells[8] == "0.000"
    assert cells[9].startswith("nearest prediction, unmatched: substitution")
    assert "t01" not in diff.output  # nothing else flipped


def test_rescore_names_a_run_without_stored_responses(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    runner = CliRunner()
    first = tmp_path / "first"
    assert runner.invoke(app, ["run", "--gold", str(tiny_gold), "--output-dir", str(first)]).exit_code == 0
    source = run_id(first)
    artifacts = Path(MlflowClient(local_store).get_run(source).info.artifact_uri.removeprefix("file://"))
    (artifacts / "responses.jsonl").unlink()
    result = runner.invoke(
        app, ["rescore", "--run-id", source, "--gold", str(tiny_gold), "--output-dir", str(tmp_path / "x")]
    )
    assert result.exit_code != 0
    assert f"run {source} has no responses.jsonl artifact" in result.output
    missing = runner.invoke(app, ["rescore", "--run-id", "0" * 32, "--gold", str(tiny_gold)])
    assert missing.exit_code != 0 and f"run {'0' * 32!r} is not in the tracking store" in missing.output


def test_rescore_into_the_source_runs_own_folder_replaces_it_as_one_unit(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    # docs/cli.md: rescore's output folder is one unit, as run's is (locked, staged, committed);
    # the source folder may be reused: its responses are read before anything is cleared.
    runner = CliRunner()
    folder = tmp_path / "run"
    assert runner.invoke(app, ["run", "--gold", str(tiny_gold), "--output-dir", str(folder)]).exit_code == 0
    source = run_id(folder)
    stale = folder / "leftover.txt"
    stale.write_text("not the run's", encoding="utf-8")
    args = ["rescore", "--run-id", source, "--matcher", "keyed-dice@3", "--gold", str(tiny_gold)]
    result = runner.invoke(app, [*args, "--output-dir", str(folder)])
    assert result.exit_code == 0, result.output
    run_json = json.loads((folder / "run.json").read_text())
    assert run_json["status"] == "FINISHED" and run_json["run_id"] != source
    assert run_json["tags"]["rescored_from"] == source
    assert stale.read_text() == "not the run's"  # a file the run does not own is left alone
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".staging")]
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["micro/recall"] == 1.0  # the oracle answers, rescored: every memory still matched


def test_a_rescore_that_fails_while_logging_leaves_the_folder_marked_failed(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    first = tmp_path / "first"
    assert runner.invoke(app, ["run", "--gold", str(tiny_gold), "--output-dir", str(first)]).exit_code == 0
    source = run_id(first)
    out = tmp_path / "out"

    def refuse(**_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("extraction_eval.pipeline._rescore.log_eval_run", refuse)
    result = runner.invoke(app, ["rescore", "--run-id", source, "--gold", str(tiny_gold), "--output-dir", str(out)])
    assert result.exit_code != 0
    marker = json.loads((out / "run.json").read_text())
    assert marker["status"] == "FAILED" and "No space left on device" in marker["reason"]
    assert sorted(p.name for p in out.iterdir()) == [".extraction-eval.lock", "run.json"]  # nothing half-written


def _block(matcher: str, metrics: dict[str, float] | None) -> ProviderBaseline:
    return ProviderBaseline(
        model="gpt-4o-mini",
        enforcement="ci",
        cassette_kind="oracle_aligned_expected_json",
        subset="full",
        matcher=matcher,
        gated_metrics=("macro/recall",),
        metrics=metrics,
        last_refreshed=None,
        mlflow_run_id=None,
    )


def test_the_plot_sets_beside_a_rescored_run_only_a_baseline_of_its_matcher() -> None:
    figures = {"recall/factual": 0.75}
    assert comparable_baseline(_block("fact-cover@2", figures), "fact-cover@2") == (
        figures,
        "no baseline metrics in baseline_results.json",
    )
    assert comparable_baseline(_block("fact-cover@2", figures), "keyed-dice@3") == (
        None,
        "the baseline was measured under matcher fact-cover@2, not keyed-dice@3: not shown",
    )
    assert comparable_baseline(_block("fact-cover@2", None), "fact-cover@2") == (
        None,
        "no baseline metrics in baseline_results.json",
    )
    assert comparable_baseline(None, "fact-cover@2") == (None, "no baseline metrics in baseline_results.json")
