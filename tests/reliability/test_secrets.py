"""Issue 12, point 3: no secret in any output stream.

Every command runs as a real subprocess against a real `mlflow server`, with a canary password
in MLFLOW_TRACKING_URI and another in MLFLOW_TRACKING_USERNAME/PASSWORD; then stdout, stderr,
every file under the test's folder (outputs, gold, store, artifacts) and the server's log are
scanned for either canary. The run, the seed and the promote create MLflow runs, the very
calls after which MLflow prints its "View run ... at: <uri>" line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import MlflowServer, free_port

pytestmark = [pytest.mark.server, pytest.mark.slow]

URI_CANARY = "uriCanary-5e1f9a"
ENV_CANARY = "envCanary-c07d42"


def _cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("extraction-eval")
    return subprocess.run([str(exe), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=240)


def _files_with(root: Path, needle: bytes) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_no_canary_reaches_any_stream_file_or_the_store(tiny_gold: Path, tmp_path: Path) -> None:
    (tmp_path / "server").mkdir()
    server = MlflowServer(tmp_path / "server")
    server.start()
    try:
        host = server.uri.removeprefix("http://")
        env = {
            **os.environ,
            "MLFLOW_TRACKING_URI": f"http://canary-user:{URI_CANARY}@{host}",
            "MLFLOW_TRACKING_USERNAME": "canary-user",
            "MLFLOW_TRACKING_PASSWORD": ENV_CANARY,
        }
        dead = {
            **env,
            "MLFLOW_TRACKING_URI": f"http://canary-user:{URI_CANARY}@127.0.0.1:{free_port()}",
            "EXTRACTION_EVAL_TRACKING_TIMEOUT_S": "1",
        }
        work = tmp_path / "work"  # the test's cwd (conftest's isolated_env)
        gold, out = str(tiny_gold), str(tmp_path / "out")
        results = [
            _cli(env, work, "gold", "validate", "--gold", gold),
            _cli(env, work, "baseline", "register", "--gold", gold),
            _cli(env, work, "baseline", "show", "--gold", gold),
            _cli(env, work, "run", "--mode", "cassette", "--gold", gold, "--output-dir", out),
            _cli(env, work, "gate", "--output-dir", out, "--gold", gold),
        ]
        assert [r.returncode for r in results] == [0, 0, 0, 0, 0], [r.stderr[-2000:] for r in results]
        run_id = json.loads((tmp_path / "out" / "run.json").read_text())["run_id"]
        results += [
            _cli(env, work, "baseline", "promote", "--run-id", run_id, "--gold", gold),
            # the failures: an unreachable server, for a run and for the gate
            _cli(dead, work, "run", "--mode", "smoke", "--gold", gold, "--output-dir", str(tmp_path / "out2")),
            _cli(dead, work, "gate", "--output-dir", out, "--gold", gold),
            _cli(dead, work, "baseline", "show", "--gold", gold),
        ]
        assert [r.returncode for r in results[5:]] == [0, 2, 2, 2], [r.stderr[-2000:] for r in results[5:]]
        # the failures said what failed, with the password masked
        assert "http://canary-user:***@127.0.0.1:" in results[6].stderr
    finally:
        server.stop()
    for canary in (URI_CANARY, ENV_CANARY):
        for result in results:
            assert canary not in result.stdout, (result.args, result.stdout[-2000:])
            assert canary not in result.stderr, (result.args, result.stderr[-2000:])
        # every file written: outputs, the gold folder, the store (SQLite), artifacts, the server's log
        assert _files_with(tmp_path, canary.encode()) == []
    # not vacuous: MLflow's own "View run" line would have carried the URI
    assert not any("View run" in r.stdout for r in results)
