"""One evaluation is one MLflow run with the contract's tags, metrics, dataset and artifacts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from mlflow import MlflowClient

from extraction_eval import ConfigurationError, ContractDriftError, GoldDataError, Mode, RunOptions, run_eval
from extraction_eval.contract import prompt_sha256, schema_sha256
from extraction_eval.evidence import evidence_line

from ..conftest import REPO, copy_gold
from ..helpers import assert_marked_failed, edit_manifest, mutate_cassettes

TAGS = [
    "gold_version",
    "prompt_sha256",
    "schema_sha256",
    "cassette_kind",
    "enforcement",
    "provider",
    "model",
    "mode",
    "subset",
    "matcher",
    "git_dirty",
    "contract_override",
    "run_kind",
]


def test_cassette_run_logs_everything(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_eval(Mode.CASSETTE, tiny_gold, out)
    client = MlflowClient(local_store)
    run = client.get_run(result.logged.run_id)
    tags = run.data.tags
    assert {t: tags[t] for t in TAGS} == {
        "gold_version": "tiny",
        "prompt_sha256": prompt_sha256(),
        "schema_sha256": schema_sha256(),
        "cassette_kind": "oracle_aligned_expected_json",
        "enforcement": "ci",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "mode": "cassette",
        "subset": "full",
        "matcher": "fact-cover@2",
        "git_dirty": "unknown",
        "contract_override": "false",
        "run_kind": "eval",
    }
    assert "oracle-aligned" in tags["mlflow.note.content"] and "not the model" in tags["mlflow.note.content"]
    assert client.get_experiment(run.info.experiment_id).name == "extraction-eval"
    assert run.info.status == "FINISHED"
    # the default matcher's held-out calibration figures (docs/matcher.md), part of its identity
    assert {k: v for k, v in run.data.params.items() if k.startswith("matcher.")} == {
        "matcher.heldout.acceptance": "0.731",
        "matcher.heldout.refusal": "0.886",
        "matcher.heldout.precision": "0.906",
        "matcher.heldout.f1": "0.809",
        "matcher.heldout.kappa": "0.589",
    }
    metrics = run.data.metrics
    assert metrics["macro/precision"] == metrics["macro/recall"] == 1.0
    # counts are params, not metric columns; metrics.json keeps them (the contract's keys)
    assert not any(k.startswith("counts/") for k in metrics)
    params = run.data.params
    assert params["counts/expected"] == "8" and params["counts/conversations"] == "8"
    written = json.loads((out / "metrics.json").read_text())
    assert written["counts/expected"] == 8
    assert {k: v for k, v in written.items() if not k.startswith("counts/")} == pytest.approx(metrics)
    # one param per input, named as the CLI names it; `mode` is a tag only
    assert params["gold"] == str(tiny_gold) and params["output_dir"] == str(out)
    assert "gold_dir" not in params and "mode" not in params
    assert run.info.run_name == "cassette-openai-tiny"  # no git repository here: no commit suffix
    assert (
        tags["cassette_file_sha256"] == hashlib.sha256((tiny_gold / "openai_cassettes.jsonl").read_bytes()).hexdigest()
    )
    assert tags["cassettes_edited"] == "false"
    dataset_input, evaluation_input = run.inputs.dataset_inputs  # and the GenAI evaluation dataset
    assert evaluation_input.dataset.source_type == "mlflow_evaluation_dataset"
    gold_bytes = (tiny_gold / "conversations.jsonl").read_bytes() + (tiny_gold / "expected_memories.jsonl").read_bytes()
    assert dataset_input.dataset.name == "gold-tiny"
    assert dataset_input.dataset.digest == hashlib.sha256(gold_bytes).hexdigest()[:16]  # docs/tracking.md
    assert (out / "cassette_manifest.json").read_bytes() == (tiny_gold / "cassette_manifest.json").read_bytes()
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {
        "metrics.json",
        "per_conversation.jsonl",
        "cassette_manifest.json",
        "per_conversation_table.json",
        "per_memory_table.json",
        "plots",
    } <= artifacts
    assert {a.path for a in client.list_artifacts(run.info.run_id, "plots")} == {
        "plots/per_category.png",
        "plots/category_confusion.png",
        "plots/temporal_confusion.png",
    }
    assert json.loads(tags["mlflow.loggedArtifacts"]) == [
        {"path": "per_conversation_table.json", "type": "table"},
        {"path": "per_memory_table.json", "type": "table"},
    ]
    table = json.loads(
        Path(client.download_artifacts(run.info.run_id, "per_conversation_table.json", str(out))).read_text()
    )
    assert table["columns"] == [
        "conversation_id",
        "status",
        "expected",
        "predicted",
        "matched",
        "missed",
        "spurious",
        "category_mismatch",
        "temporal_mismatch",
        "failure_reason",
        "error",
    ]
    assert table["data"][6] == ["t07", "all_matched", 2, 2, 2, 0, 0, 0, 0, "", ""]
    assert table["data"][7][:4] == ["t08", "negative_ok", 0, 0]
    rows = [json.loads(line) for line in (out / "per_conversation.jsonl").read_text().splitlines()]
    assert [r["conversation_id"] for r in rows] == [f"t0{i}" for i in range(1, 9)]
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["run_id"] == run.info.run_id and run_json["tags"]["subset"] == "full"
    assert run_json["evidence"] == evidence_line("oracle_aligned_expected_json")
    assert run_json["evidence"] in tags["mlflow.note.content"]


# gold/v1's subsets are strict subsets of its 125 conversations (the tiny fixture's smoke is all 8)
V1_SMOKE = ["c014", "c017", "c036", "c078", "c091", "c100", "c109"]  # docs/gold-set.md


@pytest.mark.parametrize(("mode", "size"), [(Mode.SMOKE, 7), (Mode.FAST, 45)])
def test_subset_modes_replay_the_manifests_subset(mode: Mode, size: int, local_store: str, tmp_path: Path) -> None:
    gold = copy_gold(REPO / "gold" / "v1", tmp_path / "v1", oracle=False)  # its own cassettes and subsets
    subset = json.loads((gold / "cassette_manifest.json").read_text())["subsets"][mode.value]
    assert len(subset) == size and (mode is Mode.FAST or subset == V1_SMOKE)
    out = tmp_path / "out"
    result = run_eval(mode, gold, out)
    rows = [json.loads(line) for line in (out / "per_conversation.jsonl").read_text().splitlines()]
    assert [r["conversation_id"] for r in rows] == subset  # exactly the subset, in gold order
    assert result.metrics["counts/conversations"] == size
    run = MlflowClient(local_store).get_run(result.logged.run_id)
    tags = run.data.tags
    assert tags["subset"] == mode.value and tags["mode"] == mode.value
    dataset_input, evaluation_input = run.inputs.dataset_inputs  # the subset actually scored, not all 125
    assert evaluation_input.dataset.name == "gold-v1"  # the whole gold version's evaluation dataset
    assert dataset_input.dataset.name == f"gold-v1-{mode.value}"
    assert json.loads(dataset_input.dataset.profile)["num_rows"] == size


@pytest.mark.parametrize("mode", [Mode.CASSETTE, Mode.SMOKE, Mode.FAST])
def test_prompt_drift_stops_the_run_with_both_hashes_and_the_fix(
    mode: Mode, tiny_gold: Path, local_store: str, tmp_path: Path, changed_prompt: str
) -> None:
    recorded = json.loads((tiny_gold / "cassette_manifest.json").read_text())["prompt_sha256"]
    with pytest.raises(ContractDriftError) as info:
        run_eval(mode, tiny_gold, tmp_path / "out")
    text = str(info.value)
    assert f"system prompt: manifest {recorded}, code {changed_prompt}" in text
    assert "extraction-eval cassettes oracle" in text and "--mode record" in text
    assert_marked_failed(tmp_path / "out", "ContractDriftError: ")


def test_override_runs_on_and_tags_the_run(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed_schema: str
) -> None:
    recorded = json.loads((tiny_gold / "cassette_manifest.json").read_text())["schema_sha256"]
    monkeypatch.setenv("EXTRACTION_EVAL_ALLOW_CONTRACT_DRIFT", "1")
    result = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")
    tags = MlflowClient(local_store).get_run(result.logged.run_id).data.tags
    assert tags["contract_override"] == "true" and tags["manifest_schema_sha256"] == recorded
    assert tags["schema_sha256"] == changed_schema
    assert result.metrics["macro/recall"] == 1.0  # the cassettes replay as recorded
    assert "CONTRACT OVERRIDE" in tags["mlflow.note.content"]


def test_override_under_ci_is_an_error(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed_schema: str
) -> None:
    monkeypatch.setenv("EXTRACTION_EVAL_ALLOW_CONTRACT_DRIFT", "1")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(ConfigurationError, match="CI must never override"):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")


def test_override_under_ci_is_an_error_even_without_drift(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXTRACTION_EVAL_ALLOW_CONTRACT_DRIFT", "1")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(ConfigurationError, match="CI must never override"):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")
    assert_marked_failed(tmp_path / "out", "ConfigurationError: ")  # stopped before any number was written


def test_bumping_only_the_manifest_hash_is_caught(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    edit_manifest(tiny_gold, prompt_sha256="0" * 64)
    with pytest.raises(GoldDataError, match="cassette 't01': prompt_sha256 is .* but the manifest says '0000"):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")


def test_gold_file_drift_has_no_override(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXTRACTION_EVAL_ALLOW_CONTRACT_DRIFT", "1")
    path = tiny_gold / "expected_memories.jsonl"
    recorded = json.loads((tiny_gold / "cassette_manifest.json").read_text())["files"]["expected_memories.jsonl"]
    assert recorded == hashlib.sha256(path.read_bytes()).hexdigest()
    path.write_text(path.read_text().replace("Lisbon", "Braga"))
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    assert actual != recorded
    with pytest.raises(ContractDriftError) as info:
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")
    text = str(info.value)
    assert text.startswith("contract gate: gold files drifted:\n")
    assert (
        f"{path}: sha256 is {actual} but the manifest records {recorded}; "
        f"restore the file with `git checkout -- {path}`, or re-generate the manifest with "
        f"`extraction-eval cassettes oracle --gold {tiny_gold}` if the change is intended.\n" in text + "\n"
    )
    assert_marked_failed(tmp_path / "out", "ContractDriftError: ")


def test_failed_conversations_are_scored_and_the_run_goes_on(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    bad = {
        "t01": {"response": "not json"},
        "t03": {"response": None, "refusal": "no", "finish_reason": "stop"},
        "t05": {"finish_reason": "length"},
    }
    mutate_cassettes(
        tiny_gold, lambda row: {**row, **bad[row["conversation_id"]]} if row["conversation_id"] in bad else None
    )
    result = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")
    assert result.metrics["counts/failed"] == 3 and result.metrics["failures/rate"] == 3 / 8
    assert result.metrics["counts/matched"] == 5
    reasons = {c.conversation_id: c.failure.reason.value for c in result.report.conversations if c.failure}
    assert reasons == {"t01": "invalid_json", "t03": "refusal", "t05": "length"}
    assert not result.failed


def test_max_failure_rate_marks_the_run_failed(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    mutate_cassettes(
        tiny_gold, lambda row: {**row, "response": "{"} if row["conversation_id"] in {"t01", "t02"} else None
    )
    result = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out", RunOptions(max_failure_rate=0.2))
    assert result.failed
    assert MlflowClient(local_store).get_run(result.logged.run_id).info.status == "FAILED"


def test_uses_the_run_mlflow_run_created(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = MlflowClient(local_store)
    experiment_id = client.create_experiment("chosen-by-mlflow-run")
    created = client.create_run(experiment_id)
    monkeypatch.setenv("MLFLOW_RUN_ID", created.info.run_id)
    result = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")
    assert result.logged.run_id == created.info.run_id
    assert client.get_run(created.info.run_id).data.tags["provider"] == "openai"
    assert any("chosen by `mlflow run`" in n for n in result.notes)


def test_unset_tracking_uri_means_sqlite_in_the_project_folder(
    tiny_gold: Path, isolated_env: Path, tmp_path: Path
) -> None:
    (isolated_env / "MLproject").write_text("name: x\n")
    sub = isolated_env / "sub"
    sub.mkdir()
    import os

    os.chdir(sub)
    result = run_eval(Mode.SMOKE, tiny_gold, tmp_path / "out")
    assert result.logged.tracking_uri == f"sqlite:///{isolated_env / 'mlflow.db'}"
    assert (isolated_env / "mlflow.db").is_file()


def test_provider_that_contradicts_the_mode_is_an_error(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IBEX_WORKER_EXTRACTION_PROVIDER", "vllm")
    with pytest.raises(ConfigurationError, match="replays cassettes recorded from 'openai'"):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")


def test_standard_errors_reach_metrics_json_mlflow_and_the_summary(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    from extraction_eval.pipeline._summary import summary_lines

    bad = {"t01", "t03", "t05"}
    mutate_cassettes(tiny_gold, lambda row: {**row, "response": "{"} if row["conversation_id"] in bad else None)
    out = tmp_path / "out"
    result = run_eval(Mode.CASSETTE, tiny_gold, out)
    # failures/rate = 3/8 over 8 conversations: u = (1 − 3/8)/8 = 0.078125 for the three failed,
    # (0 − 3/8)/8 = −0.046875 for the five others; Σu² = 3·0.078125² + 5·0.046875² = 0.029296875;
    # se = sqrt(8/7 · 0.029296875) = 0.182981...
    se = (8 / 7 * 0.029296875) ** 0.5
    on_disk = json.loads((out / "metrics.json").read_text())
    assert on_disk["n/failures/rate"] == 8.0
    assert on_disk["se/failures/rate"] == pytest.approx(se, abs=1e-12)
    logged = MlflowClient(local_store).get_run(result.logged.run_id).data.metrics
    assert logged["se/failures/rate"] == pytest.approx(se, abs=1e-12)
    assert {k for k in on_disk if k.startswith(("n/", "se/"))} == {k for k in logged if k.startswith(("n/", "se/"))}
    rows = [json.loads(line) for line in (out / "per_conversation.jsonl").read_text().splitlines()]
    assert {r["conversation_id"]: r["counts"]["failures/rate"] for r in rows} == {
        f"t0{i}": ([1, 1] if f"t0{i}" in bad else [0, 1]) for i in range(1, 9)
    }
    line = next(x for x in summary_lines(result) if x.strip().startswith("failures/rate"))
    assert line.split("failures/rate")[1].strip() == f"0.3750 ± {1.96 * se:.4f} (n = 8)"
