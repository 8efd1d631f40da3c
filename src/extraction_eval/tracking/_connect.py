"""Reaching the tracking server within a budget, and saying so while the harness waits.

MLflow's client retries a dead server for minutes by default (7 retries, backoff factor 2,
120 s per request: 249 s of silence measured against a closed port). The harness sets
MLflow's own variables for its process, unless the user set them, so that one request gives
up within the budget; and before a run logs anything it checks that the server answers,
with a line on stderr as soon as it starts retrying.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._exceptions import TrackingError
from .._settings import TRACKING_TIMEOUT_VAR, hide_uri_password, mask_secrets, tracking_timeout_s

#: How often the harness asks a server that does not answer yet.
POLL_S = 1.0


def mlflow_client_env(budget_s: float) -> dict[str, str]:
    """MLflow's variables for a request that gives up within about ``budget_s`` in all:
    3 attempts of a quarter of the budget each, plus 1 s and 2 s of backoff."""
    return {
        "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
        "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
        "MLFLOW_HTTP_REQUEST_BACKOFF_JITTER": "0",
        "MLFLOW_HTTP_REQUEST_TIMEOUT": str(max(1, int(budget_s // 4))),
        # MLflow's "View run ... at: <uri>" line prints the tracking URI, password and all.
        "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true",
    }


def configure_mlflow_client() -> float:
    """Set MLflow's retry, timeout and URL-printing variables for this process where the user
    has not; returns the budget in seconds."""
    budget = tracking_timeout_s()
    for name, value in mlflow_client_env(budget).items():
        os.environ.setdefault(name, value)
    return budget


def mlflow_client(uri: str, *, registry: bool = False) -> Any:
    """An ``MlflowClient`` for ``uri`` (and its registry, with ``registry``). For an SQLite store
    the client is made, and the store's tables created or migrated, under a lock beside the
    database file: two first runs on a fresh file never race through the schema migrations
    (alembic's "duplicate column")."""
    from mlflow import MlflowClient

    def make() -> Any:
        client: Any = MlflowClient(tracking_uri=uri, registry_uri=uri) if registry else MlflowClient(tracking_uri=uri)
        client._tracking_client.store  # noqa: B018 - the property creates the store and its tables
        if registry:
            client._get_registry_client().store  # noqa: B018 - and the registry's, on the same file
        return client

    db = Path(uri.removeprefix("sqlite:///")) if uri.startswith("sqlite:///") else None
    if db is None or not db.parent.is_dir():
        return make()  # a missing folder: MLflow's own error names the path
    import fcntl

    with open(db.with_name(db.name + ".init-lock"), "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            return make()
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


#: Default ports of the database servers MLflow's SQLAlchemy store speaks to.
_DB_PORTS = {"postgresql": 5432, "mysql": 3306, "mssql": 1433}
#: The module SQLAlchemy loads for a dialect named without a driver.
_DEFAULT_DRIVERS = {"postgresql": "psycopg2", "mysql": "MySQLdb", "mssql": "pyodbc"}


def database_address(uri: str) -> tuple[str, int] | None:
    """(host, port) of a database server URI (``postgresql+psycopg://user@host:port/db``), else None."""
    from urllib.parse import urlsplit

    scheme = uri.split("://", 1)[0].split("+", 1)[0].lower() if "://" in uri else ""
    if scheme not in _DB_PORTS:
        return None
    parts = urlsplit(uri)
    if not parts.hostname:
        return None
    return parts.hostname, parts.port or _DB_PORTS[scheme]


def _poll(
    try_once: Callable[[float], str | None],
    *,
    noun: str,
    uri: str,
    waiting: str,
    gave_up: str,
    fix: str,
    budget: float,
    say: Callable[[str], None],
    clock: Callable[[], float],
) -> None:
    """Call ``try_once(timeout)`` (None when it got through, else why not) until it gets through or
    the budget is spent; one line on stderr at the first failure, then a TrackingError."""
    deadline = clock() + budget
    said = False
    while True:
        why = try_once(max(0.2, min(5.0, deadline - clock())))
        if why is None:
            return
        if not said:
            say(
                mask_secrets(
                    f"{noun} at {uri} {waiting} ({why}); retrying for up to {budget:g} s "
                    f"({TRACKING_TIMEOUT_VAR} sets the wait)"
                )
            )
            said = True
        if clock() + POLL_S >= deadline:
            raise TrackingError(
                mask_secrets(
                    f"{noun} at {uri!r} {gave_up} within {budget:g} s ({why}). {fix} "
                    f"({TRACKING_TIMEOUT_VAR} sets the wait)."
                )
            )
        time.sleep(POLL_S)


def wait_for_database(
    uri: str,
    *,
    budget_s: float | None = None,
    say: Callable[[str], None] = _say,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Return once the database server of ``uri`` accepts a TCP connection, else a TrackingError
    within the budget (MLflow's own engine retries for about two minutes, in silence)."""
    import importlib.util
    import socket

    address = database_address(uri)
    if address is None:
        return
    # a driver that is not installed: MLflow's own error names it at once, so no wait here
    scheme = uri.split("://", 1)[0].lower()
    dialect, _, driver = scheme.partition("+")
    module = driver or _DEFAULT_DRIVERS.get(dialect, "")
    if module and importlib.util.find_spec(module) is None:
        return

    def connect(timeout: float) -> str | None:
        try:
            with socket.create_connection(address, timeout=timeout):
                return None
        except OSError as exc:
            return type(exc).__name__

    _poll(
        connect,
        noun="the tracking database",
        uri=hide_uri_password(uri, uri),
        waiting="does not accept connections",
        gave_up="did not accept a connection",
        fix="Start it or fix MLFLOW_TRACKING_URI",
        budget=tracking_timeout_s() if budget_s is None else budget_s,
        say=say,
        clock=clock,
    )


def wait_for_server(
    uri: str,
    *,
    budget_s: float | None = None,
    say: Callable[[str], None] = _say,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Return once the http(s) server at ``uri`` answers (any HTTP status counts), or a database
    server's port accepts a connection; else a TrackingError after the budget. Local stores
    need no wait. One line on stderr when the first try fails."""
    if database_address(uri) is not None:
        wait_for_database(uri, budget_s=budget_s, say=say, clock=clock)
        return
    if not uri.startswith(("http://", "https://")):
        return
    import httpx

    def health(timeout: float) -> str | None:
        try:
            httpx.get(uri.rstrip("/") + "/health", timeout=max(0.5, timeout))
            return None
        except httpx.HTTPError as exc:
            return type(exc).__name__

    _poll(
        health,
        noun="the MLflow tracking server",
        uri=uri,
        waiting="does not answer",
        gave_up="did not answer",
        fix="Start the server or fix MLFLOW_TRACKING_URI",
        budget=tracking_timeout_s() if budget_s is None else budget_s,
        say=say,
        clock=clock,
    )
