"""MLflow tracking: logging runs, registered baselines, and reading both back for the gate.

Nothing here imports mlflow at import time. The experiment, tag and registered-model
names are in ``extraction_eval.mlflow_names``.
"""

from ._reader import RegisteredBaseline, TrackedRun, TrackingReader

__all__ = ["RegisteredBaseline", "TrackedRun", "TrackingReader"]
