"""What ``baseline register --replay`` asks of the tracking store (the pipeline never imports
MLflow): the current baseline version, the provider's experiment, and the replay's tags."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..mlflow_names import TAG_BASELINE_REPLAY
from ._baseline import _client, _current_alias, _store_errors


class ReplayStore:
    def __init__(self, uri: str):
        self.uri = uri
        self._client: Any = _client(uri)

    def current(self, name: str, alias: str) -> tuple[str, str] | None:
        """(version, run id) of the alias, or None."""
        with _store_errors(self.uri, "read the registered baseline"):
            found = _current_alias(self._client, name, alias)
        return None if found is None else (str(found.version), str(found.run_id))

    def ensure_experiment(self, name: str) -> None:
        """Create it here, so its artifact root is this process's (a SQLite store's default is ./mlruns)."""
        with _store_errors(self.uri, f"create experiment {name!r}"):
            if self._client.get_experiment_by_name(name) is None:
                self._client.create_experiment(name)

    def mark_run(self, run_id: str, origin: str) -> Mapping[str, float]:
        """Tag the replayed run with the file it replayed; returns its metrics."""
        with _store_errors(self.uri, "tag the replayed run"):
            self._client.set_tag(run_id, TAG_BASELINE_REPLAY, origin)
            return dict(self._client.get_run(run_id).data.metrics)

    def mark_version(self, name: str, version: str, origin: str) -> None:
        with _store_errors(self.uri, "tag the baseline's model version"):
            self._client.set_model_version_tag(name, version, TAG_BASELINE_REPLAY, origin)
