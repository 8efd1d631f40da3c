"""End to end against a real `mlflow server` on 127.0.0.1: eval, seed, gate, and every way to fail,
on SQLite and on the team server of scripts/team-server (PostgreSQL, basic auth, served artifacts).

The test starts its own server (SQLite backend, one worker, background jobs off), also
under .ci/run, and stops it by its PID at the end. Commands run through the real CLI.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from mlflow import MlflowClient
from mlflow.entities import Metric
from typer.testing import CliRunner

from extraction_eval.cli import app
from extraction_eval.evidence import evidence_line

from ..conftest import REPO, MlflowServer, free_port
from ..helpers import drop_memories, mutate_cassettes
from .conftest import TeamServer

pytestmark = pytest.mark.server

runner = CliRunner()


def cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def run_id(out: Path) -> str:
    return str(json.loads((out / "run.json").read_text())["run_id"])


def write_baseline(gold: Path, dest: Path, **changes: object) -> Path:
    """A variant of the gold folder whose baseline file is edited (for seeding)."""
    shutil.copytree(gold, dest)
    path = dest / "baseline_results.json"
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if key == "providers":
            data["providers"] = value
        else:
            data["providers"]["openai"][key] = value
    path.write_text(json.dumps(data))
    return dest


def test_eval_seed_gate_and_every_failure(tiny_gold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "server").mkdir()
    server = MlflowServer(tmp_path / "server")
    server.start()
    assert server.proc is not None
    pid = server.proc.pid
    try:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", server.uri)
        _flow(server, server.uri, tiny_gold, tmp_path, monkeypatch)
    finally:
        server.stop()
    # stopped by its PID: the process group is gone and the port refuses connections
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.uri}/health", timeout=5)


@pytest.mark.team_server
def test_eval_seed_gate_and_every_failure_on_the_team_server(
    team_server: TeamServer, tiny_gold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same flow on PostgreSQL, basic auth and served artifacts (scripts/team-server), as its writer."""
    for name, value in team_server.writer.items():
        monkeypatch.setenv(name, value)
    # basic auth answers 403 for a run that does not exist, as for one the account may not read
    _flow(team_server, team_server.uri, tiny_gold, tmp_path, monkeypatch, missing_run="refused GET /runs/get (403)")


