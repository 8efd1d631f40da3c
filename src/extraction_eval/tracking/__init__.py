"""MLflow tracking: logging runs, registered baselines, and reading both back for the gate.

Nothing here imports mlflow at import time.
"""

from ..mlflow_names import BASELINE_ALIAS, BASELINE_EXPERIMENT, EXPERIMENT, VLLM_EXPERIMENT, registered_model_name
from ._records import BaselineRecord, RunRecord, TrackingReader

__all__ = [
    "BASELINE_ALIAS",
    "BASELINE_EXPERIMENT",
    "EXPERIMENT",
    "VLLM_EXPERIMENT",
    "BaselineRecord",
    "RunRecord",
    "TrackingReader",
    "registered_model_name",
]
