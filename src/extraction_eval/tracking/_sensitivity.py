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
) -> str:
    """Create a finished run with the self-test's counts as metrics and its table as artifacts."""
    from mlflow import MlflowClient
    from mlflow.entities import Metric, RunTag
    from mlflow.exceptions import MlflowException

    try:
        client = MlflowClient(tracking_uri=uri)
        experiment = client.get_experiment_by_name(SENSITIVITY_EXPERIMENT)
        experiment_id = (
            experiment.experiment_id if experiment is not None else client.create_experiment(SENSITIVITY_EXPERIMENT)
        )
        run_id = str(client.create_run(experiment_id, run_name=run_name).info.run_id)
        now = int(time.time() * 1000)
        all_tags = {**tags, TAG_RUN_KIND: RunKind.SENSITIVITY.value, TAG_NOTE: description}
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
        message = f"MLflow at {uri!r} refused the sensitivity run: {exc.message}. Check MLFLOW_TRACKING_URI."
        raise TrackingError(hide_uri_password(message, uri)) from None
