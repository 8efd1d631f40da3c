"""Which run the gate judges, and that the output folder, the MLflow run and HEAD agree on it.

The gate never trusts ``run.json`` alone (docs/reliability.md, "The output folder"):

- a folder a run did not finish (``run.json`` marked RUNNING, FAILED or KILLED, or a run
  holding its lock) holds no run to judge;
- ``metrics.json`` must hold exactly the numbers the MLflow run named by ``run.json`` has;
- that run must be of HEAD (its ``git_commit`` tag), unless ``--run-id`` names it.

Each failure is a one-line reason and the gate fails closed (exit 2).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from .._exceptions import CannotEvaluate
from ..mlflow_names import TAG_GIT_COMMIT
from ..tracking._reader import TrackedRun

RUN_FILE = "run.json"
METRICS_FILE = "metrics.json"
LOCK_FILE = ".extraction-eval.lock"  # evaluation._folder.LOCK_FILE (gates may not import evaluation)
_UNFINISHED = ("RUNNING", "FAILED", "KILLED")


@dataclass(frozen=True)
class RunChoice:
    run_id: str | None
    source: str
    #: metrics.json of the folder run.json came from (None: the run was named or searched for).
    folder_metrics: dict[str, float] | None = None
    #: True unless --run-id named the run: it must then be of HEAD.
    require_head: bool = True


def _lock_holder(output_dir: Path) -> str | None:
    import fcntl
    import os

    try:
        fd = os.open(output_dir / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return os.read(fd, 32).decode("ascii", "replace").strip() or "?"
    finally:
        os.close(fd)
    return None


def _folder_metrics(output_dir: Path) -> dict[str, float]:
    path = output_dir / METRICS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CannotEvaluate(
            f"{path} is missing beside {output_dir / RUN_FILE}: the folder holds no complete run. "
            "Rerun `extraction-eval run`, or pass --run-id."
        ) from None
    except (OSError, ValueError) as exc:
        raise CannotEvaluate(f"{path} cannot be read ({exc}); rerun `extraction-eval run`.") from None
    if not isinstance(data, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in data.values()
    ):
        raise CannotEvaluate(f"{path} is not a flat object of numbers; rerun `extraction-eval run`.")
    return {str(k): float(v) for k, v in data.items()}


def choose_run(run_id: str | None, output_dir: Path) -> RunChoice:
    """``--run-id``, else ``run.json`` of a complete run, else a search by HEAD (None)."""
    if run_id:
        return RunChoice(run_id, "--run-id", require_head=False)
    holder = _lock_holder(output_dir)
    if holder is not None:
        raise CannotEvaluate(f"a run (pid {holder}) is writing {output_dir} now; gate after it has finished.")
    run_json = output_dir / RUN_FILE
    if not run_json.is_file():
        return RunChoice(None, "search")  # a finished full-set run of HEAD, by construction
    try:
        data = json.loads(run_json.read_text(encoding="utf-8"))
        found = data["run_id"]
    except (ValueError, KeyError, TypeError):
        raise CannotEvaluate(f"{run_json}: no 'run_id' in it; rerun `extraction-eval run` or pass --run-id.") from None
    status = data.get("status")
    if status in _UNFINISHED:
        reason = data.get("reason")
        raise CannotEvaluate(
            f"{run_json} says the last run did not finish cleanly (status {status}"
            + (f": {reason}" if reason else "")
            + (f"; MLflow run {found}" if found else "")
            + "); this folder holds no complete run. Rerun `extraction-eval run`, or pass --run-id."
        )
    if not isinstance(found, str) or not found:
        raise CannotEvaluate(f"{run_json}: no 'run_id' in it; rerun `extraction-eval run` or pass --run-id.")
    return RunChoice(found, str(run_json), folder_metrics=_folder_metrics(output_dir))


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def agreement_problem(choice: RunChoice, run: TrackedRun, head: str | None) -> str | None:
    """Why the folder, the MLflow run and HEAD disagree about the run to judge; None when they agree."""
    if choice.folder_metrics is not None:
        differ = sorted(
            key
            for key, value in choice.folder_metrics.items()
            if key not in run.metrics or not _same(float(run.metrics[key]), value)
        )
        if differ:
            shown = ", ".join(
                f"{k}: file {choice.folder_metrics[k]!r}, MLflow {run.metrics.get(k)!r}" for k in differ[:3]
            )
            return (
                f"metrics.json beside {choice.source} disagrees with MLflow run {run.run_id} on "
                f"{len(differ)} metric(s) ({shown}); the folder's numbers are not that run's. Rerun "
                "`extraction-eval run`."
            )
    if not choice.require_head:
        return None
    commit = run.tags.get(TAG_GIT_COMMIT)
    if head is None and commit is None:
        return None  # no repository here and none recorded: nothing to compare
    if commit != head:
        return (
            f"run {run.run_id} (from {choice.source}) is of commit {(commit or 'unknown')[:12]}, not HEAD "
            f"{(head or 'unknown')[:12]}; the gate judges a run of the code it gates. Rerun "
            f"`extraction-eval run`, or pass --run-id {run.run_id} to judge that run on purpose."
        )
    return None
