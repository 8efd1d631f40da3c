"""A finished run's stored files, read back: from its output folder when that folder's run.json
names the run, else from its MLflow artifacts (``rescore`` and ``diff`` read runs this way)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .._exceptions import TrackingError
from ..evaluation import RUN_FILE
from ._reader import TrackedRun, TrackingReader


@dataclass(frozen=True)
class StoredFile:
    text: str
    #: Where it was read: a path, or ``run <id> artifact <name>``.
    source: str


def folder_holds(output_dir: Path | None, run_id: str) -> bool:
    """Whether ``output_dir/run.json`` names this run."""
    if output_dir is None:
        return False
    try:
        data = json.loads((output_dir / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("run_id") == run_id


def get_run(reader: TrackingReader, run_id: str) -> TrackedRun:
    run = reader.get_run(run_id)
    if run is None:
        raise TrackingError(f"run {run_id!r} is not in the tracking store; check the id and MLFLOW_TRACKING_URI.")
    return run


def read_stored(reader: TrackingReader, run: TrackedRun, name: str, folders: tuple[Path, ...] = ()) -> StoredFile:
    """``name`` of this run, from the first folder whose run.json names it, else from its artifacts."""
    for folder in folders:
        if folder_holds(folder, run.run_id) and (folder / name).is_file():
            return StoredFile((folder / name).read_text(encoding="utf-8"), str(folder / name))
    text = reader.read_artifact(run, name)
    if text is None:
        raise TrackingError(
            f"run {run.run_id} has no {name} artifact (a run logged before {name} was written, or its "
            f"artifacts are not readable from here); run `extraction-eval run` again to get a run that has one."
        )
    return StoredFile(text, f"run {run.run_id} artifact {name}")
