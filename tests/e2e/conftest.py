"""The team server of scripts/team-server (PostgreSQL, basic auth, served artifacts), for the session.

Its passwords are random per start (canaries: no real credential is ever used), read from
what `start` prints. A machine that cannot start it fails these tests; a developer without
root or apt deselects them explicitly: `pytest -m "not team_server"`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from ..conftest import REPO

TEAM_SCRIPT = REPO / "scripts" / "team-server"
CLI = Path(sys.executable).with_name("extraction-eval")
ENV_KEYS = ("MLFLOW_TRACKING_URI", "MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD")


def parse_exports(stdout: str) -> tuple[dict[str, str], dict[str, str]]:
    """The writer's and the reader's environments from `start`'s output, checking its shape."""
    lines = stdout.strip().splitlines()
    assert lines[3] == "# reader", stdout
    envs = []
    for block in (lines[:3], lines[4:]):
        env = {}
        for line in block:
            assert line.startswith("export "), line
            name, _, value = line.removeprefix("export ").partition("=")
            env[name] = value
        assert tuple(env) == ENV_KEYS, block
        envs.append(env)
    return envs[0], envs[1]


def team_script(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TEAM_SCRIPT), *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@dataclass
class TeamServer:
    """A running scripts/team-server and its three accounts."""

    root: Path
    writer: dict[str, str]
    reader: dict[str, str]

    @property
    def uri(self) -> str:
        return self.writer["MLFLOW_TRACKING_URI"]

    @property
    def admin(self) -> tuple[str, str]:
        state = json.loads((self.root / "team-server.json").read_text())
        return "admin", state["users"]["admin"]

    def passwords(self) -> list[str]:
        state = json.loads((self.root / "team-server.json").read_text())
        return [*state["users"].values(), state["db_password"], state["postgres_superuser_password"]]

    def api(self, method: str, path: str, *, auth: tuple[str, str] | None = None, **kwargs: object) -> httpx.Response:
        return httpx.request(method, f"{self.uri}{path}", auth=auth or self.admin, timeout=60, **kwargs)  # type: ignore[arg-type]

    def reset_registry(self) -> None:
        """As the admin: delete every extraction-eval registered model, so a test starts with no baseline."""
        found = self.api(
            "GET", "/api/2.0/mlflow/registered-models/search", params={"filter": "name LIKE 'extraction-eval-%'"}
        )
        found.raise_for_status()
        for model in found.json().get("registered_models", []):
            self.api(
                "DELETE", "/api/2.0/mlflow/registered-models/delete", json={"name": model["name"]}
            ).raise_for_status()

    def alias(self, name: str = "extraction-eval-openai", alias: str = "baseline-tiny") -> dict[str, str]:
        answer = self.api("GET", "/api/2.0/mlflow/registered-models/alias", params={"name": name, "alias": alias})
        answer.raise_for_status()
        version: dict[str, str] = answer.json()["model_version"]
        return version


def start_team_server(root: Path, *extra: str) -> tuple[TeamServer, subprocess.CompletedProcess[str]]:
    mlflow_bin = Path(sys.executable).with_name("mlflow")
    proc = team_script("start", str(root), "--mlflow", str(mlflow_bin), *extra)
    if proc.returncode != 0:
        pytest.fail(f"scripts/team-server start failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    writer, reader = parse_exports(proc.stdout)
    return TeamServer(root, writer, reader), proc


def team_dir() -> Path:
    """A folder the `postgres` OS user can reach (pytest's own temp root is private to its user)."""
    return Path(tempfile.mkdtemp(prefix="team-server-", dir=os.environ.get("TMPDIR", "/tmp")))


@pytest.fixture(scope="session")
def team_server() -> Iterator[TeamServer]:
    root = team_dir()
    server, _ = start_team_server(root)
    try:
        yield server
    finally:
        team_script("stop", str(root), "--purge")
        shutil.rmtree(root, ignore_errors=True)


def cli(env: dict[str, str], *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`extraction-eval ARGS` in a fresh process with this environment (the harness's own variables only)."""
    return subprocess.run(
        [str(CLI), *args], cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout
    )


def cli_async(env: dict[str, str], *args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(CLI), *args],
        cwd=cwd,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
