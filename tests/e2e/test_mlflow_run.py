"""`mlflow run . -P mode=cassette --env-manager local --experiment-name extraction-eval` works."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow import MlflowClient

from ..conftest import REPO

pytestmark = pytest.mark.server


def test_mlflow_run_logs_into_the_run_mlflow_made(tiny_gold: Path, server_uri: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "MLFLOW_TRACKING_URI": server_uri}
    proc = subprocess.run(
        [
            str(Path(bin_dir) / "mlflow"),
            "run",
            ".",
            "-P",
            "mode=cassette",
            "-P",
            f"gold={tiny_gold}",
            "-P",
            f"output_dir={out}",
            "-P",
            "max_failure_rate=0.2",
            "--env-manager",
            "local",
            "--experiment-name",
            "extraction-eval",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run_json = json.loads((out / "run.json").read_text())
    client = MlflowClient(server_uri)
    run = client.get_run(run_json["run_id"])
    tags = run.data.tags
    assert tags["mlflow.project.entryPoint"] == "main"  # the run mlflow created, not a second one
    assert tags["provider"] == "openai" and tags["cassette_kind"] == "oracle_aligned_expected_json"
    assert run.data.params["mode"] == "cassette" and run.data.params["max_failure_rate"] == "0.2"
    # the harness's name, not a random one: the commit first, where the runs table does not cut it
    assert re.fullmatch(r"[0-9a-f]{7}(\+dirty)?-cassette-openai-tiny", run.info.run_name), run.info.run_name
    assert "output_dir" in run.data.params and "gold_dir" not in run.data.params
    assert run.data.metrics["macro/recall"] == 1.0
    assert run.info.status == "FINISHED"
    assert client.get_experiment(run.info.experiment_id).name == "extraction-eval"
    # the per-conversation traces went to the server too (log_spans over OTLP, start_trace over REST)
    traces = client.search_traces(locations=[run.info.experiment_id], run_id=run.info.run_id, max_results=100)
    assert tags["traces"] == "8" and len(traces) == 8
    assert all([a.name for a in t.info.assessments].count("status") == 1 for t in traces)
    outcomes = [a.value for t in traces for a in t.info.assessments if a.name == "outcome"]
    # oracle answers: every expected memory matched, and the one negative conversation (t08) correct
    assert sorted(outcomes) == ["matched"] * int(run.data.params["counts/expected"]) + ["negative_ok"]
    # and over REST too, the traces are associated with the prompt version that produced them
    (link,) = json.loads(tags["mlflow.linkedPrompts"])
    linked = client.search_traces(
        locations=[run.info.experiment_id], filter_string=f'prompt = "{link["name"]}/{link["version"]}"'
    )
    assert len(linked) == 8


@pytest.mark.parametrize("param", ["mode=bogus", "max_failure_rate=lots", "colour=blue"])
def test_a_refused_param_leaves_no_failed_run(param: str, server_uri: str, tmp_path: Path) -> None:
    from mlflow.entities import ViewType

    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "MLFLOW_TRACKING_URI": server_uri}
    experiment = f"refused-{tmp_path.name}"
    proc = subprocess.run(
        [
            *(str(Path(bin_dir) / "mlflow"), "run", ".", "-P", param, "-P", f"output_dir={tmp_path / 'out'}"),
            *("--env-manager", "local", "--experiment-name", experiment),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode != 0
    assert "Error: " in proc.stderr and "deleted MLflow run" in proc.stderr, proc.stderr[-3000:]
    client = MlflowClient(server_uri)
    experiment_id = client.get_experiment_by_name(experiment).experiment_id
    assert client.search_runs([experiment_id], run_view_type=ViewType.ACTIVE_ONLY) == []
    deleted = client.search_runs([experiment_id], run_view_type=ViewType.DELETED_ONLY)
    assert [r.info.status for r in deleted] == ["KILLED"] and not deleted[0].data.metrics
    assert not (tmp_path / "out").exists()  # refused before the output folder was touched


@pytest.mark.slow
def test_the_readme_first_command_is_quiet_and_ends_with_the_next_step(tmp_path: Path) -> None:
    """Issue 22, point 5: after pip, the README's first command prints under 40 lines, no MLflow INFO
    line, no raw Markdown from the gate, the evidence once, and ends with where to look next. Its steps
    after the install run as written, in a clean copy of the tracked tree."""
    readme = (REPO / "README.md").read_text()
    first = next(
        line for line in readme.splitlines() if line.startswith("python3 -m venv .venv") and "mlflow run" in line
    )
    steps = first.split("pip install -q -e . && ", 1)[1]
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    for path in subprocess.run(["git", "ls-files", "-m"], cwd=REPO, capture_output=True, text=True).stdout.split():
        (clone / path).write_bytes((REPO / path).read_bytes())  # this tree's edits, as a clean clone would have them
    bin_dir = str(Path(sys.executable).parent)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MLFLOW_", "EXTRACTION_EVAL_", "GITHUB_")) and k != "CI"
    }
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(["bash", "-c", steps], cwd=clone, env=env, capture_output=True, text=True, timeout=900)
    text = proc.stdout + proc.stderr
    lines = text.strip().splitlines()
    assert proc.returncode == 0, text[-3000:]
    assert len(lines) < 40, text
    assert not any(" INFO " in line for line in lines), text
    assert not any(line.startswith(("## ", "| ", "**")) for line in lines), text
    assert sum(line.startswith("Evidence:") for line in lines) == 1, text
    assert lines[-1].startswith("Next: run `mlflow ui --backend-store-uri sqlite:///") and "output/" in lines[-1]
    assert "extraction-eval regression gate: PASS" in text
    assert (
        not (clone / "mlflow.db.init-lock").exists()
        or "mlflow.db.init-lock"
        not in subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True).stdout
    )
