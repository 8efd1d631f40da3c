"""The plots are drawn in a worker thread while the run is logged (tracking._background,
tracking._log.log_eval_run): a complete run still has all of them, in the folder and in the
store; an exception in the worker surfaces unchanged, ends the MLflow run FAILED and marks the
folder; a failure in the logging waits for the worker, so nothing is left in the folder."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from mlflow import MlflowClient

from extraction_eval import Mode, run_eval
from extraction_eval.evaluation import _plots
from extraction_eval.tracking._background import Background, WorkerFailed

from ..helpers import assert_marked_failed

PLOTS = ["category_confusion.png", "per_category.png", "temporal_confusion.png"]


def _worker_alive() -> bool:
    return any(t.name == "extraction-eval-plots" for t in threading.enumerate())


def test_background_returns_the_value_or_carries_the_exception() -> None:
    assert Background(lambda: 42, "t").result() == 42
    error = OSError(28, "No space left on device")

    def fail() -> None:
        raise error

    job = Background(fail, "t")
    with pytest.raises(WorkerFailed) as caught:
        job.result()
    assert caught.value.error is error
    job.wait()  # waiting again after a failure returns at once


def test_a_complete_run_has_every_plot_in_the_folder_and_the_store(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = run_eval(Mode.CASSETTE, tiny_gold, out)
    assert sorted(p.name for p in (out / "plots").iterdir()) == PLOTS
    client = MlflowClient(local_store)
    run = client.get_run(result.logged.run_id)
    assert run.info.status == "FINISHED"
    assert sorted(a.path for a in client.list_artifacts(run.info.run_id, "plots")) == [f"plots/{n}" for n in PLOTS]
    for name in PLOTS:
        local = Path(client.download_artifacts(run.info.run_id, f"plots/{name}", str(tmp_path / "dl")))
        assert local.read_bytes() == (out / "plots" / name).read_bytes()
    assert not _worker_alive()


def test_an_exception_in_the_plot_worker_surfaces_unchanged_and_fails_the_run(
    tiny_gold: Path,
    local_store: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = OSError(28, "No space left on device")

    def full_disk(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(_plots, "_confusion", full_disk)
    out = tmp_path / "out"
    with pytest.raises(OSError) as caught:
        run_eval(Mode.CASSETTE, tiny_gold, out)
    assert caught.value is error  # the worker's own exception, not a TrackingError about the store
    marker = assert_marked_failed(out, "OSError: [Errno 28] No space left on device")
    rid = marker["run_id"]
    assert rid and MlflowClient(local_store).get_run(rid).info.status == "FAILED"
    assert f"MLflow run {rid} ended FAILED: OSError: [Errno 28] No space left on device" in capsys.readouterr().err
    assert not (out / "plots").exists()
    assert not _worker_alive()


def test_a_failure_while_logging_waits_for_the_worker_and_leaves_nothing(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow.tracking import MlflowClient as Client

    original = _plots.write_plots
    finished: list[float] = []

    def slow_plots(*args: object, **kwargs: object) -> object:
        time.sleep(0.5)  # still drawing when the logging fails
        paths = original(*args, **kwargs)  # type: ignore[arg-type]
        finished.append(time.monotonic())
        return paths

    def log_inputs(self: object, *args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("extraction_eval.pipeline._run.write_plots", slow_plots)
    monkeypatch.setattr(Client, "log_inputs", log_inputs)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="a bug"):
        run_eval(Mode.CASSETTE, tiny_gold, out)
    returned = time.monotonic()
    assert finished and finished[0] <= returned  # the worker had stopped before the failure was handled
    marker = assert_marked_failed(out, "RuntimeError: a bug")
    assert MlflowClient(local_store).get_run(marker["run_id"]).info.status == "FAILED"
    assert not (out / "plots").exists()
    assert not _worker_alive()
