"""The gate's reader for http(s) tracking servers: MLflow's REST API over httpx.

No ``import mlflow`` on this path, so the gate starts fast. Credentials come from
MLflow's own variables: ``MLFLOW_TRACKING_TOKEN`` (bearer) or
``MLFLOW_TRACKING_USERNAME``/``MLFLOW_TRACKING_PASSWORD`` (basic);
``MLFLOW_TRACKING_INSECURE_TLS=true`` skips certificate checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from .._exceptions import TrackingError
from .._settings import hide_uri_password, tracking_auth
from ._reader import RegisteredBaseline, TrackedRun, baseline_lookups, legacy_of_another_version, local_artifact_dir
from ._refused import why_unauthenticated

_API = "/api/2.0/mlflow"


def _tracked_run(payload: dict[str, Any]) -> TrackedRun:
    info = payload.get("info", {})
    data = payload.get("data", {})
    return TrackedRun(
        run_id=info.get("run_id") or info.get("run_uuid", ""),
        experiment_id=str(info.get("experiment_id", "")),
        status=info.get("status", "UNKNOWN"),
        start_time=int(info.get("start_time", 0) or 0),
        tags={t["key"]: t.get("value", "") for t in data.get("tags", [])},
        # counts/ keys are logged as params (docs/decisions.md, "Counts are params")
        metrics={
            **{p["key"]: float(p["value"]) for p in data.get("params", []) if p["key"].startswith("counts/")},
            **{m["key"]: float(m["value"]) for m in data.get("metrics", [])},
        },
        artifact_uri=info.get("artifact_uri", ""),
        deleted=info.get("lifecycle_stage") == "deleted",
    )


class RestReader:
    """Reads runs and registered baselines from an MLflow server over HTTP."""

    def __init__(self, uri: str, *, timeout: float = 30.0, transport: httpx.BaseTransport | None = None):
        auth_settings = tracking_auth()
        headers = {"User-Agent": "extraction-eval-gate"}
        auth: httpx.Auth | None = None
        if auth_settings.token:
            headers["Authorization"] = f"Bearer {auth_settings.token}"
        elif auth_settings.username is not None and auth_settings.password is not None:
            auth = httpx.BasicAuth(auth_settings.username, auth_settings.password)
        self._uri = uri.rstrip("/")
        self._client = httpx.Client(
            base_url=self._uri + _API,
            headers=headers,
            auth=auth,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            # Plain http needs no TLS context (building one costs ~0.1 s on the gate's path).
            verify=False if self._uri.startswith("http://") else not auth_settings.insecure_tls,
            transport=transport,
        )

    def _call(
        self, method: str, path: str, *, forbidden_is_absent: bool = False, **kwargs: Any
    ) -> dict[str, Any] | None:
        try:
            return self._request(method, path, forbidden_is_absent=forbidden_is_absent, **kwargs)
        except TrackingError as exc:
            raise TrackingError(hide_uri_password(str(exc), self._uri)) from None

    def _request(
        self, method: str, path: str, *, forbidden_is_absent: bool = False, **kwargs: Any
    ) -> dict[str, Any] | None:
        try:
            response = self._client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise TrackingError(
                f"tracking server {self._uri!r} is unreachable ({type(exc).__name__}: {exc}). "
                "Start it, or set MLFLOW_TRACKING_URI to a server that is up."
            ) from None
        if response.status_code == 404:
            return None
        if response.status_code == 401:
            raise TrackingError(
                f"tracking server {self._uri!r} refused the request: {why_unauthenticated(self._uri)} (401); "
                "set MLFLOW_TRACKING_TOKEN or MLFLOW_TRACKING_USERNAME/PASSWORD to an account of that server."
            )
        if response.status_code == 403 and forbidden_is_absent:
            return None  # the basic-auth app's answer for a registered model that does not exist
        if response.status_code == 403:
            # MLflow's basic-auth app also answers 403 for a run that does not exist.
            raise TrackingError(
                f"tracking server {self._uri!r} refused {method} {path} (403): this account may not read it, "
                "or it does not exist (MLflow's basic-auth app answers 403 to both). Check the run id, and that "
                "the account in MLFLOW_TRACKING_USERNAME (or MLFLOW_TRACKING_TOKEN) may read the experiment."
            )
        if response.status_code >= 400:
            body = response.text[:300]
            if "RESOURCE_DOES_NOT_EXIST" in body:
                return None
            if forbidden_is_absent and response.status_code == 400 and "not found" in body.lower():
                return None  # "Registered model alias baseline-v2 not found" (INVALID_PARAMETER_VALUE)
            raise TrackingError(
                f"tracking server {self._uri!r} answered {response.status_code} to {method} {path}: {body!r}"
            )
        try:
            result: dict[str, Any] = response.json()
        except ValueError:
            raise TrackingError(
                f"{self._uri!r} did not answer with JSON to {path}; is MLFLOW_TRACKING_URI an MLflow server?"
            ) from None
        return result

    def get_run(self, run_id: str) -> TrackedRun | None:
        body = self._call("GET", "/runs/get", params={"run_id": run_id})
        return None if body is None else _tracked_run(body["run"])

    def newest_run(self, experiment_name: str, filter_string: str) -> TrackedRun | None:
        body = self._call("GET", "/experiments/get-by-name", params={"experiment_name": experiment_name})
        if body is None:
            return None
        search = self._call(
            "POST",
            "/runs/search",
            json={
                "experiment_ids": [body["experiment"]["experiment_id"]],
                "filter": filter_string,
                "order_by": ["attributes.start_time DESC"],
                "max_results": 1,
                "run_view_type": "ACTIVE_ONLY",
            },
        )
        runs = (search or {}).get("runs", [])
        return _tracked_run(runs[0]) if runs else None

    def baselines(self, gold_version: str, *, hand_written: bool = False) -> list[RegisteredBaseline]:
        out = []
        for provider, name, aliases in baseline_lookups(gold_version, hand_written=hand_written):
            for alias in aliases:
                # a provider with no registered model: the basic-auth app answers 403 (no such resource to
                # check), a plain server 404; either way this provider has no baseline (the gate then
                # fails closed when no ci provider has one)
                found = self._call(
                    "GET",
                    "/registered-models/alias",
                    params={"name": name, "alias": alias},
                    forbidden_is_absent=True,
                )
                if found is None:
                    continue
                version = found["model_version"]
                tags = {t["key"]: t.get("value", "") for t in version.get("tags", [])}
                if legacy_of_another_version(alias, tags, gold_version):
                    continue
                run_id = version.get("run_id", "")
                out.append(
                    RegisteredBaseline(
                        provider=provider,
                        model_name=name,
                        version=str(version["version"]),
                        run_id=run_id,
                        tags=tags,
                        run=self.get_run(run_id) if run_id else None,
                        alias=alias,
                    )
                )
                break
        return out

    def _served_path(self, run: TrackedRun, path: str) -> str | None:
        """The proxied-artifact URL path of ``path`` (``mlflow-artifacts:`` roots only)."""
        if not run.artifact_uri.startswith("mlflow-artifacts:"):
            return None
        from urllib.parse import urlsplit

        root = urlsplit(run.artifact_uri).path.strip("/")
        return f"{self._uri}/api/2.0/mlflow-artifacts/artifacts/{root}/{path}"

    def read_artifact(self, run: TrackedRun, path: str) -> str | None:
        local = local_artifact_dir(run.artifact_uri)
        if local is not None:
            target = local / path
            return target.read_text(encoding="utf-8") if target.is_file() else None
        url = self._served_path(run, path)
        if url is None:
            return None
        try:
            response = self._client.get(url)
        except httpx.HTTPError as exc:
            raise TrackingError(f"reading artifact {path!r} of run {run.run_id} failed: {type(exc).__name__}") from None
        if response.status_code != 200:
            return None
        return response.text

    def annotate(self, run: TrackedRun, tags: Mapping[str, str], artifacts: Mapping[str, str]) -> None:
        if tags:  # one request for all of them
            batch = [{"key": key, "value": value} for key, value in tags.items()]
            self._call("POST", "/runs/log-batch", json={"run_id": run.run_id, "tags": batch})
        local = local_artifact_dir(run.artifact_uri)
        for path, text in artifacts.items():
            if local is not None:
                local.mkdir(parents=True, exist_ok=True)
                (local / path).write_text(text, encoding="utf-8")
                continue
            url = self._served_path(run, path)
            if url is None:
                raise TrackingError(
                    f"artifacts of run {run.run_id} live at {run.artifact_uri!r}, which the gate cannot write"
                )
            try:
                response = self._client.put(url, content=text.encode("utf-8"))
            except httpx.HTTPError as exc:
                raise TrackingError(f"writing artifact {path!r} failed: {type(exc).__name__}") from None
            if response.status_code >= 400:
                raise TrackingError(f"writing artifact {path!r} was refused ({response.status_code})")

    def close(self) -> None:
        self._client.close()
