"""The gate's reader for local stores (the embedded SQLite default): the MLflow client.

What a store throws when it cannot be read (MLflow's own errors, SQLAlchemy's for a file
that is not an SQLite database, an ImportError for a database URI whose driver is not
installed, an OSError) becomes a TrackingError, which the gate reports as "could not
evaluate": it fails closed, never with a traceback. Anything else is a bug and propagates.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from .._exceptions import TrackingError
from .._settings import hide_uri_password
from ._connect import mlflow_client
from ._reader import RegisteredBaseline, TrackedRun, baseline_lookups, legacy_of_another_version, local_artifact_dir


def _tracked_run(run: Any) -> TrackedRun:
    return TrackedRun(
        run_id=run.info.run_id,
        experiment_id=str(run.info.experiment_id),
        status=run.info.status,
        start_time=int(run.info.start_time or 0),
        tags=dict(run.data.tags),
        # counts/ keys are logged as params (docs/decisions.md, "Counts are params")
        metrics={
            **{k: float(v) for k, v in run.data.params.items() if k.startswith("counts/")},
            **run.data.metrics,
        },
        artifact_uri=str(run.info.artifact_uri or ""),
        deleted=getattr(run.info, "lifecycle_stage", None) == "deleted",
    )


_T = TypeVar("_T")


def _store_error_types() -> tuple[type[BaseException], ...]:
    """The errors of a store that cannot be read (imported late: mlflow is heavy)."""
    known: list[type[BaseException]] = [ImportError, OSError]
    try:
        from mlflow.exceptions import MlflowException
        from sqlalchemy.exc import SQLAlchemyError
    except ImportError:  # pragma: no cover - mlflow's own dependencies
        return tuple(known)
    return (*known, MlflowException, SQLAlchemyError)


def _store_errors(method: Callable[..., _T]) -> Callable[..., _T]:
    @functools.wraps(method)
    def wrapper(self: ClientReader, *args: Any, **kwargs: Any) -> _T:
        try:
            return method(self, *args, **kwargs)
        except _store_error_types() as exc:
            message = (
                f"reading the tracking store {self._uri!r} failed ({type(exc).__name__}: {str(exc)[:300]}); "
                "check MLFLOW_TRACKING_URI and that the store is an MLflow store this version can read."
            )
            raise TrackingError(hide_uri_password(message, self._uri)) from None

    return wrapper


class ClientReader:
    """Reads runs and registered baselines through ``mlflow.MlflowClient``."""

    def __init__(self, uri: str):
        self._uri = uri  # first: the error message names it
        self._open()

    @_store_errors
    def _open(self) -> None:
        from mlflow.exceptions import MlflowException

        self._missing = MlflowException
        self._client = mlflow_client(self._uri, registry=True)

    def _absent(self, exc: Exception) -> bool:
        return "RESOURCE_DOES_NOT_EXIST" in str(getattr(exc, "error_code", "")) or "not found" in str(exc).lower()

    @_store_errors
    def get_run(self, run_id: str) -> TrackedRun | None:
        try:
            return _tracked_run(self._client.get_run(run_id))
        except self._missing as exc:
            if self._absent(exc):
                return None
            raise

    @_store_errors
    def newest_run(self, experiment_name: str, filter_string: str) -> TrackedRun | None:
        experiment = self._client.get_experiment_by_name(experiment_name)
        if experiment is None:
            return None
        runs = self._client.search_runs(
            [experiment.experiment_id],
            filter_string=filter_string,
            order_by=["attributes.start_time DESC"],
            max_results=1,
        )
        return _tracked_run(runs[0]) if runs else None

    @_store_errors
    def baselines(self, gold_version: str, *, hand_written: bool = False) -> list[RegisteredBaseline]:
        out = []
        for provider, name, aliases in baseline_lookups(gold_version, hand_written=hand_written):
            for alias in aliases:
                try:
                    version = self._client.get_model_version_by_alias(name, alias)
                except self._missing as exc:
                    if self._absent(exc):
                        continue
                    raise
                tags = dict(version.tags or {})
                if legacy_of_another_version(alias, tags, gold_version):
                    continue
                out.append(
                    RegisteredBaseline(
                        provider=provider,
                        model_name=name,
                        version=str(version.version),
                        run_id=version.run_id or "",
                        tags=tags,
                        run=self.get_run(version.run_id) if version.run_id else None,
                        alias=alias,
                    )
                )
                break
        return out

    @_store_errors
    def read_artifact(self, run: TrackedRun, path: str) -> str | None:
        local = local_artifact_dir(run.artifact_uri)
        if local is not None:
            target = local / path
            return target.read_text(encoding="utf-8") if target.is_file() else None
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            try:
                downloaded = self._client.download_artifacts(run.run_id, path, tmp)
            except self._missing:
                return None
            return Path(downloaded).read_text(encoding="utf-8")

    @_store_errors
    def annotate(self, run: TrackedRun, tags: Mapping[str, str], artifacts: Mapping[str, str]) -> None:
        if tags:
            from mlflow.entities import RunTag

            self._client.log_batch(run.run_id, tags=[RunTag(k, v) for k, v in tags.items()])
        for path, text in artifacts.items():
            self._client.log_text(run.run_id, text, path)

    def close(self) -> None:
        return None


def open_reader(uri: str) -> Any:
    """REST over httpx for http(s) servers, the MLflow client for local stores."""
    if uri.startswith(("http://", "https://")):
        from ._rest import RestReader

        return RestReader(uri)
    from ._connect import wait_for_database

    wait_for_database(uri)  # a database server that is down: one line within the budget
    return ClientReader(uri)
