"""Issue 21, point 7: every tracking URI fails with exit 2 and one line. A malformed http(s) URI,
a database server that is down (within the same budget as a server that does not answer), and
a wrong password reported as wrong credentials."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from extraction_eval import TrackingError
from extraction_eval.tracking._rest import RestReader


def cli(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    import os

    full = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "EXTRACTION_EVAL_"))}
    return subprocess.run(
        [sys.executable, "-m", "extraction_eval", *args], env={**full, **env}, cwd=cwd, capture_output=True, text=True
    )


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


@pytest.mark.parametrize("uri", ["http://127.0.0.1:abc", "https://:5000", "http://127.0.0.1:99999"])
def test_a_malformed_http_uri_is_exit_2_and_one_line(uri: str, tiny_gold: Path, tmp_path: Path) -> None:
    env = {"MLFLOW_TRACKING_URI": uri}
    gate = cli(env, "gate", "--gold", str(tiny_gold), "--output-dir", str(tmp_path / "g"), cwd=tmp_path)
    assert gate.returncode == 2, gate.stderr
    assert "Traceback" not in gate.stderr + gate.stdout
    assert f"MLFLOW_TRACKING_URI={uri!r} is not a usable address" in gate.stdout
    assert json.loads((tmp_path / "g" / "gate.json").read_text())["verdict"] == "error"
    run = cli(env, "run", "--gold", str(tiny_gold), "--output-dir", str(tmp_path / "r"), cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: MLFLOW_TRACKING_URI={uri!r} is not a usable address")


def test_a_database_server_that_is_down_fails_within_the_budget(tiny_gold: Path, tmp_path: Path) -> None:
    uri = f"postgresql+psycopg://mlflow:canary-pw-2121@127.0.0.1:{closed_port()}/mlflow"
    env = {"MLFLOW_TRACKING_URI": uri, "EXTRACTION_EVAL_TRACKING_TIMEOUT_S": "2"}
    for args in (
        ["gate", "--gold", str(tiny_gold), "--output-dir", str(tmp_path / "g")],
        ["run", "--gold", str(tiny_gold), "--output-dir", str(tmp_path / "r")],
        ["baseline", "register", "--gold", str(tiny_gold)],
    ):
        started = time.monotonic()
        done = cli(env, *args, cwd=tmp_path)
        elapsed = time.monotonic() - started
        assert done.returncode == 2, done.stderr
        assert elapsed < 20, elapsed  # MLflow's own engine retried for 107 s
        text = done.stdout + done.stderr
        assert "did not accept a connection within 2 s (ConnectionRefusedError)" in text
        assert "Traceback" not in text and "canary-pw-2121" not in text


@pytest.mark.parametrize(
    ("uri", "env", "why"),
    [
        ("http://tracking.example:5000", {}, "no credentials were sent"),
        (
            "http://ci:wrong@tracking.example:5000",
            {},
            "wrong credentials: the user 'ci' and password in MLFLOW_TRACKING_URI",
        ),
        (
            "http://tracking.example:5000",
            {"MLFLOW_TRACKING_USERNAME": "ci", "MLFLOW_TRACKING_PASSWORD": "wrong"},
            "wrong credentials: the password of user 'ci' was not accepted",
        ),
    ],
)
def test_a_wrong_password_is_reported_as_wrong_credentials(
    uri: str, env: dict[str, str], why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    transport = httpx.MockTransport(lambda request: httpx.Response(401, text="Unauthorized"))
    reader = RestReader(uri, transport=transport)
    with pytest.raises(TrackingError) as caught:
        reader.get_run("r1")
    assert f"refused the request: {why}" in str(caught.value)
    assert "wrong@" not in str(caught.value)
