"""Issue 12, point 1: the output folder is one unit, and the gate judges only a run the folder,
the store and HEAD agree on (docs/reliability.md, "The output folder")."""

from __future__ import annotations

import fcntl
import json
import os
import signal
from pathlib import Path

import pytest
from mlflow import MlflowClient
from typer.testing import CliRunner

from extraction_eval import Mode, run_eval
from extraction_eval.cli import app
from extraction_eval.gates._gate_run import run_gate

from ..conftest import TINY, free_port
from ..helpers import assert_marked_failed, committed_gold_repo, drop_memories, git, mutate_cassettes

runner = CliRunner()


def cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _broken_copy(gold: Path, dest: Path) -> Path:
    """The same gold set whose answers for 4 of the 8 conversations come back empty (a worse run)."""
    import shutil

    shutil.copytree(gold, dest)
    mutate_cassettes(dest, drop_memories({"t01", "t02", "t03", "t04"}))
    return dest


def test_the_issue_scenario_a_failed_run_never_leaves_the_old_run_json_to_pass(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = str(tmp_path / "out")
    assert cli("baseline", "register", "--gold", str(tiny_gold))[0] == 0
    code, stdout, _ = cli("run", "--mode", "cassette", "--gold", str(tiny_gold), "--output-dir", out)
    assert code == 0, stdout
    assert cli("gate", "--output-dir", out, "--gold", str(tiny_gold))[0] == 0  # the good run passes
    first = json.loads((tmp_path / "out" / "run.json").read_text())["run_id"]

    # the issue's second command: worse answers, and a tracking server that is not there
    broken = _broken_copy(tiny_gold, tmp_path / "broken")
    dead = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", dead)
    monkeypatch.setenv("EXTRACTION_EVAL_TRACKING_TIMEOUT_S", "1")
    code, stdout, stderr = cli("run", "--mode", "cassette", "--gold", str(broken), "--output-dir", out)
    assert code == 2
    assert f"the MLflow tracking server at {dead} does not answer (ConnectError); retrying for up to 1 s" in stderr
    assert f"error: the MLflow tracking server at '{dead}' did not answer within 1 s (ConnectError)" in stderr
    marker = assert_marked_failed(tmp_path / "out", "TrackingError: the MLflow tracking server")
    assert marker["run_id"] is None

    # the gate, against the store that holds the first run: fails closed, never judges the old run
    monkeypatch.setenv("MLFLOW_TRACKING_URI", local_store)
    code, stdout, _ = cli("gate", "--output-dir", out, "--gold", str(tiny_gold))
    assert code == 2, stdout
    assert "says the last run did not finish cleanly (status FAILED: TrackingError: the MLflow" in stdout
    assert first not in stdout


def test_the_folder_holds_exactly_one_run_and_its_own_files(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")  # not the run's: kept
    (out / "comparison.md").write_text("an older live run's comparison\n")  # the run's: cleared
    (out / "gate.md").write_text("## PASS of the previous run\n")
    result = run_eval(Mode.SMOKE, tiny_gold, out)
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        ".extraction-eval.lock",
        "cassette_manifest.json",
        "metrics.json",
        "notes.txt",
        "per_conversation.jsonl",
        "plots",
        "responses.jsonl",
        "run.json",
    ]
    assert sorted(p.name for p in result.files) == [
        "cassette_manifest.json",
        "metrics.json",
        "per_conversation.jsonl",
        "plots",
        "responses.jsonl",
        "run.json",
    ]
    assert sorted(p.name for p in (out / "plots").iterdir()) == [
        "category_confusion.png",
        "per_category.png",
        "temporal_confusion.png",
    ]
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["status"] == "FINISHED" and run_json["run_id"] == result.logged.run_id
    client = MlflowClient(local_store)
    run = client.get_run(result.logged.run_id)
    written = json.loads((out / "metrics.json").read_text())
    assert run.data.metrics == {k: v for k, v in written.items() if not k.startswith("counts/")}
    assert {k: float(v) for k, v in run.data.params.items() if k.startswith("counts/")} == {
        k: v for k, v in written.items() if k.startswith("counts/")
    }  # counts are params (docs/decisions.md, "Counts are params")


def test_a_second_run_into_a_held_folder_is_refused_and_touches_nothing(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run_eval(Mode.SMOKE, tiny_gold, out)
    before = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    fd = os.open(out / ".extraction-eval.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
        os.pwrite(fd, b"4242\n", 0)
        code, _, stderr = cli("run", "--mode", "smoke", "--gold", str(tiny_gold), "--output-dir", str(out))
        # the gate refuses to judge a folder being written too
        result, markdown = run_gate(None, out, tiny_gold)
    finally:
        os.close(fd)
    assert code == 2
    assert stderr == (
        f"error: another extraction-eval run (pid 4242) is writing the output folder {out}; two runs never "
        "share a folder. Wait for it to finish, or pass another --output-dir.\n"
    )
    assert result.exit_code == 2 and f"a run (pid 4242) is writing {out} now" in markdown
    after = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name not in ("gate.md", "gate.json")}
    assert {k: v for k, v in after.items() if k != ".extraction-eval.lock"} == {
        k: v for k, v in before.items() if k != ".extraction-eval.lock"
    }


def test_a_failure_while_logging_ends_the_mlflow_run_and_marks_the_folder(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow.tracking import MlflowClient as Client

    out = tmp_path / "out"
    run_eval(Mode.SMOKE, tiny_gold, out)

    def disk_full(self: object, run_id: str, local_path: str, artifact_path: str | None = None) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Client, "log_artifact", disk_full)
    code, _, stderr = cli("run", "--mode", "smoke", "--gold", str(tiny_gold), "--output-dir", str(out))
    assert code == 2
    marker = assert_marked_failed(out, "TrackingError: cannot write the MLflow tracking store")
    rid = marker["run_id"]
    assert rid and f"MLflow run {rid} ended FAILED: OSError: [Errno 28] No space left on device\n" in stderr
    assert f"error: cannot write the MLflow tracking store at {local_store!r} (run {rid} ended FAILED)" in stderr
    assert MlflowClient(local_store).get_run(rid).info.status == "FAILED"


@pytest.mark.parametrize(
    ("raise_it", "status", "code", "line"),
    [
        (
            lambda: (_ for _ in ()).throw(KeyboardInterrupt()),
            "KILLED",
            130,
            "interrupted (SIGINT): stopped (exit 130).\n",
        ),
        (lambda: os.kill(os.getpid(), signal.SIGTERM), "KILLED", 143, "terminated (SIGTERM): stopped (exit 143).\n"),
        (lambda: (_ for _ in ()).throw(RuntimeError("a bug")), "FAILED", None, ""),
    ],
    ids=["sigint", "sigterm", "exception"],
)
def test_a_signal_or_a_bug_after_the_run_is_created_ends_it_and_names_it(
    raise_it: object,
    status: str,
    code: int | None,
    line: str,
    tiny_gold: Path,
    local_store: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mlflow.tracking import MlflowClient as Client

    def log_inputs(self: object, *args: object, **kwargs: object) -> None:
        raise_it()  # type: ignore[operator]

    monkeypatch.setattr(Client, "log_inputs", log_inputs)
    out = tmp_path / "out"
    args = ["run", "--mode", "smoke", "--gold", str(tiny_gold), "--output-dir", str(out)]
    if code is None:
        with pytest.raises(RuntimeError, match="a bug"):
            runner.invoke(app, args, catch_exceptions=False)
        stderr = ""
    else:
        result = runner.invoke(app, args, catch_exceptions=False)
        assert result.exit_code == code
        stderr = result.stderr
        assert stderr.endswith(line)
    marker = json.loads((out / "run.json").read_text())
    assert marker["status"] == ("FAILED" if code is None else "KILLED")
    rid = marker["run_id"]
    run = MlflowClient(local_store).get_run(rid)
    assert run.info.status == status
    if code is not None:
        reason = "interrupted (SIGINT)" if code == 130 else "terminated (SIGTERM)"
        assert f"\nMLflow run {rid} ended KILLED: {reason}\n" + line in stderr


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    files = {"MLproject": "name: t\n", ".gitignore": "mlflow.db\nmlartifacts/\nout/\n"}
    committed_gold_repo(root, TINY, files=files)
    monkeypatch.chdir(root)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{root / 'mlflow.db'}")
    return root


def test_the_gate_checks_run_json_metrics_json_mlflow_and_head_agree(project: Path) -> None:
    gold, out = project / "gold" / "tiny", project / "out"
    assert cli("baseline", "register", "--gold", str(gold))[0] == 0
    old = run_eval(Mode.CASSETTE, gold, out)
    assert run_gate(None, out, gold)[0].exit_code == 0
    old_files = {name: (out / name).read_text() for name in ("run.json", "metrics.json")}

    # metrics.json that is not the run's numbers
    metrics = json.loads(old_files["metrics.json"])
    (out / "metrics.json").write_text(json.dumps({**metrics, "macro/recall": 0.5}))
    result, markdown = run_gate(None, out, gold)
    assert result.exit_code == 2
    assert (
        f"metrics.json beside {out / 'run.json'} disagrees with MLflow run {old.logged.run_id} on 1 metric(s) "
        f"(macro/recall: file 0.5, MLflow {metrics['macro/recall']!r})"
    ) in markdown

    # HEAD moves on; a run.json naming the older passing run (hand-edited back) fails closed
    (project / "notes.txt").write_text("a change\n")
    git(project, "add", "notes.txt")
    git(project, "commit", "-qm", "change")
    head = git(project, "rev-parse", "HEAD")
    for name, text in old_files.items():
        (out / name).write_text(text)
    result, markdown = run_gate(None, out, gold)
    assert result.exit_code == 2
    assert (
        f"run {old.logged.run_id} (from {out / 'run.json'}) is of commit {old.tags['mlflow.source.git.commit'][:12]}, not HEAD {head[:12]}"
        in markdown
    )
    # ... unless --run-id names it on purpose
    assert run_gate(old.logged.run_id, out, gold)[0].exit_code == 0

    # a run.json naming a run id the store does not hold
    (out / "run.json").write_text(json.dumps({**json.loads(old_files["run.json"]), "run_id": "f" * 32}))
    result, markdown = run_gate(None, out, gold)
    assert (
        result.exit_code == 2
        and f"run {'f' * 32!r} (from {out / 'run.json'}) is not in the tracking store." in markdown
    )


@pytest.mark.server
def test_a_tracking_server_killed_mid_run_leaves_a_named_run_and_a_marked_folder(
    tiny_gold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's "killed tracking server": the run exists, the server dies while it is logged.
    The harness cannot end it (the store is gone), so it names it, says it is left RUNNING and
    how to end it, within the budget; the folder is marked with its id; exit 2."""
    import time

    from mlflow.tracking import MlflowClient as Client

    from ..conftest import MlflowServer

    (tmp_path / "server").mkdir()
    server = MlflowServer(tmp_path / "server")
    server.start()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", server.uri)
    monkeypatch.setenv("EXTRACTION_EVAL_TRACKING_TIMEOUT_S", "4")
    original = Client.log_inputs

    def kill_then_log(self: object, *args: object, **kwargs: object) -> object:
        server.stop()
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Client, "log_inputs", kill_then_log)
    out = tmp_path / "out"
    started = time.monotonic()
    try:
        code, _, stderr = cli("run", "--mode", "smoke", "--gold", str(tiny_gold), "--output-dir", str(out))
    finally:
        server.stop()
    took = time.monotonic() - started
    assert code == 2
    marker = assert_marked_failed(out, "TrackingError: cannot reach the MLflow tracking server")
    rid = marker["run_id"]
    assert rid and f"MLflow run {rid} is left RUNNING (MlflowException: " in stderr
    assert f"end it with `mlflow runs delete --run-id {rid}` or in the UI" in stderr
    assert f"error: cannot reach the MLflow tracking server at {server.uri!r} (run {rid} ended FAILED)" not in stderr
    assert took < 60  # the budget's retries, not MLflow's minutes
