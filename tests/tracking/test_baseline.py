"""Registering the baseline from a git revision, so a pull request cannot lower its own bar."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mlflow import MlflowClient
from typer.testing import CliRunner

from extraction_eval.cli import app

from ..conftest import TINY, copy_gold, free_port
from ..helpers import committed_gold_repo, git


def test_register_from_rev_reads_the_base_file_not_the_working_tree(
    tmp_path: Path, local_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    gold, base = committed_gold_repo(repo, TINY)
    monkeypatch.chdir(repo)
    # the pull request lowers the bar in its own copy of the file
    path = gold / "baseline_results.json"
    lowered = json.loads(path.read_text())
    lowered["providers"]["openai"]["metrics"] = {k: 0.5 for k in lowered["providers"]["openai"]["metrics"]}
    path.write_text(json.dumps(lowered))

    runner = CliRunner()
    result = runner.invoke(app, ["baseline", "register", "--gold", "gold/tiny", "--from-rev", base])
    assert result.exit_code == 0, result.output
    client = MlflowClient(local_store, registry_uri=local_store)
    version = client.get_model_version_by_alias("extraction-eval-openai", "baseline-tiny")
    run = client.get_run(version.run_id)
    assert run.data.metrics["macro/recall"] == 1.0  # the base revision's bar, not 0.5
    assert run.data.tags["baseline_source_rev"] == base
    assert version.tags["baseline_source"] == f"gold/tiny/baseline_results.json@{base}"
    assert version.tags["enforcement"] == "ci" and json.loads(version.tags["gated_metrics"])[0] == "precision/factual"
    assert run.data.tags["run_kind"] == "baseline_seed"
    # beside the runs it is compared with; the version page carries its numbers and links the run
    assert client.get_experiment(run.info.experiment_id).name == "extraction-eval"
    assert run.info.run_name == "baseline-openai-tiny"
    assert version.tags["baseline/macro/recall"] == "1.0" and version.run_id == run.info.run_id
    assert {k for k in version.tags if k.startswith("baseline/")} == {f"baseline/{k}" for k in run.data.metrics}

    # the gate judges against the registered bar and shows the lowered file for review
    out = tmp_path / "out"
    assert (
        runner.invoke(app, ["run", "--mode", "cassette", "--gold", "gold/tiny", "--output-dir", str(out)]).exit_code
        == 0
    )
    gate = runner.invoke(app, ["gate", "--output-dir", str(out), "--gold", "gold/tiny"])
    assert gate.exit_code == 0
    assert "Review: gold/tiny/baseline_results.json in this tree differs from the registered baseline" in gate.output
    assert "`macro/recall` 1.0000 -> 0.5000" in gate.output


def test_register_from_the_working_tree_records_the_commit_and_a_dirty_tree(
    tmp_path: Path, local_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    gold, head = committed_gold_repo(repo, TINY)
    monkeypatch.chdir(repo)
    client = MlflowClient(local_store, registry_uri=local_store)
    runner = CliRunner()

    assert runner.invoke(app, ["baseline", "register", "--gold", "gold/tiny"]).exit_code == 0
    version = client.get_model_version_by_alias("extraction-eval-openai", "baseline-tiny")
    assert client.get_run(version.run_id).data.tags["baseline_source_rev"] == f"working-tree@{head}"
    assert version.tags["baseline_source"] == f"gold/tiny/baseline_results.json (working-tree@{head})"

    path = gold / "baseline_results.json"
    path.write_text(path.read_text().replace('"2026-', '"2025-'))  # an uncommitted edit
    assert runner.invoke(app, ["baseline", "register", "--gold", "gold/tiny", "--replace"]).exit_code == 0
    version = client.get_model_version_by_alias("extraction-eval-openai", "baseline-tiny")
    assert client.get_run(version.run_id).data.tags["baseline_source_rev"] == f"working-tree@{head}+dirty"


def test_a_baseline_block_with_no_gated_metrics_is_refused_at_load(tiny_gold: Path, local_store: str) -> None:
    path = tiny_gold / "baseline_results.json"
    data = json.loads(path.read_text())
    data["providers"]["openai"]["gated_metrics"] = []
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(app, ["baseline", "register", "--gold", str(tiny_gold)])
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and "providers.openai.gated_metrics" in result.output


def test_register_from_an_unknown_revision_names_the_fix(
    tmp_path: Path, local_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    copy_gold(TINY, repo / "gold" / "tiny")
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(app, ["baseline", "register", "--gold", "gold/tiny", "--from-rev", "origin/main"])
    assert result.exit_code == 2 and "fetch-depth: 0" in result.output


def test_promote_refuses_what_cannot_be_a_baseline(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    runner = CliRunner()
    smoke = runner.invoke(
        app, ["run", "--mode", "smoke", "--gold", str(tiny_gold), "--output-dir", str(tmp_path / "o")]
    )
    assert smoke.exit_code == 0
    run_id = json.loads((tmp_path / "o" / "run.json").read_text())["run_id"]
    result = runner.invoke(app, ["baseline", "promote", "--run-id", run_id, "--gold", str(tiny_gold)])
    assert result.exit_code == 2 and "covers subset 'smoke'; a baseline covers 'full'" in result.output


def test_promote_moves_the_alias_and_rewrites_the_file(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["baseline", "register", "--gold", str(tiny_gold)]).exit_code == 0
    assert runner.invoke(app, ["run", "--gold", str(tiny_gold), "--output-dir", str(tmp_path / "o")]).exit_code == 0
    run_id = json.loads((tmp_path / "o" / "run.json").read_text())["run_id"]
    result = runner.invoke(app, ["baseline", "promote", "--run-id", run_id, "--gold", str(tiny_gold), "--write-file"])
    assert result.exit_code == 0, result.output
    version = MlflowClient(local_store, registry_uri=local_store).get_model_version_by_alias(
        "extraction-eval-openai", "baseline-tiny"
    )
    assert version.run_id == run_id and str(version.version) == "2"
    block = json.loads((tiny_gold / "baseline_results.json").read_text())["providers"]["openai"]
    assert block["mlflow_run_id"] == run_id and block["cassette_kind"] == "oracle_aligned_expected_json"
    assert block["matcher"] == "fact-cover@2" and block["subset"] == "full" and block["enforcement"] == "ci"
    assert set(block["metrics"]) == set(block["gated_metrics"])


def test_the_gate_shows_every_change_to_the_baseline_file_for_review(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["baseline", "register", "--gold", str(tiny_gold)]).exit_code == 0
    assert runner.invoke(app, ["run", "--gold", str(tiny_gold), "--output-dir", str(tmp_path / "o")]).exit_code == 0
    path = tiny_gold / "baseline_results.json"
    data = json.loads(path.read_text())
    block = data["providers"]["openai"]
    gated = block["gated_metrics"]
    assert gated[-1] == "temporal_accuracy"
    block["gated_metrics"] = gated[:-1]  # drop temporal_accuracy from the gate
    del block["metrics"]["temporal_accuracy"]
    block["model"] = "gpt-4o"
    block["matcher"] = "embedding@1"
    path.write_text(json.dumps(data))
    gate = runner.invoke(app, ["gate", "--output-dir", str(tmp_path / "o"), "--gold", str(tiny_gold)])
    assert gate.exit_code == 0, gate.output  # the registered bar decides; the edit is shown, not used
    note = gate.output.split("Review:", 1)[1].split("\n", 1)[0]
    assert note == (
        f" {path} in this tree differs from the registered baseline (the gate used the registered one, seeded "
        'from the base revision): model "gpt-4o-mini" -> "gpt-4o", matcher "fact-cover@2" -> "embedding@1", '
        f"gated_metrics {json.dumps(gated)} -> {json.dumps(gated[:-1])}, `temporal_accuracy` 1.0000 -> null."
    )


def test_a_store_that_is_down_is_an_error_message_not_a_traceback(
    tiny_gold: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = f"http://u:canary-s3cret@127.0.0.1:{free_port()}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")  # no backoff: the port is closed
    result = CliRunner().invoke(app, ["baseline", "register", "--gold", str(tiny_gold)])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(
        f"error: the tracking store {uri.replace('canary-s3cret', '***')!r} refused a request (INTERNAL_ERROR: "
    )
    assert result.output.rstrip().endswith("check MLFLOW_TRACKING_URI and that the store is up.")
    assert "canary-s3cret" not in result.output


def test_the_local_reader_maps_store_errors_and_lets_bugs_through(
    local_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from extraction_eval import TrackingError
    from extraction_eval.tracking._client import ClientReader

    reader = ClientReader(local_store)

    def missing_table(*args: object) -> None:
        from sqlalchemy.exc import OperationalError

        raise OperationalError("SELECT", {}, Exception("no such table: runs"))

    monkeypatch.setattr(reader._client, "get_run", missing_table)
    with pytest.raises(TrackingError, match=r"failed \(OperationalError: .*no such table: runs"):
        reader.get_run("0" * 32)

    def bug(*args: object) -> None:
        raise AttributeError("'NoneType' object has no attribute 'info'")

    monkeypatch.setattr(reader._client, "get_run", bug)
    with pytest.raises(AttributeError, match="no attribute 'info'"):
        reader.get_run("0" * 32)


def test_promote_writes_the_runs_per_conversation_counts_and_register_seeds_them(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    import shutil

    from ..helpers import drop_memories, mutate_cassettes

    runner = CliRunner()
    assert runner.invoke(app, ["run", "--gold", str(tiny_gold), "--output-dir", str(tmp_path / "o")]).exit_code == 0
    run_id = json.loads((tmp_path / "o" / "run.json").read_text())["run_id"]
    result = runner.invoke(app, ["baseline", "promote", "--run-id", run_id, "--gold", str(tiny_gold), "--write-file"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tiny_gold / "baseline_per_conversation.jsonl").read_text().splitlines()]
    run_rows = [json.loads(line) for line in (tmp_path / "o" / "per_conversation.jsonl").read_text().splitlines()]
    assert [(r["provider"], r["conversation_id"], r["sample"]) for r in rows] == [
        ("openai", f"t0{i}", 0) for i in range(1, 9)
    ]
    assert [r["counts"] for r in rows] == [r["counts"] for r in run_rows]

    # A fresh store (CI's) seeded from the two files pairs the gate: the interval is there.
    fresh = f"sqlite:///{tmp_path / 'fresh.db'}"
    env = {"MLFLOW_TRACKING_URI": fresh}
    assert runner.invoke(app, ["baseline", "register", "--gold", str(tiny_gold)], env=env).exit_code == 0
    regressed = tmp_path / "regressed"
    shutil.copytree(tiny_gold, regressed)
    mutate_cassettes(regressed, drop_memories({"t01", "t05"}))
    out = tmp_path / "out"
    assert runner.invoke(app, ["run", "--gold", str(regressed), "--output-dir", str(out)], env=env).exit_code == 0
    gate = runner.invoke(app, ["gate", "--output-dir", str(out), "--gold", str(tiny_gold)], env=env)
    assert gate.exit_code == 1, gate.output
    row = next(r for r in json.loads((out / "gate.json").read_text())["rows"] if r["metric"] == "recall/factual")
    # as in tests/gates/test_gate_run.py: se_d = 1/3, delta = -1/3
    assert row["ci_low"] == pytest.approx(-1 / 3 - 1.96 / 3, abs=1e-9)


def test_counts_that_do_not_reproduce_the_block_are_refused(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["run", "--gold", str(tiny_gold), "--output-dir", str(tmp_path / "o")]).exit_code == 0
    run_id = json.loads((tmp_path / "o" / "run.json").read_text())["run_id"]
    assert (
        runner.invoke(
            app, ["baseline", "promote", "--run-id", run_id, "--gold", str(tiny_gold), "--write-file"]
        ).exit_code
        == 0
    )
    path = tiny_gold / "baseline_per_conversation.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    # t01's fact now missed: recall/factual 2/3, so macro/recall (1/5)(2/3 + 1 + 1 + 1 + 1) = 14/15,
    # the first key (in order) that no longer agrees with the block's 1.0
    rows[0]["counts"]["recall/factual"] = [0, 1]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    fresh = f"sqlite:///{tmp_path / 'fresh.db'}"
    result = runner.invoke(app, ["baseline", "register", "--gold", str(tiny_gold)], env={"MLFLOW_TRACKING_URI": fresh})
    assert result.exit_code == 2
    assert (
        f"{path}: the counts of provider 'openai' give macro/recall = {14 / 15!r}, but "
        "baseline_results.json says 1.0; the two files must describe the same run. Rewrite both with "
        "`extraction-eval baseline promote --run-id ID`." in result.output
    )
