"""Issue 12, point 7: each failure of the issue's list is exit 2 with a line that names the file or
resource and the fix, never a traceback (docs/reliability.md)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mlflow import MlflowClient
from typer.testing import CliRunner

from extraction_eval import Mode, run_eval
from extraction_eval._jsonio import atomic_write_text, write_json
from extraction_eval.cli import app

runner = CliRunner()


def cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_an_output_folder_that_cannot_be_created_is_exit_2(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    code, _, stderr = cli("run", "--mode", "smoke", "--gold", str(tiny_gold), "--output-dir", str(blocker / "out"))
    assert code == 2
    assert stderr == (
        f"error: cannot create the output folder {blocker / 'out'} (Not a directory); fix it or pass another "
        "--output-dir.\n"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_output_folder_is_exit_2(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        code, _, stderr = cli("run", "--mode", "smoke", "--gold", str(tiny_gold), "--output-dir", str(out))
    finally:
        out.chmod(stat.S_IRWXU)
    assert code == 2
    assert stderr == (
        f"error: cannot write the output folder {out} (Permission denied); make it writable or pass another "
        "--output-dir.\n"
    )


def test_a_full_disk_while_writing_the_outputs_is_exit_2_and_the_folder_is_marked(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from extraction_eval.evaluation import _outputs

    out = tmp_path / "out"
    run_eval(Mode.SMOKE, tiny_gold, out)

    def full(path: Path, lines: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_outputs, "atomic_write_lines", full)
    code, _, stderr = cli("run", "--mode", "smoke", "--gold", str(tiny_gold), "--output-dir", str(out))
    assert code == 2
    assert stderr.endswith(
        f"error: cannot write the output folder {out} (No space left on device); free space on that disk or "
        "pass another --output-dir.\n"
    )
    marker = json.loads((out / "run.json").read_text())
    assert marker["status"] == "FAILED" and marker["reason"].startswith("OutputError: cannot write")
    assert not (out / "metrics.json").exists()


def _passing_run(tiny_gold: Path, out: Path) -> str:
    assert cli("baseline", "register", "--gold", str(tiny_gold))[0] == 0
    return run_eval(Mode.CASSETTE, tiny_gold, out).logged.run_id


def test_a_gate_md_that_cannot_be_written_fails_closed_even_on_a_pass(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    run_id = _passing_run(tiny_gold, tmp_path / "out")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    folder = blocker / "out"
    code, _, stderr = cli("gate", "--run-id", run_id, "--output-dir", str(folder), "--gold", str(tiny_gold))
    assert code == 2
    assert stderr == (
        f"error: cannot write {folder / 'gate.md'} (Not a directory); the report is not saved, so the step fails "
        f"closed. Make {folder} writable or pass another --output-dir.\n"
    )


def test_a_step_summary_that_cannot_be_written_fails_closed_even_on_a_pass(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    _passing_run(tiny_gold, out)
    summary = tmp_path / "summary-is-a-folder"
    summary.mkdir()
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, _, stderr = cli("gate", "--output-dir", str(out), "--gold", str(tiny_gold))
    assert code == 2
    assert stderr == (
        f"error: cannot append to $GITHUB_STEP_SUMMARY {summary} (Is a directory); the verdict is not published, "
        "so the step fails closed. Fix the path or unset GITHUB_STEP_SUMMARY.\n"
    )


def test_a_baseline_pointing_at_a_deleted_run_fails_closed(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _passing_run(tiny_gold, out)
    client = MlflowClient(local_store, registry_uri=local_store)
    version = client.get_model_version_by_alias("extraction-eval-openai", "baseline-tiny")
    client.delete_run(version.run_id)
    code, stdout, _ = cli("gate", "--output-dir", str(out), "--gold", str(tiny_gold))
    assert code == 2
    assert (
        f"- the baseline of 'openai' (extraction-eval-openai version {version.version}) points at run "
        f"{version.run_id}, which is deleted; a deleted run is no bar."
    ) in stdout


@pytest.mark.parametrize("value", ["NaN", "Infinity"])
def test_nan_in_baseline_results_is_refused_by_register_and_validate(
    value: str, tiny_gold: Path, local_store: str
) -> None:
    path = tiny_gold / "baseline_results.json"
    data = json.loads(path.read_text())
    data["providers"]["openai"]["metrics"]["macro/recall"] = float(value.replace("Infinity", "inf"))
    path.write_text(json.dumps(data))  # json writes NaN and Infinity, as a careless script would
    for args in (["baseline", "register", "--gold", str(tiny_gold)], ["gold", "validate", "--gold", str(tiny_gold)]):
        code, stdout, stderr = cli(*args)
        assert code == 2, stdout
        assert (
            f"metric 'macro/recall' is {float(value.replace('Infinity', 'inf'))!r}; a baseline metric is a finite number"
            in stdout + stderr
        )


def test_a_streamed_write_that_fails_midway_leaves_the_old_file_whole(tmp_path: Path) -> None:
    """atomic_write_lines writes lines as they come (a 100x run's per-conversation file is never
    held whole); a failure after some lines leaves the previous file as it was and no temp file."""
    from extraction_eval._jsonio import atomic_write_lines

    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "per_conversation.jsonl"
    atomic_write_lines(target, (f"{i}\n" for i in range(3)))
    assert target.read_text() == "0\n1\n2\n"

    def lines() -> Any:
        yield "new 0\n"
        yield "new 1\n"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        atomic_write_lines(target, lines())
    assert target.read_text() == "0\n1\n2\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["per_conversation.jsonl"]


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_atomic_writes_respect_the_umask(mask: int, tmp_path: Path) -> None:
    old = os.umask(mask)
    try:
        atomic_write_text(tmp_path / "a.txt", "x")
        write_json(tmp_path / "b.json", {})
    finally:
        os.umask(old)
    for name in ("a.txt", "b.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~mask


@pytest.mark.slow
def test_concurrent_first_runs_on_a_fresh_sqlite_file_both_succeed(tiny_gold: Path, tmp_path: Path) -> None:
    """Two runs start at once against a store file that does not exist yet (alembic raced to
    "duplicate column" before the lock): both finish, each with its own run."""
    db = tmp_path / "fresh" / "mlflow.db"
    db.parent.mkdir()
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{db}"}
    exe = Path(sys.executable).with_name("extraction-eval")
    procs = [
        subprocess.Popen(
            [str(exe), "run", "--mode", "smoke", "--gold", str(tiny_gold), "--output-dir", str(tmp_path / f"out{i}")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    ids = {json.loads((tmp_path / f"out{i}" / "run.json").read_text())["run_id"] for i in range(2)}
    assert len(ids) == 2
    shutil.rmtree(tmp_path / "fresh")
