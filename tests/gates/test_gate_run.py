"""The gate around the judgement: which run it picks, and that every failure of the store is published as exit 2."""

from __future__ import annotations

import json
import re
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
    assert f"no full-set run in experiment 'extraction-eval' for HEAD {new_head[:12]}" in markdown

    # an uncommitted change is recorded as dirty
    (project / "notes.txt").write_text("an edit\n")
    dirty = run_eval(Mode.CASSETTE, gold, out)
    tags = client.get_run(dirty.logged.run_id).data.tags
    assert tags["mlflow.source.git.commit"] == new_head and tags["git_dirty"] == "true"


def test_a_failed_newer_run_of_head_is_never_passed_over_for_an_older_one(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21, point 9: without run.json (output/ not kept between steps) the gate never skips a
    FAILED or RUNNING newer run of HEAD to pass on an older FINISHED one; under CI it does not
    search at all, and judges only a run it is pointed at."""
    gold, out = project / "gold" / "tiny", project / "out"
    older = run_eval(Mode.CASSETTE, gold, out)
    assert CliRunner().invoke(app, ["baseline", "register", "--gold", str(gold)]).exit_code == 0
    newer = run_eval(Mode.CASSETTE, gold, project.parent / "newer")
    MlflowClient().set_terminated(newer.logged.run_id, "FAILED")  # this build's run step failed
    (out / "run.json").unlink()
    result, markdown = run_gate(None, out, gold)
    assert result.exit_code == 2, markdown
    assert (
        f"the newest full-set run of HEAD {git(project, 'rev-parse', 'HEAD')[:12]} is {newer.logged.run_id}, and its status is 'FAILED'"
        in markdown
    )
    assert older.logged.run_id not in markdown
    # under CI: no search at all
    monkeypatch.setenv("CI", "true")
    result, markdown = run_gate(None, out, gold)
    assert result.exit_code == 2
    assert "under CI the gate judges only a run it is pointed at" in markdown
    # pointed at it by --run-id, it judges that run (a FINISHED one passes)
    result, _ = run_gate(older.logged.run_id, out, gold)
    assert result.exit_code == 0


def test_the_search_for_heads_run_skips_a_rescored_run(project: Path) -> None:
    """A rescored run carries its source run's commit; the gate's search for HEAD's run (no
    --run-id, no run.json) must not pick it and then refuse it for its matcher."""
    gold, out = project / "gold" / "tiny", project / "out"
    full = run_eval(Mode.CASSETTE, gold, out)
    assert CliRunner().invoke(app, ["baseline", "register", "--gold", str(gold)]).exit_code == 0
    again = project.parent / "again"  # outside the repository: HEAD stays clean
    result = CliRunner().invoke(
        app,
        [
            "rescore",
            "--run-id",
            full.logged.run_id,
            "--matcher",
            "keyed-dice@3",
            "--gold",
            str(gold),
            "--output-dir",
            str(again),
        ],
    )
    assert result.exit_code == 0, result.output
    rescored = json.loads((again / "run.json").read_text())["run_id"]
    tags = MlflowClient().get_run(rescored).data.tags
    # newer than the source run, of the same commit, subset and kind: only its tag tells them apart
    assert tags["rescored_from"] == full.logged.run_id and tags["mlflow.source.git.commit"] == git(
        project, "rev-parse", "HEAD"
    )
    (out / "run.json").unlink()

    result_, markdown = run_gate(None, out, gold)
    assert result_.exit_code == 0, markdown
    assert result_.run is not None and result_.run.run_id == full.logged.run_id

    # named, it is judged, and refused for its matcher
    named, markdown = run_gate(rescored, again, gold)
    assert named.exit_code == 2
    assert "has matcher 'keyed-dice@3' but the baseline has 'fact-cover@2'" in markdown


def test_outside_a_repository_with_nothing_to_judge(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.rmtree(out, ignore_errors=True)
    result, markdown = run_gate(None, out, tiny_gold)
    assert result.exit_code == 2
    assert "no run to judge: no --run-id, no output/run.json, and no git HEAD to search by" in markdown


def test_paired_interval_gate_json_and_verdict_tag_against_a_promoted_baseline(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    import shutil

    from mlflow import MlflowClient

    from ..helpers import drop_memories, mutate_cassettes

    runner = CliRunner()
    good = tmp_path / "good"
    assert runner.invoke(app, ["run", "--gold", str(tiny_gold), "--output-dir", str(good)]).exit_code == 0
    good_id = json.loads((good / "run.json").read_text())["run_id"]
    promoted = runner.invoke(app, ["baseline", "promote", "--run-id", good_id, "--gold", str(tiny_gold)])
    assert promoted.exit_code == 0, promoted.output
    regressed = tmp_path / "regressed"
    shutil.copytree(tiny_gold, regressed)
    mutate_cassettes(regressed, drop_memories({"t01", "t05"}))
    out = tmp_path / "out"
    assert runner.invoke(app, ["run", "--gold", str(regressed), "--output-dir", str(out)]).exit_code == 0
    gate = runner.invoke(app, ["gate", "--output-dir", str(out), "--gold", str(tiny_gold)])
    assert gate.exit_code == 1, gate.output
    # recall/factual: baseline (a, b) t01 (1,1) t02 (1,1) t07 (1,1): M = 1, u_base = 0 everywhere.
    # run: t01 (0,1) t02 (1,1) t07 (1,1): M = 2/3, u = −2/9, 1/9, 1/9. Σd² = 6/81 over C = 3:
    # se_d = sqrt(3/2 · 6/81) = 1/3; delta = −1/3; interval −1/3 ± 1.96/3 = [−0.9867, +0.3200].
    report = json.loads((out / "gate.json").read_text())
    assert report["verdict"] == "fail" and report["exit_code"] == 1
    assert report["run_id"] == json.loads((out / "run.json").read_text())["run_id"]
    assert report["baseline_run_id"] == good_id
    row = next(r for r in report["rows"] if r["metric"] == "recall/factual")
    assert row["baseline"] == 1.0 and row["verdict"] == "fail"
    assert row["delta"] == pytest.approx(-1 / 3, abs=1e-9)
    assert row["ci_low"] == pytest.approx(-1 / 3 - 1.96 / 3, abs=1e-9)
    assert row["ci_high"] == pytest.approx(-1 / 3 + 1.96 / 3, abs=1e-9)
    assert row["resolution"] == pytest.approx(1 / 3, abs=1e-12)
    gate_md = (out / "gate.md").read_text()
    assert "| recall/factual | 1.0000 | 0.6667 | -0.3333 | [-0.9867, +0.3200] | 0.3333 | FAIL |" in gate_md
    assert re.search(r"recall/factual +1\.0000 +0\.6667 +-0\.3333  FAIL", gate.output)  # the terminal's text
    assert (
        "- `recall/factual`: within one row: one memory moves this metric by 0.3333; within the paired 95% "
        "interval: not distinguishable from noise in these conversations" in gate_md
    )
    # the rows behind each failing metric: t01's memory, matched in the baseline, lost to an empty answer
    assert "**The rows behind the drop**" in gate_md and "`recall/factual` → `recall/factual`" in gate_md
    sections = [line for line in gate_md.splitlines() if line.startswith("### ")]
    assert sections == [
        "### `recall/factual`: 1 lost, 0 gained",
        "### `recall/episodic`: 1 lost, 0 gained",
        "### `micro/recall`: 2 lost, 0 gained",  # for macro/recall
    ]
    assert (
        "| t01 | t01-m1 | lost | User is allergic to penicillin. | User is allergic to penicillin. | 1.000 | "
        "equal after normalisation | — | — | no prediction in this conversation |" in gate_md
    )
    # a metric that did not move has a zero-width interval at 0
    same = next(r for r in report["rows"] if r["metric"] == "precision/factual")
    assert same["delta"] == 0.0 and same["ci_low"] == 0.0 and same["ci_high"] == 0.0
    # the judged run carries the verdict and the report
    judged = MlflowClient(local_store).get_run(report["run_id"])
    assert judged.data.tags["gate_verdict"] == "fail"
    logged = MlflowClient(local_store).download_artifacts(report["run_id"], "gate.md", str(tmp_path))
    assert Path(logged).read_text() == (out / "gate.md").read_text()
    # where a reviewer looks first (issue 24, point 1): the description opens with the verdict and
    # each failing metric's delta in points, and every delta is a tag, unrounded and signed
    note = judged.data.tags["mlflow.note.content"]
    assert note.startswith(
        "<!-- gate verdict -->\n**Gate: FAIL** (regression): `recall/factual` -33.33 points (1.0000 → 0.6667); "
        "`recall/episodic` -50.00 points (1.0000 → 0.5000); `macro/recall` -16.67 points (1.0000 → 0.8333)."
    ), note
    # the failing metrics' rows (what flipped, and why) are the run's artifact gate.md, linked
    link = f"[gate.md](#/experiments/{judged.info.experiment_id}/runs/{report['run_id']}/artifacts/gate.md)"
    assert link in note.split("<!-- /gate verdict -->", 1)[0]
    assert "Evidence: EDITED cassettes" in note.split("<!-- /gate verdict -->", 1)[1]  # its own description stays
    assert float(judged.data.tags["gate_delta/recall/factual"]) == pytest.approx(-1 / 3, abs=1e-12)
    assert judged.data.tags["gate_delta/precision/factual"] == "0.0"
    # judged again: the verdict is replaced, not stacked
    again = runner.invoke(app, ["gate", "--output-dir", str(out), "--gold", str(tiny_gold)])
    assert again.exit_code == 1
    note = MlflowClient(local_store).get_run(report["run_id"]).data.tags["mlflow.note.content"]
    assert note.count("<!-- gate verdict -->") == 1


def test_a_seeded_baseline_has_no_paired_interval(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["baseline", "register", "--gold", str(tiny_gold)]).exit_code == 0
    out = tmp_path / "out"
    assert runner.invoke(app, ["run", "--gold", str(tiny_gold), "--output-dir", str(out)]).exit_code == 0
    gate = runner.invoke(app, ["gate", "--output-dir", str(out), "--gold", str(tiny_gold)])
    assert gate.exit_code == 0, gate.output
    report = json.loads((out / "gate.json").read_text())
    assert report["verdict"] == "pass"
    assert all(r["ci_low"] is None and r["ci_high"] is None for r in report["rows"])
    assert (
        "No paired interval: the baseline was seeded from baseline_results.json alone, with no "
        "per-conversation record." in (out / "gate.md").read_text()
    )
