"""Shared fixtures: an isolated environment for every test, gold folders, a real MLflow server."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
TINY = FIXTURES / "gold" / "tiny"

_ISOLATED_PREFIXES = ("MLFLOW_", "EXTRACTION_EVAL_", "IBEX_WORKER_", "OPENAI_", "GITHUB_")
_KEEP = {
    "EXTRACTION_EVAL_TEST_MLFLOW_URI",
    "EXTRACTION_EVAL_TEST_REQUIRE_BROWSER",
    "EXTRACTION_EVAL_TEST_SCREENSHOTS",
    "EXTRACTION_EVAL_TEST_CHROMIUM",
}


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No test sees the developer's tracking server, keys or CI flags; cwd is a temp dir."""
    for name in list(os.environ):
        if (name.startswith(_ISOLATED_PREFIXES) or name == "CI") and name not in _KEEP:
            monkeypatch.delenv(name, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    yield work
    try:
        import mlflow

        while mlflow.active_run() is not None:
            mlflow.end_run()
    except ImportError:  # pragma: no cover
        pass


def copy_gold(source: Path, dest: Path, *, oracle: bool = True) -> Path:
    """A writable copy of a gold folder, with fresh oracle cassettes and manifest."""
    shutil.copytree(source, dest)
    if oracle:
        from extraction_eval.cassettes import write_oracle_cassettes

        write_oracle_cassettes(dest)
    return dest


@pytest.fixture
def tiny_gold(tmp_path: Path) -> Path:
    """The 8-conversation fixture gold set, with oracle cassettes for the current contract."""
    return copy_gold(TINY, tmp_path / "gold" / "tiny")


@pytest.fixture
def changed_prompt(monkeypatch: pytest.MonkeyPatch) -> str:
    """The code's system prompt differs from the one the cassettes were made with."""
    from extraction_eval._jsonio import sha256_hex
    from extraction_eval.contract import _prompt, system_prompt

    new = (system_prompt() + "\nAlso extract the user's favourite colour.\n").encode("utf-8")
    monkeypatch.setattr(_prompt, "_prompt_bytes", lambda: new)
    return sha256_hex(new)


@pytest.fixture
def changed_schema(monkeypatch: pytest.MonkeyPatch) -> str:
    """The code's output schema differs from the one the cassettes were made with."""
    from extraction_eval._jsonio import canonical_json, sha256_hex
    from extraction_eval.contract import _schema

    schema = _schema.BatchExtractionResult.model_json_schema()
    schema["description"] = "changed"
    new = canonical_json(schema)
    monkeypatch.setattr(_schema, "_schema_bytes", lambda: new)
    return sha256_hex(new)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class MlflowServer:
    """A real `mlflow server` (SQLite backend, 127.0.0.1, one worker, jobs off)."""

    def __init__(self, root: Path):
        self.root = root
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.log = root / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120.0) -> None:
        env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
        mlflow_bin = Path(sys.executable).with_name("mlflow")
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [
                    str(mlflow_bin),
                    "server",
                    "--backend-store-uri",
                    f"sqlite:///{self.root / 'mlflow.db'}",
                    "--default-artifact-root",
                    str(self.root / "artifacts"),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--workers",
                    "1",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.root,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mlflow server exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.uri}/health", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"mlflow server did not start in {timeout}s: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        """Stop the server and its worker by the process group of its PID."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.proc = None

    def reset_registry(self) -> None:
        """Delete every extraction-eval registered model, so a test starts with no baseline."""
        from mlflow import MlflowClient

        client = MlflowClient(tracking_uri=self.uri, registry_uri=self.uri)
        for model in client.search_registered_models(filter_string="name LIKE 'extraction-eval-%'"):
            client.delete_registered_model(model.name)


class ExternalServer(MlflowServer):
    """A server someone else started (.ci/run does, and stops it by its PID)."""

    def __init__(self, uri: str):
        self.uri = uri.rstrip("/")
        self.proc = None

    def stop(self) -> None:
        return None


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    """A real tracking server: the one .ci/run started, or one of our own for this session."""
    external = os.environ.get("EXTRACTION_EVAL_TEST_MLFLOW_URI")
    if external:
        yield ExternalServer(external)
        return
    server = MlflowServer(tmp_path_factory.mktemp("mlflow-server"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def server_uri(mlflow_server: MlflowServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point MLFLOW_TRACKING_URI at the session's real server."""
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server.uri)
    return mlflow_server.uri


@pytest.fixture
def local_store(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An embedded SQLite store in the test's own folder."""
    uri = f"sqlite:///{isolated_env / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    return uri
