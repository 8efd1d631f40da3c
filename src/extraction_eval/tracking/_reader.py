"""What the gate reads from a tracking store, independent of how it was read."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..mlflow_names import (
    BASELINE_ALIAS,
    LEGACY_GOLD_VERSION,
    PROVIDERS,
    TAG_BASELINE_METRIC_PREFIX,
    TAG_ENFORCEMENT,
    TAG_GATED,
    TAG_GOLD_VERSION,
    TAG_MEASURED,
    baseline_alias,
    flag,
    registered_model_name,
)


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
    """The model version behind a provider's baseline alias (``baseline-<gold version>``) and the
    run it points at. Its numbers are the model version's ``baseline/<metric>`` tags, fixed at
    promotion: a run can be written to by anyone with EDIT on its experiment (CI's account), a
    model version's tags only by the registered model's keepers."""

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

    #: The alias it was found under (``baseline`` for a store made before issue 22).
    alias: str = ""

    @property
    def promoted_metrics(self) -> dict[str, float]:
        """The numbers recorded on the model version at promotion (``baseline/<metric key>``)."""
        prefix = TAG_BASELINE_METRIC_PREFIX
        out = {}
        for key, value in self.tags.items():
            if key.startswith(prefix):
                try:
                    out[key[len(prefix) :]] = float(value)
                except ValueError:
                    out[key[len(prefix) :]] = float("nan")
        return out

    @property
    def measured_metrics(self) -> Mapping[str, float] | None:
        """The numbers the gate compares with: the model version's, fixed at promotion (a version
        from before they were recorded there: its run's); None when seeded unmeasured."""
        if self.tags.get(TAG_MEASURED) == flag(False):
            return None
        promoted = self.promoted_metrics
        if promoted:
            return promoted
        return None if self.run is None else self.run.metrics

    def changed_since_promotion(self) -> list[tuple[str, float, float | None]]:
        """(metric, at promotion, on the run now) for every recorded number its run no longer has:
        someone wrote to the baseline run after it was promoted."""
        if self.run is None:
            return []
        out = []
        for key, value in sorted(self.promoted_metrics.items()):
            now = self.run.metrics.get(key)
            if now is None or not (now == value or abs(now - value) <= 1e-12):
                out.append((key, value, now))
        return out


def baseline_lookups(gold_version: str, *, hand_written: bool = False) -> list[tuple[str, str, tuple[str, ...]]]:
    """(provider, registered model, aliases to try in order) for every provider: looked up by exact
    name, never by a search another account could flood. A store made before issue 22 has one
    alias ``baseline`` per provider, which reads as gold v1's."""
    aliases: tuple[str, ...] = (baseline_alias(gold_version, hand_written=hand_written),)
    if gold_version == LEGACY_GOLD_VERSION and not hand_written:
        aliases += (BASELINE_ALIAS,)
    return [(p, registered_model_name(p), aliases) for p in PROVIDERS]


def legacy_of_another_version(alias: str, tags: Mapping[str, str], gold_version: str) -> bool:
    """A legacy ``baseline`` version tagged with another gold version is not v1's baseline."""
    return alias == BASELINE_ALIAS and tags.get(TAG_GOLD_VERSION, gold_version) != gold_version


class TrackingReader(Protocol):
    """Read access the regression gate needs; REST (httpx) or the MLflow client behind it."""

    def get_run(self, run_id: str) -> TrackedRun | None: ...

    def newest_run(self, experiment_name: str, filter_string: str) -> TrackedRun | None: ...

    def baselines(self, gold_version: str, *, hand_written: bool = False) -> list[RegisteredBaseline]:
        """Every provider's baseline for ``gold_version`` (``baseline_lookups``)."""
        ...

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
