"""Log one evaluation as one MLflow run: tags, params, metrics in one batch, dataset, artifacts.

Only ``MlflowClient`` is used, never the fluent API: the fluent tracking URI and
active run are process-global state, and its start-up (context providers, pandas
for datasets and tables) costs seconds that the eval does not need.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._exceptions import TrackingError
from ..gold import CONVERSATIONS_FILE, EXPECTED_FILE, GoldSet
from ..mlflow_names import TAG_LOGGED_ARTIFACTS, TAG_NOTE
from ._refused import refusal

TABLE_FILE = "per_conversation_table.json"


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


def gold_dataset(gold: GoldSet) -> DatasetInfo:
    """The gold set as a dataset input: one row per conversation, digest of the two input files."""
    digest_source = b"".join((gold.path / name).read_bytes() for name in (CONVERSATIONS_FILE, EXPECTED_FILE))
    rows = [
        {
            "conversation_id": c.conversation_id,
            "session_date": c.session_date,
            "turns": len(c.turns),
            "expected_memories": len(gold.by_conversation[c.conversation_id]),
        }
        for c in gold.conversations
    ]
    return DatasetInfo(
        name=f"gold-{gold.version}",
        digest=hashlib.sha256(digest_source).hexdigest()[:16],
        source=str(gold.path.resolve()),
        rows=rows,
    )


def table_json(rows: Sequence[Mapping[str, Any]]) -> str:
    """MLflow's table artifact format (pandas ``orient="split"``); nested values as JSON text."""
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    data = [
        [
            value if isinstance(value, (str, int, float, type(None))) else json.dumps(value, ensure_ascii=False)
            for value in (row.get(c) for c in columns)
        ]
        for row in rows
    ]
    return json.dumps({"columns": columns, "data": data}, ensure_ascii=False)


def _dataset_entity(dataset: DatasetInfo) -> Any:
    from mlflow.entities import Dataset

    columns = sorted({k for row in dataset.rows for k in row})
    types = {k: "long" if all(isinstance(r.get(k), int) for r in dataset.rows) else "string" for k in columns}
    schema = {"mlflow_colspec": [{"type": types[c], "name": c, "required": True} for c in columns]}
    return Dataset(
        name=dataset.name,
        digest=dataset.digest,
        source_type="local",
        source=json.dumps({"uri": dataset.source}),
        schema=json.dumps(schema),
        profile=json.dumps({"num_rows": len(dataset.rows), "num_elements": len(dataset.rows) * len(columns)}),
    )


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
    from mlflow import MlflowClient
    from mlflow.entities import DatasetInput, InputTag, Metric, Param, RunTag
    from mlflow.exceptions import MlflowException

    try:
        client = MlflowClient(tracking_uri=tracking_uri)
        if run_id is not None:
            experiment_id = client.get_run(run_id).info.experiment_id
            rid = run_id
        else:
            experiment = client.get_experiment_by_name(experiment_name)
            experiment_id = (
                experiment.experiment_id if experiment is not None else client.create_experiment(experiment_name)
            )
            source_tags = {
                "mlflow.user": getpass.getuser(),
                "mlflow.source.name": "extraction-eval",
                "mlflow.source.type": "LOCAL",
            }
            rid = client.create_run(experiment_id, run_name=run_name, tags=source_tags).info.run_id
        now = int(time.time() * 1000)
        all_tags = {
            **tags,
            TAG_NOTE: description,
            TAG_LOGGED_ARTIFACTS: json.dumps([{"path": TABLE_FILE, "type": "table"}]),
        }
        client.log_batch(
            rid,
            metrics=[Metric(k, float(v), now, 0) for k, v in sorted(metrics.items())],
            params=[Param(k, v) for k, v in sorted(params.items())],
            tags=[RunTag(k, v) for k, v in sorted(all_tags.items())],
        )
        client.log_inputs(
            rid, datasets=[DatasetInput(_dataset_entity(dataset), tags=[InputTag("mlflow.data.context", "evaluation")])]
        )
        for path in artifacts:
            client.log_artifact(rid, str(path))
        with tempfile.TemporaryDirectory() as tmp:
            table = Path(tmp) / TABLE_FILE
            table.write_text(table_json(table_rows), encoding="utf-8")
            client.log_artifact(rid, str(table))
        status = "FAILED" if failed else "FINISHED"
        client.set_terminated(rid, status)
        return LoggedRun(rid, experiment_id, client.get_experiment(experiment_id).name, tracking_uri, status)
    except MlflowException as exc:
        refused = refusal(exc, tracking_uri, f"log the run to experiment {experiment_name!r}")
        if refused is not None:
            raise refused from None
        raise TrackingError(
            f"MLflow at {tracking_uri!r} refused the run: {exc.message}. Check "
            "MLFLOW_TRACKING_URI and that the server is up."
        ) from None
    except OSError as exc:
        raise TrackingError(
            f"cannot reach the MLflow tracking store at {tracking_uri!r}: {exc}. Start the "
            "server or fix MLFLOW_TRACKING_URI."
        ) from None
