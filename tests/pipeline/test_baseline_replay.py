"""`baseline register --replay`: the registered baseline is a complete eval run of the base
revision (its own code and cassettes), checked against its reviewed baseline_results.json."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from mlflow import MlflowClient
from typer.testing import CliRunner

from extraction_eval.cli import app
from extraction_eval.pipeline._baseline_replay import absolute_store, reproduction_problems

from ..conftest import REPO

runner = CliRunner()


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()


def _is_checkout() -> bool:
    return (REPO / ".git").exists() and subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True
    ).returncode == 0


def _store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MlflowClient:
    """A SQLite store whose experiments keep their artifacts under tmp_path."""
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    client = MlflowClient(tracking_uri=uri, registry_uri=uri)
    for name in ("extraction-eval", "extraction-eval-vllm"):
        client.create_experiment(name, artifact_location=str(tmp_path / "artifacts" / name))
    return client


def test_reproduction_problems_names_each_metric_off_by_more_than_the_rounding() -> None:
    reviewed = {"recall/factual": 0.9, "macro/recall": 0.5, "precision/episodic": 1.0}
    measured = {"recall/factual": 1.0, "macro/recall": 0.5 + 1e-12}
    # macro/recall differs by 1e-12, within the gate's rounding: not a problem
    assert reproduction_problems(reviewed, measured) == [
        "precision/episodic: reviewed 1.0000, the replay logged none",
        "recall/factual: reviewed 0.9000, replayed 1.0000",
    ]


def test_a_relative_store_is_made_absolute_for_the_replay_folder(tmp_path: Path) -> None:
    assert absolute_store("sqlite:///mlflow.db", tmp_path) == f"sqlite:///{tmp_path.resolve()}/mlflow.db"
    assert absolute_store("sqlite:////abs/m.db", tmp_path) == "sqlite:////abs/m.db"
    assert absolute_store("http://127.0.0.1:5000", tmp_path) == "http://127.0.0.1:5000"
    assert absolute_store("mlruns", tmp_path) == str((tmp_path / "mlruns").resolve())


@pytest.mark.skipif(not _is_checkout(), reason="--from-rev needs the project's git repository")
def test_replay_from_a_revision_registers_a_complete_run_of_that_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = _store(tmp_path, monkeypatch)
    head = _git("rev-parse", "HEAD")
    worktrees_before = _git("worktree", "list")
    monkeypatch.chdir(REPO)
    result = runner.invoke(app, ["baseline", "register", "--replay", "--from-rev", "HEAD"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "openai: replayed version 1" in result.output
    assert "vllm: registered version 1" in result.output  # the manual provider is seeded from the file

    version = client.get_model_version_by_alias("extraction-eval-openai", "baseline-v1")
    run = client.get_run(version.run_id)
    tags = run.data.tags
    # an eval run of the base revision's own code, tagged as a baseline's replay
    assert tags["run_kind"] == "eval" and tags["mlflow.source.git.commit"] == head
    assert tags["baseline_replay"] == f"gold/v1/baseline_results.json@{head}"
    assert version.tags["baseline_replay"] == tags["baseline_replay"]
    assert tags["traces"] == "125"
    assert run.data.params  # params like any eval run
    reviewed = json.loads((REPO / "gold/v1/baseline_results.json").read_text())["providers"]["openai"]["metrics"]
    for key, value in reviewed.items():
        assert float(version.tags[f"baseline/{key}"]) == pytest.approx(value, abs=1e-12)
        assert run.data.metrics[key] == pytest.approx(value, abs=1e-12)
    # per-conversation counts, so the gate pairs by conversation, and the artifacts outlive the worktree
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert "per_conversation.jsonl" in artifacts
    rows = client.download_artifacts(run.info.run_id, "per_conversation.jsonl", str(tmp_path / "dl"))
    assert len(Path(rows).read_text().splitlines()) == 125
    assert _git("worktree", "list") == worktrees_before


def test_a_replay_that_does_not_reproduce_the_reviewed_file_registers_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = _store(tmp_path, monkeypatch)
    gold = tmp_path / "gold" / "v1"
    shutil.copytree(REPO / "gold" / "v1", gold, ignore=shutil.ignore_patterns("answers"))
    path = gold / "baseline_results.json"
    data = json.loads(path.read_text())
    data["providers"]["openai"]["metrics"]["recall/factual"] = 0.9
    path.write_text(json.dumps(data))
    result = runner.invoke(app, ["baseline", "register", "--replay", "--gold", str(gold)], catch_exceptions=False)
    assert result.exit_code == 2
    assert "recall/factual: reviewed 0.9000, replayed 1.0000" in result.output
    assert "nothing was registered" in result.output
    model = client.search_registered_models("name = 'extraction-eval-openai'")
    assert model == [] or not model[0].aliases