def _flow(
    mlflow_server: MlflowServer | TeamServer,
    server_uri: str,
    tiny_gold: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    missing_run: str = "is not in the tracking store",
) -> None:
    mlflow_server.reset_registry()
    out = tmp_path / "out"

    # 1. a cassette eval into the server
    code, text = cli("run", "--mode", "cassette", "--gold", str(tiny_gold), "--output-dir", str(out))
    assert code == 0, text
    assert "oracle-aligned cassettes" in text
    good_run = run_id(out)

    # 2. no baseline registered yet: no ci provider, fail closed
    code, text = cli("gate", "--output-dir", str(out), "--gold", str(tiny_gold))
    assert code == 2 and "no provider with enforcement 'ci'" in text

    # 3. seed the baseline from the reviewed file and pass the gate
    code, text = cli("baseline", "register", "--gold", str(tiny_gold))
    assert code == 0 and "openai: registered version 1" in text and "vllm: registered version 1" in text
    code, text = cli("baseline", "register", "--gold", str(tiny_gold))
    assert code == 2 and "already has a baseline" in text
    code, text = cli("baseline", "register", "--gold", str(tiny_gold), "--if-missing")
    assert code == 0 and "openai: kept version 1" in text
    code, text = cli("gate", "--output-dir", str(out), "--gold", str(tiny_gold))
    assert code == 0, text
    assert re.search(r"precision/factual +1\.0000 +1\.0000 +\+0\.0000  pass", text), text
    report = (out / "gate.md").read_text()
    assert "| precision/factual | 1.0000 | 1.0000 | +0.0000 | — | 0.3333 | pass |" in report
    assert report.startswith("## extraction-eval regression gate: PASS")
    oracle = evidence_line("oracle_aligned_expected_json")
    assert f"\n{oracle}\n" in report and f"\nBaseline {oracle}\n" in report  # run and baseline evidence
    code, text = cli("baseline", "show", "--gold", str(tiny_gold))
    assert code == 0 and "openai: extraction-eval-openai v1 (alias baseline-tiny)" in text and "metrics: null" in text

    # the seed's gate script passes the same run in a fresh process that never imports mlflow
    probe = f"""
import runpy, sys
sys.argv = ["regression_gate.py", "--output-dir", {str(out)!r}, "--gold", {str(tiny_gold)!r}]
try:
    runpy.run_path({str(REPO / "scripts" / "regression_gate.py")!r}, run_name="__main__")
except SystemExit as exc:
    heavy = sorted(m for m in ("mlflow", "pandas", "scipy", "openai", "sqlalchemy") if m in sys.modules)
    print("exit", exc.code, "heavy", ",".join(heavy) or "none")
"""
    env = {**os.environ, "MLFLOW_TRACKING_URI": server_uri}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env)
    assert proc.stdout.strip().endswith("exit 0 heavy none"), proc.stdout + proc.stderr
    assert "| precision/factual | 1.0000 | 1.0000 | +0.0000 | — | 0.3333 | pass |" in proc.stdout

    # 4. a regressed run (mutated cassettes) fails the gate with exit 1
    regressed = tmp_path / "regressed"
    shutil.copytree(tiny_gold, regressed)
    mutate_cassettes(regressed, drop_memories({"t01", "t05"}))
    code, text = cli("run", "--mode", "cassette", "--gold", str(regressed), "--output-dir", str(out))
    assert code == 0, text
    code, text = cli("gate", "--output-dir", str(out), "--gold", str(tiny_gold))
    assert code == 1, text
    report = (out / "gate.md").read_text()
    assert "| recall/factual | 1.0000 | 0.6667 | -0.3333 | — | 0.3333 | FAIL |" in report
    assert "| recall/episodic | 1.0000 | 0.5000 | -0.5000 | — | 0.5000 | FAIL |" in report
    assert re.search(r"recall/factual +1\.0000 +0\.6667 +-0\.3333  FAIL", text), text

    # 5. fail-closed: smoke and fast runs are never gated
    for mode in ("smoke", "fast"):
        code, text = cli("run", "--mode", mode, "--gold", str(tiny_gold), "--output-dir", str(out))
        assert code == 0
        code, text = cli("gate", "--output-dir", str(out))
        assert code == 2 and f"covers the '{mode}' subset" in text

    # 6. fail-closed: an overridden run
    override_gold = tmp_path / "override"
    shutil.copytree(tiny_gold, override_gold)
    import extraction_eval.contract._prompt as prompt_module

    with monkeypatch.context() as patch:
        original = prompt_module._prompt_bytes()
        patch.setattr(prompt_module, "_prompt_bytes", lambda: original + b"\nchanged\n")
        patch.setenv("EXTRACTION_EVAL_ALLOW_CONTRACT_DRIFT", "1")
        code, text = cli("run", "--mode", "cassette", "--gold", str(override_gold), "--output-dir", str(out))
    assert code == 0, text
    assert "CONTRACT OVERRIDE: system prompt" in text
    code, text = cli("gate", "--output-dir", str(out))
    assert code == 2 and "contract_override=true" in text

    # 7. fail-closed: another gold version than the baseline's
    other = tmp_path / "other"
    shutil.copytree(tiny_gold, other)
    manifest_path = other / "cassette_manifest.json"
    data = json.loads(manifest_path.read_text())
    data["gold_version"] = "tiny2"
    manifest_path.write_text(json.dumps(data))
    code, text = cli("run", "--mode", "cassette", "--gold", str(other), "--output-dir", str(out))
    assert code == 0
    code, text = cli("gate", "--output-dir", str(out))
    # the gate looks up the baseline of the run's own gold version (alias baseline-tiny2): there is none
    assert code == 2 and "no provider with enforcement 'ci' has a registered baseline for gold tiny2" in text

    # 8. fail-closed: another matcher, a missing gated metric, a provider with no baseline
    for name, changes, message in (
        ("matcher", {"matcher": "embedding@2"}, "matcher 'fact-cover@2' but the baseline has 'embedding@2'"),
        ("metric", {"gated_metrics": ["macro/recall", "recall/nonexistent"]}, "missing or NaN"),
        ("subset", {"subset": "smoke"}, "subset 'full' but the baseline has 'smoke'"),
    ):
        variant = write_baseline(tiny_gold, tmp_path / f"variant-{name}", **changes)
        code, text = cli("baseline", "register", "--gold", str(variant), "--replace")
        assert code == 0, text
        code, text = cli("gate", "--run-id", good_run, "--output-dir", str(out))
        assert code == 2 and message in text, text
    only_other = write_baseline(
        tiny_gold,
        tmp_path / "variant-provider",
        providers={
            "anthropic": {
                "model": "claude",
                "enforcement": "ci",
                "cassette_kind": None,
                "subset": "full",
                "matcher": None,
                "gated_metrics": ["macro/recall"],
                "metrics": None,
                "last_refreshed": None,
                "mlflow_run_id": None,
            }
        },
    )
    mlflow_server.reset_registry()
    code, text = cli("baseline", "register", "--gold", str(only_other))
    assert code == 0
    code, text = cli("gate", "--run-id", good_run, "--output-dir", str(out))
    # baselines are looked up by exact name for the providers the harness has (openai, vllm): an
    # 'anthropic' model is not one of them, so no ci provider has a baseline
    assert code == 2 and "no provider with enforcement 'ci' has a registered baseline for gold tiny" in text

    # 9. fail-closed: a NaN gated metric and a live run, written to the server as such runs would be
    client = MlflowClient(server_uri)
    good = client.get_run(good_run)
    code, _ = cli("baseline", "register", "--gold", str(tiny_gold), "--replace")
    assert code == 0
    for label, tag_changes, metric_changes, message in (
        ("nan", {}, {"macro/recall": math.nan}, "missing or NaN"),
        ("live", {"mode": "live", "cassette_kind": "live_call"}, {}, "is a live run (mode 'live')"),
    ):
        fake = client.create_run(
            good.info.experiment_id, tags={**good.data.tags, **tag_changes, "mlflow.runName": label}
        )
        now = int(time.time() * 1000)
        metrics = {**good.data.metrics, **metric_changes}
        client.log_batch(fake.info.run_id, metrics=[Metric(k, v, now, 0) for k, v in metrics.items()])
        client.set_terminated(fake.info.run_id, "FINISHED")
        code, text = cli("gate", "--run-id", fake.info.run_id, "--output-dir", str(out))
        assert code == 2 and message in text, text

    # 10. fail-closed: no run to judge (no --run-id, no run.json, no git HEAD here)
    bare = tmp_path / "no-run-json"
    code, text = cli("gate", "--output-dir", str(bare))
    assert code == 2 and "no run to judge" in text
    assert (bare / "gate.md").read_text().startswith("## extraction-eval regression gate: FAIL: could not evaluate")

    # 11. fail-closed: a run id that does not exist, and an unreachable server
    code, text = cli("gate", "--run-id", "0" * 32, "--output-dir", str(out))
    assert code == 2 and missing_run in text
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{free_port()}")
    code, text = cli("gate", "--run-id", good_run, "--output-dir", str(out))
    assert code == 2 and "is unreachable" in text

    # 12. back on the real baseline, the good run still passes: nothing above changed it
    monkeypatch.setenv("MLFLOW_TRACKING_URI", server_uri)
    mlflow_server.reset_registry()
    code, _ = cli("baseline", "register", "--gold", str(tiny_gold))
    assert code == 0
    code, text = cli("gate", "--run-id", good_run, "--output-dir", str(out))
    assert code == 0, text
