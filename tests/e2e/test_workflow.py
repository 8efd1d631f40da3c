"""The pull-request workflow: safe with untrusted text, and its commands are the ones tested here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..conftest import REPO, MlflowServer

WORKFLOW = REPO / ".github" / "workflows" / "extraction-eval.yml"


def load() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text())
    return data


def steps(job: str) -> list[dict[str, Any]]:
    return list(load()["jobs"][job]["steps"])


def test_no_github_event_expression_inside_a_run_script() -> None:
    for name, job in load()["jobs"].items():
        for step in job["steps"]:
            script = step.get("run", "")
            assert not re.search(r"\$\{\{\s*github\.event", script), (name, step.get("name"))
            assert "${{" not in script, (name, step.get("name"))  # nothing interpolated into shell at all


def test_the_pr_body_reaches_the_oracle_gate_through_env_only() -> None:
    (oracle,) = [s for s in steps("gate") if s.get("name") == "Oracle gate"]
    assert oracle["env"]["EXTRACTION_EVAL_PR_BODY"] == "${{ github.event.pull_request.body }}"
    assert "EXTRACTION_EVAL_PR_BODY" not in oracle["run"]


def test_triggers_and_the_override_is_never_set() -> None:
    data = load()
    triggers = data.get("on") or data.get(True)  # YAML 1.1 reads a bare `on` as true
    assert triggers["pull_request"]["types"] == ["opened", "synchronize", "reopened", "edited"]
    assert "schedule" in triggers
    mentions = [line for line in WORKFLOW.read_text().splitlines() if "EXTRACTION_EVAL_ALLOW_CONTRACT_DRIFT" in line]
    assert mentions and all(line.lstrip().startswith("#") for line in mentions)  # only ever in a comment
    weekly = data["jobs"]["weekly-live"]
    assert weekly["env"]["OPENAI_API_KEY"] == "${{ secrets.OPENAI_API_KEY }}"
    live_steps = [s for s in weekly["steps"] if "--mode live" in s.get("run", "")]
    assert live_steps and all(s["if"] == "steps.key.outputs.present == 'true'" for s in live_steps)


def test_the_tests_job_runs_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text()
    (tests_step,) = [s for s in steps("tests") if "pytest" in s.get("run", "")]
    assert tests_step["run"].strip() in readme
    assert 'bash -c "$test_command"' in (REPO / ".ci" / "run").read_text()


def _working_tree_copy(dest: Path) -> Path:
    """The project's files as they are (tracked and new), committed in a fresh repository."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    for rel in filter(None, listed):
        source = REPO / rel
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "pr"],
    ):
        subprocess.run(["git", *args], cwd=dest, check=True, capture_output=True)
    return dest


@pytest.mark.server
@pytest.mark.slow
def test_gate_and_quick_jobs_run_green_on_this_tree(mlflow_server: MlflowServer, tmp_path: Path) -> None:
    mlflow_server.reset_registry()
    tree = _working_tree_copy(tmp_path / "tree")
    base_sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tree, capture_output=True, text=True, check=True
    ).stdout.strip()
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "CI": "true",
        "MLFLOW_TRACKING_URI": mlflow_server.uri,
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    ran = []
    for job, skip in (("gate", ("Install", "Start a tracking server")), ("quick", ("Install",))):
        for step in steps(job):
            if "run" not in step or step.get("name") in skip:
                continue
            step_env = {
                k: ("" if "github.event.pull_request.body" in v else base_sha if "base.sha" in v else v)
                for k, v in step.get("env", {}).items()
            }
            script = step["run"].replace(".venv/bin/", f"{bin_dir}/")
            if job == "quick":
                step_env["MLFLOW_TRACKING_URI"] = f"sqlite:///{tree / 'mlflow.db'}"
            proc = subprocess.run(
                ["bash", "-ec", script], cwd=tree, env={**env, **step_env}, capture_output=True, text=True, timeout=600
            )
            assert proc.returncode == 0, (step["name"], proc.stdout[-3000:], proc.stderr[-3000:])
            ran.append(step["name"])
    assert ran == [
        "Seed the baseline from the base revision",
        "Cassette eval",
        "Regression gate",
        "Oracle gate",
        "Smoke replay",
        "Fast replay",
    ]
    summary = (tmp_path / "summary.md").read_text()
    assert "## extraction-eval regression gate: PASS" in summary
    assert "## extraction-eval oracle gate: PASS" in summary
    assert (tree / "output" / "gate.md").is_file()
