"""Issue 22's sequence in one store: the v1 eval and gate, the v2 eval, register and gate, then
`rescore` (its own folder) and a plain `gate` that still judges the eval run. The same sequence
runs against the team server in tests/e2e/test_team_server.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from mlflow import MlflowClient
from typer.testing import CliRunner

from extraction_eval.cli import app

from ..conftest import REPO


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_v1_and_v2_gates_pass_in_one_store_and_rescore_leaves_the_gate_alone(
    isolated_env: Path, local_store: str
) -> None:
    for version in ("v1", "v2"):
        shutil.copytree(REPO / "gold" / version, isolated_env / "gold" / version)
    tracked = {p: p.read_bytes() for p in (isolated_env / "gold").rglob("*") if p.is_file()}
    assert invoke("run", "--mode", "cassette", "--no-traces")[0] == 0
    eval_run = json.loads(Path("output/run.json").read_text())["run_id"]
    assert invoke("baseline", "register", "--if-missing")[0] == 0
    code, text = invoke("gate")
    assert code == 0, text
    code, text = invoke("run", "--mode", "cassette", "--gold", "gold/v2", "--output-dir", "output/v2", "--no-traces")
    assert code == 0, text
    code, text = invoke("baseline", "register", "--if-missing", "--gold", "gold/v2")
    assert code == 0 and "openai: registered version 2" in text and "alias baseline-v2" in text, text
    code, text = invoke("gate", "--gold", "gold/v2", "--output-dir", "output/v2")
    assert code == 0, text
    code, text = invoke("gate")  # v1's gate still passes: v2's baseline took nothing from it
    assert code == 0, text
    aliases = dict(
        MlflowClient(local_store, registry_uri=local_store).get_registered_model("extraction-eval-openai").aliases
    )
    assert aliases == {"baseline-v1": 1, "baseline-v2": 2}

    code, text = invoke("rescore", "--run-id", eval_run, "--matcher", "keyed-dice@3", "--no-traces")
    assert code == 0, text
    rescored = json.loads(Path(f"output/rescore-{eval_run}/run.json").read_text())["run_id"]
    assert f"extraction-eval gate --run-id {rescored} --output-dir output/rescore-{eval_run}" in text
    assert json.loads(Path("output/run.json").read_text())["run_id"] == eval_run
    code, text = invoke("gate")
    assert code == 0, text
    assert f"run {eval_run}: " in text
    assert {p: p.read_bytes() for p in (isolated_env / "gold").rglob("*") if p.is_file()} == tracked
