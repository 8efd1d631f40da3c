"""`mlflow run . -P mode=cassette --env-manager local --experiment-name extraction-eval` works."""

from __future__ import annotations

import json
import os
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
    assert run.data.params["mode"] == "cassette"
    assert run.data.metrics["macro/recall"] == 1.0
    assert run.info.status == "FINISHED"
    assert client.get_experiment(run.info.experiment_id).name == "extraction-eval"
