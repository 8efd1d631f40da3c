"""What the gate reads from a tracking store, independent of how it was read."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..mlflow_names import TAG_ENFORCEMENT, TAG_GATED, TAG_MEASURED, flag


@dataclass(frozen=True)
class TrackedRun:
    """A run as the gate reads it from a tracking store."""

    run_id: str
    experiment_id: str
    status: str
    start_time: int
    tags: Mapping[str, str] = field(default_factory=dict)
    metrics: Mapping[str, float] = field(default_factory=dict)
    artifact_uri: str = ""
    #: Soft-deleted (lifecycle stage "deleted"): still readable by id, never a bar or a verdict.
    deleted: bool = False


@dataclass(frozen=True)
class RegisteredBaseline:
    """The model version behind alias ``baseline`` and the run it points at."""

    provider: str
    model_name: str
    version: str
    run_id: str
    tags: Mapping[str, str]
    run: TrackedRun | None

    @property
    def enforcement(self) -> str | None:
        return self.tags.get(TAG_ENFORCEMENT)

    @property
    def gated_metrics(self) -> tuple[str, ...]:
        raw = self.tags.get(TAG_GATED)
        if not raw:
            return ()
        value = json.loads(raw)
        return tuple(str(v) for v in value)

    @property
    def measured_metrics(self) -> Mapping[str, float] | None:
        """The baseline run's metrics; None without a run or when it was seeded unmeasured."""
        if self.run is None or self.tags.get(TAG_MEASURED) == flag(False):
            return None
        return self.run.metrics


class TrackingReader(Protocol):
    """Read access the regression gate needs; REST (httpx) or the MLflow client behind it."""

    def get_run(self, run_id: str) -> TrackedRun | None: ...

    def newest_run(self, experiment_name: str, filter_string: str) -> TrackedRun | None: ...

    def baselines(self) -> list[RegisteredBaseline]: ...

    def read_artifact(self, run: TrackedRun, path: str) -> str | None:
        """The text of one of the run's artifacts; None when it has no such artifact or it
        cannot be read from here (the caller reports that, never guesses)."""
        ...

    def annotate(self, run: TrackedRun, tags: Mapping[str, str], artifacts: Mapping[str, str]) -> None:
        """Set tags on the run and log small text artifacts to it (raises TrackingError)."""
        ...

    def close(self) -> None: ...


def local_artifact_dir(artifact_uri: str) -> Path | None:
    """The folder of a run's artifacts when they sit on this machine's disk (a path or file://)."""
    if artifact_uri.startswith("file://"):
        from urllib.parse import unquote, urlsplit

        return Path(unquote(urlsplit(artifact_uri).path))
    if artifact_uri.startswith("/"):
        return Path(artifact_uri)
    return None
