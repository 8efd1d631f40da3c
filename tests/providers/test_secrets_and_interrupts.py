"""The key never reaches disk, MLflow or a message; a killed recording leaves whole files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow import MlflowClient

from extraction_eval import Mode, RunOptions, run_eval
from extraction_eval.gold import load_cassettes, load_manifest
from extraction_eval.stub_provider import StubProviderServer, StubScript

CANARY = "sk-canary-5f0c2b7e9d1a4c63"


def _scan(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_canary_key_echoed_by_the_provider_never_lands_anywhere(
    tiny_gold: Path,
    isolated_env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    store = f"sqlite:///{isolated_env / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("EXTRACTION_EVAL_MODE", "record")
    with StubProviderServer(tiny_gold, script={"default": {"answer": "echo_key"}}) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        recorded = run_eval(Mode.RECORD, tiny_gold, tmp_path / "out")
        live = run_eval(Mode.LIVE, tiny_gold, tmp_path / "out-live")
        # the server really did echo it, in a header and in the body
        assert stub.requests[0].headers["authorization"] == f"Bearer {CANARY}"
    replay = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out-replay")

    needle = CANARY.encode()
    assert _scan(tiny_gold, needle) == []
    assert _scan(tmp_path, needle) == []  # outputs, gold copies
    assert _scan(isolated_env, needle) == []  # the SQLite store and its artifact folders
    out, err = capfd.readouterr()
    assert CANARY not in out and CANARY not in err
    client = MlflowClient(store)
    for result in (recorded, live, replay):
        run = client.get_run(result.logged.run_id)
        text = json.dumps([run.data.params, run.data.tags, list(run.data.metrics)])
        assert CANARY not in text
        for artifact in client.list_artifacts(run.info.run_id):
            local = client.download_artifacts(run.info.run_id, artifact.path, str(tmp_path / "dl" / run.info.run_id))
            assert _scan(Path(local).parent, needle) == []
    # what the provider said is kept, with the secret cut out
    contents = [c.response or "" for _, c in load_cassettes(tiny_gold / "openai_cassettes.jsonl")]
    assert all("User's API key is [REDACTED]." in c for c in contents)


RECORDER = """
import sys
from pathlib import Path
from extraction_eval import Mode, RunOptions, run_eval
run_eval(Mode.RECORD, Path(sys.argv[1]), Path(sys.argv[2]), RunOptions(concurrency=1))
"""


def test_a_killed_recording_leaves_each_file_whole_and_a_rerun_finishes_it(
    tiny_gold: Path, isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest_before = (tiny_gold / "cassette_manifest.json").read_bytes()
    script = StubScript.coerce({"default": {"latency_ms": 300}})
    with StubProviderServer(tiny_gold, script=script) as stub:
        env = {
            **os.environ,
            "MLFLOW_TRACKING_URI": f"sqlite:///{isolated_env / 'mlflow.db'}",
            "OPENAI_API_KEY": "sk-test-interrupt",
            "OPENAI_BASE_URL": stub.base_url,
            "EXTRACTION_EVAL_MODE": "record",
        }
        proc = subprocess.Popen([sys.executable, "-c", RECORDER, str(tiny_gold), str(tmp_path / "out")], env=env)
        deadline = time.monotonic() + 60
        while stub.attempts("t04") == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        killed_after = {r.conversation_id for r in stub.requests}
        assert 3 <= len(killed_after) < 8

        rows = load_cassettes(tiny_gold / "openai_cassettes.jsonl")  # parses: every line whole
        live = {c.conversation_id for _, c in rows if c.cassette_kind.value == "live_openai_recorded"}
        assert live and live <= killed_after
        assert len(rows) == 8  # the old entries are still there for what was not recorded
        assert (tiny_gold / "cassette_manifest.json").read_bytes() == manifest_before
        assert not list(tiny_gold.glob(".*.tmp"))
        finished = {c.conversation_id: row.raw for row, c in rows if c.conversation_id in live}

        stub.reset()
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-interrupt")
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("EXTRACTION_EVAL_MODE", "record")
        monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{isolated_env / 'mlflow.db'}")
        stub.script = StubScript.coerce({})
        result = run_eval(Mode.RECORD, tiny_gold, tmp_path / "out2", RunOptions(concurrency=4))
        assert {r.conversation_id for r in stub.requests} == {f"t0{i}" for i in range(1, 9)} - live
    assert result.metrics["counts/failed"] == 0
    after = {c.conversation_id: row.raw for row, c in load_cassettes(tiny_gold / "openai_cassettes.jsonl")}
    assert all(after[cid] == raw for cid, raw in finished.items())
    assert load_manifest(tiny_gold / "cassette_manifest.json").cassette_kind.value == "live_openai_recorded"
