"""The sensitivity self-test as one MLflow run in its own experiment (``extraction-eval-sensitivity``)."""

from __future__ import annotations

import time
from collections.abc import Mapping

from .._exceptions import TrackingError
from .._settings import hide_uri_password
from ..mlflow_names import SENSITIVITY_EXPERIMENT, TAG_NOTE, TAG_RUN_KIND, RunKind


def log_sensitivity_run(
    uri: str,
    *,
    run_name: str,
    tags: Mapping[str, str],
    metrics: Mapping[str, float],
    artifacts: Mapping[str, str],
    description: str,
    experiment: str = SENSITIVITY_EXPERIMENT,
    run_kind: RunKind = RunKind.SENSITIVITY,
) -> str:
    """Create a finished run in ``experiment`` with a self-test's numbers as metrics and its tables
    as artifacts (the sensitivity self-test's, or ``matcher validate``'s)."""
    from mlflow import MlflowClient
    from mlflow.entities import Metric, RunTag
    from mlflow.exceptions import MlflowException

    try:
        client = MlflowClient(tracking_uri=uri)
        found = client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found is not None else client.create_experiment(experiment)
        run_id = str(client.create_run(experiment_id, run_name=run_name).info.run_id)
        now = int(time.time() * 1000)
        all_tags = {**tags, TAG_RUN_KIND: run_kind.value, TAG_NOTE: description}
        client.log_batch(
            run_id,
            metrics=[Metric(k, float(v), now, 0) for k, v in sorted(metrics.items())],
            tags=[RunTag(k, v) for k, v in sorted(all_tags.items())],
        )
        for name, text in artifacts.items():
            client.log_text(run_id, text, name)
        client.set_terminated(run_id, "FINISHED")
        return run_id
    except MlflowException as exc:
        message = f"MLflow at {uri!r} refused the {run_kind.value} run: {exc.message}. Check MLFLOW_TRACKING_URI."
        raise TrackingError(hide_uri_password(message, uri)) from None
