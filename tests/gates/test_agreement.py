"""Which run the gate judges, and the one line it fails closed with when the output folder, the
MLflow run and HEAD disagree (docs/reliability.md, "The output folder"). Each refusal's whole
message is pinned: it is the line the user reads (exit 2)."""

from __future__ import annotations

import fcntl
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from extraction_eval._exceptions import CannotEvaluate
from extraction_eval.gates._agreement import RunChoice, agreement_problem, choose_run
from extraction_eval.tracking._reader import TrackedRun

RERUN = "this folder holds no complete run. Rerun `extraction-eval run`, or pass --run-id."
NO_RUN_ID = ": no 'run_id' in it; rerun `extraction-eval run` or pass --run-id."


def refusal(run_id: str | None, folder: Path) -> str:
    with pytest.raises(CannotEvaluate) as caught:
        choose_run(run_id, folder)
    return str(caught.value)


@contextmanager
def held_lock(folder: Path, content: bytes) -> Iterator[None]:
    """The folder's lock held as `run` holds it: an exclusive flock on a file holding its pid."""
    path = folder / ".extraction-eval.lock"
    path.write_bytes(content)
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield
    finally:
        os.close(fd)


def test_run_id_names_the_run_whatever_the_folder_holds(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text('{"run_id": null, "status": "RUNNING"}')
    with held_lock(tmp_path, b"4242\n"):
        assert choose_run("r-named", tmp_path) == RunChoice("r-named", "--run-id", None, False)


def test_without_run_json_the_run_is_searched_for_and_must_be_of_head(tmp_path: Path) -> None:
    assert choose_run(None, tmp_path) == RunChoice(None, "search", None, True)
    assert choose_run("", tmp_path) == RunChoice(None, "search", None, True)  # an empty --run-id names nothing


def test_a_complete_folder_gives_its_run_and_its_metrics_as_floats(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text('{"run_id": "r1", "status": "FINISHED"}')
    (tmp_path / "metrics.json").write_text('{"recall/overall": 1, "precision/overall": 0.5, "n/x": NaN}')
    choice = choose_run(None, tmp_path)
    assert (choice.run_id, choice.source, choice.require_head) == ("r1", str(tmp_path / "run.json"), True)
    assert choice.folder_metrics is not None
    assert choice.folder_metrics["recall/overall"] == 1.0 and type(choice.folder_metrics["recall/overall"]) is float
    assert choice.folder_metrics["precision/overall"] == 0.5
    assert math.isnan(choice.folder_metrics["n/x"]) and len(choice.folder_metrics) == 3
    # run.json without a status (an older run) is complete too.
    (tmp_path / "run.json").write_text('{"run_id": "r2"}')
    assert choose_run(None, tmp_path).run_id == "r2"


def test_a_folder_a_run_is_writing_is_refused_with_its_pid(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text('{"run_id": "r1"}')
    (tmp_path / "metrics.json").write_text("{}")
    with held_lock(tmp_path, b"  4242\n"):
        assert refusal(None, tmp_path) == f"a run (pid 4242) is writing {tmp_path} now; gate after it has finished."
    with held_lock(tmp_path, b""):
        assert refusal(None, tmp_path) == f"a run (pid ?) is writing {tmp_path} now; gate after it has finished."
    # The lock file of a finished run stays behind, unlocked: the folder is judged.
    assert choose_run(None, tmp_path).run_id == "r1"


def test_a_run_json_without_a_run_id_is_refused(tmp_path: Path) -> None:
    run_json = tmp_path / "run.json"
    for text in (
        "{}",
        "not json",
        "[1, 2]",
        '{"run_id": ""}',
        '{"run_id": 7}',
        '{"run_id": null, "status": "FINISHED"}',
    ):
        run_json.write_text(text)
        assert refusal(None, tmp_path) == f"{run_json}{NO_RUN_ID}", text


def test_a_run_that_did_not_finish_is_refused_with_its_status_reason_and_run(tmp_path: Path) -> None:
    run_json = tmp_path / "run.json"
    (tmp_path / "metrics.json").write_text("{}")
    cases = {
        '{"run_id": null, "status": "RUNNING", "reason": "started at 12:00"}': "status RUNNING: started at 12:00",
        '{"run_id": "r9", "status": "FAILED", "reason": "disk full"}': "status FAILED: disk full; MLflow run r9",
        '{"run_id": "r9", "status": "KILLED", "reason": null}': "status KILLED; MLflow run r9",
        '{"run_id": null, "status": "FAILED"}': "status FAILED",
    }
    for text, said in cases.items():
        run_json.write_text(text)
        assert refusal(None, tmp_path) == f"{run_json} says the last run did not finish cleanly ({said}); {RERUN}", text


def test_metrics_json_missing_unreadable_or_not_flat_numbers_is_refused(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text('{"run_id": "r1", "status": "FINISHED"}')
    metrics = tmp_path / "metrics.json"
    assert refusal(None, tmp_path) == (
        f"{metrics} is missing beside {tmp_path / 'run.json'}: the folder holds no complete run. "
        "Rerun `extraction-eval run`, or pass --run-id."
    )
    metrics.write_text("{")
    assert refusal(None, tmp_path) == (
        f"{metrics} cannot be read (Expecting property name enclosed in double quotes: line 1 column 2 (char 1)); "
        "rerun `extraction-eval run`."
    )
    metrics.unlink()
    metrics.mkdir()
    assert refusal(None, tmp_path) == (
        f"{metrics} cannot be read ([Errno 21] Is a directory: '{metrics}'); rerun `extraction-eval run`."
    )
    metrics.rmdir()
    for text in ("[1]", '{"a": true}', '{"a": "1"}', '{"a": 1, "b": null}', '{"a": {"b": 1}}'):
        metrics.write_text(text)
        assert refusal(None, tmp_path) == f"{metrics} is not a flat object of numbers; rerun `extraction-eval run`.", (
            text
        )


def tracked(metrics: dict[str, float], commit: str | None = "c" * 40) -> TrackedRun:
    tags = {"mlflow.source.git.commit": commit} if commit is not None else {}
    return TrackedRun("r1", "0", "FINISHED", 0, tags=tags, metrics=metrics)


FOLDER = RunChoice("r1", "out/run.json", folder_metrics={"a": 1.0, "b": float("nan")})


def test_the_folder_and_the_run_agree_on_every_metric_nan_equal_to_nan() -> None:
    assert agreement_problem(FOLDER, tracked({"a": 1, "b": float("nan"), "extra": 3.0}), "c" * 40) is None


def test_a_metric_that_differs_or_is_missing_in_mlflow_is_named_first_three_sorted() -> None:
    folder = RunChoice("r1", "out/run.json", folder_metrics={"d": 4.0, "a": 1.0, "c": float("nan"), "b": 2.0, "e": 5.0})
    run = tracked({"a": 1.5, "b": 2.0, "c": 3.0, "d": float("nan")})  # a, c, d differ; e is missing
    assert agreement_problem(folder, run, "c" * 40) == (
        "metrics.json beside out/run.json disagrees with MLflow run r1 on 4 metric(s) "
        "(a: file 1.0, MLflow 1.5, c: file nan, MLflow 3.0, d: file 4.0, MLflow nan); "
        "the folder's numbers are not that run's. Rerun `extraction-eval run`."
    )
    one = RunChoice("r1", "out/run.json", folder_metrics={"e": 5.0})
    assert agreement_problem(one, run, "c" * 40) == (
        "metrics.json beside out/run.json disagrees with MLflow run r1 on 1 metric(s) (e: file 5.0, MLflow None); "
        "the folder's numbers are not that run's. Rerun `extraction-eval run`."
    )
    # Checked before the commit, and even for a run --run-id named.
    named = RunChoice("r1", "--run-id", folder_metrics={"e": 5.0}, require_head=False)
    assert agreement_problem(named, run, None) is not None


def test_the_run_must_be_of_head_unless_run_id_names_it() -> None:
    head, other = "a" * 40, "0123456789abcdef" * 2
    searched = RunChoice("r1", "search")
    assert agreement_problem(searched, tracked({}, head), head) is None
    assert agreement_problem(FOLDER, tracked({"a": 1.0, "b": math.nan}, other), head) == (
        "run r1 (from out/run.json) is of commit 0123456789ab, not HEAD aaaaaaaaaaaa; the gate judges a run "
        "of the code it gates. Rerun `extraction-eval run`, or pass --run-id r1 to judge that run on purpose."
    )
    assert agreement_problem(searched, tracked({}, None), head) == (
        "run r1 (from search) is of commit unknown, not HEAD aaaaaaaaaaaa; the gate judges a run "
        "of the code it gates. Rerun `extraction-eval run`, or pass --run-id r1 to judge that run on purpose."
    )
    assert agreement_problem(searched, tracked({}, other), None) == (
        "run r1 (from search) is of commit 0123456789ab, not HEAD unknown; the gate judges a run "
        "of the code it gates. Rerun `extraction-eval run`, or pass --run-id r1 to judge that run on purpose."
    )
    # No repository here and no commit recorded: nothing to compare.
    assert agreement_problem(searched, tracked({}, None), None) is None
    # --run-id names a run on purpose: any commit.
    assert agreement_problem(RunChoice("r1", "--run-id", require_head=False), tracked({}, other), head) is None


def test_run_json_and_metrics_json_are_read_as_utf_8_whatever_the_locale(tmp_path: Path) -> None:
    # `run` writes both files in UTF-8 (ensure_ascii=False; a failed run's reason is an error
    # message, in any language). A gate under a C locale (an ASCII codec, as in a bare CI
    # container) reads them the same. The child imports the code under test from where this
    # process did (for mutation testing), and the same calls run here too.
    import subprocess
    import sys

    import extraction_eval

    complete, failed = tmp_path / "complete", tmp_path / "failed"
    complete.mkdir()
    failed.mkdir()
    (complete / "run.json").write_text('{"run_id": "r1"}')
    (complete / "metrics.json").write_text('{"recall/café": 0.5}', encoding="utf-8")
    (failed / "run.json").write_text(
        '{"run_id": "r9", "status": "FAILED", "reason": "disque plein : /données"}', encoding="utf-8"
    )
    assert choose_run(None, complete).folder_metrics == {"recall/café": 0.5}
    said = f"{failed / 'run.json'} says the last run did not finish cleanly (status FAILED: disque plein : /données"
    assert refusal(None, failed).startswith(said)
    code = (
        "import sys; from pathlib import Path; from extraction_eval.gates._agreement import choose_run\n"
        "try: print(ascii(choose_run(None, Path(sys.argv[1])).folder_metrics))\n"
        "except Exception as exc: print(ascii(str(exc)))"
    )
    package_root = Path(extraction_eval.__file__).parents[1]
    env = {
        **os.environ,
        "LC_ALL": "C",
        "PYTHONUTF8": "0",
        "PYTHONCOERCECLOCALE": "0",
        "PYTHONPATH": str(package_root),
    }

    def in_child(folder: Path) -> str:
        child = subprocess.run(
            [sys.executable, "-c", code, str(folder)],
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=60,
            cwd=package_root.parent,  # the project root (mutmut's child reads its pyproject.toml there)
        )
        assert child.returncode == 0, child.stderr
        return child.stdout

    assert in_child(complete) == "{'recall/caf\\xe9': 0.5}\n"
    assert in_child(failed).startswith(ascii(said)[:-1])


def test_a_lock_file_of_garbage_is_shown_bounded_and_never_crashes_the_gate(tmp_path: Path) -> None:
    # The holder's pid is read as at most 32 bytes of ASCII; anything else is replaced, not fatal.
    (tmp_path / "run.json").write_text('{"run_id": "r1"}')
    with held_lock(tmp_path, b"\xff4242\n"):
        assert (
            refusal(None, tmp_path) == f"a run (pid \ufffd4242) is writing {tmp_path} now; gate after it has finished."
        )
    with held_lock(tmp_path, b"0123456789" * 4):
        assert refusal(None, tmp_path) == (
            f"a run (pid 01234567890123456789012345678901) is writing {tmp_path} now; gate after it has finished."
        )
