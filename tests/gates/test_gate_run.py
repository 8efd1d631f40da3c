"""The gate around the judgement: which run it picks, and that every failure of the store is published as exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from mlflow import MlflowClient
from typer.testing import CliRunner

from extraction_eval import Mode, run_eval
from extraction_eval.cli import app
from extraction_eval.gates._gate_run import run_gate

from ..conftest import TINY
from ..helpers import committed_gold_repo, git


@pytest.fixture
def summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
    return path


def test_run_json_without_a_run_id_is_published(
    tiny_gold: Path, local_store: str, tmp_path: Path, summary: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "run.json").write_text("{}")
    result, markdown = run_gate(None, out, tiny_gold)
    assert result.exit_code == 2
    assert markdown.startswith("## extraction-eval regression gate: FAIL: could not evaluate")
    assert f"{out / 'run.json'}: no 'run_id' in it; rerun `extraction-eval run` or pass --run-id." in markdown
    assert (out / "gate.md").read_text() == markdown
    assert summary.read_text() == markdown + "\n"


@pytest.mark.parametrize(
    ("store", "expected"),
    [
        # a file that is not an SQLite database
        ("corrupt", "failed (DatabaseError: (sqlite3.DatabaseError) file is not a database"),
        # no driver installed (the test extras bring psycopg, not pg8000); the password never
        # reaches gate.md or the job summary
        (
            "postgresql+pg8000://u:canary-s3cret@127.0.0.1:1/db",
            "- reading the tracking store 'postgresql+pg8000://u:***@127.0.0.1:1/db' failed (ModuleNotFoundError: "
            "No module named 'pg8000'",
        ),
    ],
)
def test_a_store_that_cannot_be_read_fails_closed_and_is_published(
    store: str, expected: str, tiny_gold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, summary: Path
) -> None:
    if store == "corrupt":
        db = tmp_path / "corrupt.db"
        db.write_bytes(b"this is not an sqlite database\n" * 100)
        store = f"sqlite:///{db}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)
    out = tmp_path / "out"
    result, markdown = run_gate("0" * 32, out, tiny_gold)
    assert result.exit_code == 2 and expected in markdown, markdown
    assert "check MLFLOW_TRACKING_URI" in markdown and "canary-s3cret" not in markdown
    if store.startswith("sqlite"):
        assert f"- reading the tracking store {store!r} " in markdown
    assert (out / "gate.md").read_text() == markdown and summary.read_text() == markdown + "\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository holding a project (MLproject) and a gold folder; cwd is its root, store inside."""
    root = tmp_path / "project"
    files = {"MLproject": "name: t\n", ".gitignore": "mlflow.db\nmlartifacts/\nout/\n"}
    committed_gold_repo(root, TINY, files=files)
    monkeypatch.chdir(root)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{root / 'mlflow.db'}")
    return root


def test_without_run_id_or_run_json_the_newest_full_run_of_head_is_judged(project: Path) -> None:
    gold, out = project / "gold" / "tiny", project / "out"
    head = git(project, "rev-parse", "HEAD")
    full = run_eval(Mode.CASSETTE, gold, out)
    client = MlflowClient()
    tags = client.get_run(full.logged.run_id).data.tags
    assert tags["mlflow.source.git.commit"] == head and tags["git_dirty"] == "false"
    run_eval(Mode.SMOKE, gold, out)  # newer, but a subset: never picked
    assert CliRunner().invoke(app, ["baseline", "register", "--gold", str(gold)]).exit_code == 0
    (out / "run.json").unlink()

    result, markdown = run_gate(None, out, gold)
    assert result.exit_code == 0, markdown
    assert result.run is not None and result.run.run_id == full.logged.run_id

    # a new commit has no run yet: fail closed, never fall back to an older commit's run
    (project / "notes.txt").write_text("a change\n")
    git(project, "add", "notes.txt")
    git(project, "commit", "-qm", "change")
    new_head = git(project, "rev-parse", "HEAD")
    result, markdown = run_gate(None, out, gold)
    assert result.exit_code == 2
    assert f"no finished full-set run in experiment 'extraction-eval' for HEAD {new_head[:12]}" in markdown

    # an uncommitted change is recorded as dirty
    (project / "notes.txt").write_text("an edit\n")
    dirty = run_eval(Mode.CASSETTE, gold, out)
    tags = client.get_run(dirty.logged.run_id).data.tags
    assert tags["mlflow.source.git.commit"] == new_head and tags["git_dirty"] == "true"


def test_outside_a_repository_with_nothing_to_judge(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.rmtree(out, ignore_errors=True)
    result, markdown = run_gate(None, out, tiny_gold)
    assert result.exit_code == 2
    assert "no run to judge: no --run-id, no output/run.json, and no git HEAD to search by" in markdown
