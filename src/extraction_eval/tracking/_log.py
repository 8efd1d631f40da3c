"""Log one evaluation as one MLflow run: tags, params, metrics in one batch, dataset, artifacts."""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._exceptions import TrackingError
from ._names import TAG_NOTE


@dataclass(frozen=True)
class DatasetInfo:
    """The gold set as an MLflow dataset input."""

    name: str
    digest: str
    source: str
    rows: Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class LoggedRun:
    run_id: str
    experiment_id: str
    experiment_name: str
    tracking_uri: str
    status: str


def _table(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    columns: dict[str, list[Any]] = {}
    for row in rows:
        for key in row:
            columns.setdefault(key, [])
    for row in rows:
        for key, values in columns.items():
            value = row.get(key)
            values.append(
                value if isinstance(value, (str, int, float, type(None))) else json.dumps(value, ensure_ascii=False)
            )
    return columns


def log_eval_run(
    *,
    tracking_uri: str,
    experiment_name: str,
    run_id: str | None,
    run_name: str,
    tags: Mapping[str, str],
    params: Mapping[str, str],
    metrics: Mapping[str, float],
    description: str,
    artifacts: Sequence[Path],
    table_rows: Sequence[Mapping[str, Any]],
    dataset: DatasetInfo,
    failed: bool,
) -> LoggedRun:
    """Create (or, under ``mlflow run``, continue) the run and log everything to it."""
    import mlflow
    import pandas as pd
    from mlflow.data.pandas_dataset import from_pandas
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.exceptions import MlflowException

    try:
        mlflow.set_tracking_uri(tracking_uri)
        client = mlflow.MlflowClient(tracking_uri=tracking_uri)
        if run_id is not None:
            active = mlflow.start_run(run_id=run_id)
        else:
            experiment = client.get_experiment_by_name(experiment_name)
            experiment_id = (
                experiment.experiment_id if experiment is not None else client.create_experiment(experiment_name)
            )
            active = mlflow.start_run(experiment_id=experiment_id, run_name=run_name)
        with active as run:
            rid = run.info.run_id
            now = int(time.time() * 1000)
            all_tags = {**tags, TAG_NOTE: description}
            client.log_batch(
                rid,
                metrics=[Metric(k, float(v), now, 0) for k, v in sorted(metrics.items())],
                params=[Param(k, v) for k, v in sorted(params.items())],
                tags=[RunTag(k, v) for k, v in sorted(all_tags.items())],
            )
            frame = pd.DataFrame(list(dataset.rows))
            with warnings.catch_warnings():
                # MLflow's hints about local path sources and integer columns: not ours to fix.
                warnings.simplefilter("ignore", UserWarning)
                gold = from_pandas(frame, source=dataset.source, name=dataset.name, digest=dataset.digest)
                mlflow.log_input(gold, context="evaluation")
            for path in artifacts:
                client.log_artifact(rid, str(path))
            mlflow.log_table(_table(table_rows), artifact_file="per_conversation_table.json", run_id=rid)
            experiment_id = run.info.experiment_id
            status = "FAILED" if failed else "FINISHED"
            mlflow.end_run(status=status)
        found = client.get_experiment(experiment_id)
        return LoggedRun(rid, experiment_id, found.name, tracking_uri, status)
    except MlflowException as exc:
        raise TrackingError(
            f"MLflow at {tracking_uri!r} refused the run: {exc.message}. Check "
            "MLFLOW_TRACKING_URI and that the server is up."
        ) from None
    except OSError as exc:
        raise TrackingError(
            f"cannot reach the MLflow tracking store at {tracking_uri!r}: {exc}. Start the "
            "server or fix MLFLOW_TRACKING_URI."
        ) from None
