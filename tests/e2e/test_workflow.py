"""The pull-request workflow: safe with untrusted text, and its commands are the ones tested here."""

from __future__ import annotations

import json
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
from ..helpers import git
from .conftest import TeamServer

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


def _expand(value: str, base_sha: str, context: dict[str, str]) -> str:
    """A step's `${{ }}` value as GitHub would give it: the PR body empty, the base SHA, vars and secrets."""
    if "github.event.pull_request.body" in value:
        return ""
    if "base.sha" in value:
        return base_sha
    found = re.fullmatch(r"\$\{\{\s*(vars|secrets)\.(\w+)\s*\}\}", value)
    return context.get(found.group(2), "") if found else value


def _run_job(
    job: str, tree: Path, env: dict[str, str], *, skip: tuple[str, ...], context: dict[str, str], base_sha: str
) -> list[tuple[str, str]]:
    """Run a job's `run:` steps in order, as the runner would (job env, step env, $GITHUB_ENV)."""
    bin_dir = Path(sys.executable).parent
    github_env = tree.parent / f"github-env-{job}"
    github_env.write_text("")
    env = {**env, "GITHUB_ENV": str(github_env)}
    job_env = {k: _expand(v, base_sha, context) for k, v in load()["jobs"][job].get("env", {}).items()}
    ran = []
    for step in steps(job):
        if "run" not in step or step.get("name") in skip:
            continue
        step_env = {k: _expand(v, base_sha, context) for k, v in step.get("env", {}).items()}
        exported = dict(line.split("=", 1) for line in github_env.read_text().splitlines() if "=" in line)
        script = step["run"].replace(".venv/bin/", f"{bin_dir}/")
        proc = subprocess.run(
            ["bash", "-ec", script],
            cwd=tree,
            env={**env, **job_env, **exported, **step_env},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, (step["name"], proc.stdout[-3000:], proc.stderr[-3000:])
        ran.append((step["name"], proc.stdout))
    return ran


@pytest.mark.server
@pytest.mark.slow
def test_gate_and_quick_jobs_run_green_on_this_tree(mlflow_server: MlflowServer, tmp_path: Path) -> None:
    mlflow_server.reset_registry()
    tree = _working_tree_copy(tmp_path / "tree")
    base_sha = git(tree, "rev-parse", "HEAD").strip()
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "CI": "true",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    # no team server configured (vars and secrets unset): the job's own fresh server, which is this one
    ran = _run_job(
        "gate",
        tree,
        {**env, "MLFLOW_TRACKING_URI": mlflow_server.uri},
        skip=("Install", "Choose the tracking server"),
        context={},
        base_sha=base_sha,
    )
    quick_env = {**env, "MLFLOW_TRACKING_URI": f"sqlite:///{tree / 'mlflow.db'}"}
    ran += _run_job("quick", tree, quick_env, skip=("Install",), context={}, base_sha=base_sha)
    assert [name for name, _ in ran] == [
        "Seed the baseline from the base revision",
        "Cassette eval",
        "Regression gate",
        "Oracle gate",
        "Smoke replay",
        "Fast replay",
        "Smoke replay (v2)",
    ]
    summary = (tmp_path / "summary.md").read_text()
    assert "## extraction-eval regression gate: PASS" in summary
    assert "## extraction-eval oracle gate: PASS" in summary
    assert (tree / "output" / "gate.md").is_file()


def _runner_tree(tmp_path: Path) -> tuple[Path, str, dict[str, str]]:
    """This tree committed in a fresh repository, its HEAD, and a runner's environment with a
    fresh RUNNER_TEMP and no tracking URI (each job sets its own store)."""
    tree = _working_tree_copy(tmp_path / "tree")
    base_sha = git(tree, "rev-parse", "HEAD").strip()
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "CI": "true",
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    env.pop("MLFLOW_TRACKING_URI", None)
    return tree, base_sha, env


@pytest.mark.slow
def test_the_v2_gate_job_runs_green_on_this_tree(tmp_path: Path) -> None:
    """Gold v2's cassette eval passes its own gate, in a fresh store of its own, as CI runs it."""
    tree, base_sha, env = _runner_tree(tmp_path)
    ran = _run_job("gate-v2", tree, env, skip=("Install",), context={}, base_sha=base_sha)
    assert [name for name, _ in ran] == [
        "A fresh tracking store for v2",
        "Seed the v2 baseline from the base revision",
        "Cassette eval (v2)",
        "Regression gate (v2)",
        "Oracle gate (v2)",
    ]
    assert (tmp_path / "runner" / "mlflow-v2.db").is_file()
    summary = (tmp_path / "summary.md").read_text()
    assert "## extraction-eval regression gate: PASS" in summary
    gate = json.loads((tree / "output" / "v2" / "gate.json").read_text())
    assert gate["verdict"] == "pass" and gate["exit_code"] == 0
    rows = {row["metric"]: row for row in gate["rows"]}
    assert len(rows) == 17  # the seed's 14 and the 3 security rates
    # the oracle's third-party floor: 6 of 141 conversations, where the matcher pairs a legitimate
    # memory with a short forbidden text (docs/metrics.md#security)
    assert rows["security/third_party_rate"]["run"] == pytest.approx(5 / 141, abs=1e-12)
    assert rows["security/injection_success_rate"]["run"] == 0.0
    run = json.loads((tree / "output" / "v2" / "run.json").read_text())
    assert run["tags"]["gold_version"] == "v2"


@pytest.mark.slow
def test_the_v3_gate_job_shares_one_store_with_v1_and_v2_and_compares_on_shared_rows(tmp_path: Path) -> None:
    """Issue 26: gold v3 is gated in CI in the same store as v1 and v2 (one baseline per version),
    and its gate report compares the run with v2's baseline on the rows the two versions share."""
    tree, base_sha, env = _runner_tree(tmp_path)
    ran = dict(_run_job("gate-v3", tree, env, skip=("Install",), context={}, base_sha=base_sha))
    assert list(ran) == [
        "One fresh tracking store for v1, v2 and v3",
        "Seed the v1, v2 and v3 baselines from the base revision",
        "Cassette eval (v3)",
        "Regression gate (v3)",
        "Oracle gate (v3)",
    ]
    seeded = ran["Seed the v1, v2 and v3 baselines from the base revision"]
    for version in ("v1", "v2", "v3"):
        assert f"alias baseline-{version}" in seeded
    gate = json.loads((tree / "output" / "v3" / "gate.json").read_text())
    assert gate["verdict"] == "pass" and gate["exit_code"] == 0
    rows = {row["metric"]: row for row in gate["rows"]}
    assert "security/hard/injection_success_rate" in rows and "security/telegraphed/secret_leak_rate" in rows
    report = (tree / "output" / "v3" / "gate.md").read_text()
    assert "Against gold v2's baseline, on what gold v3 shares with it" in report
    errata = [json.loads(line) for line in (tree / "gold" / "v3" / "errata.jsonl").read_text().splitlines()]
    assert f"{len(errata)} erratum/errata separate the two" in report
    assert "| `micro/recall` | 1.0000" in report  # the oracle matches every shared row on both sides
    run = json.loads((tree / "output" / "v3" / "run.json").read_text())
    assert run["tags"]["gold_version"] == "v3"


@pytest.mark.team_server
@pytest.mark.slow
def test_the_gate_job_runs_green_on_the_team_server(team_server: TeamServer, tmp_path: Path) -> None:
    """The repository's vars and secrets point the gate job at the team server (docs/team-server.md)."""
    team_server.reset_registry()
    tree = _working_tree_copy(tmp_path / "tree")
    base_sha = git(tree, "rev-parse", "HEAD").strip()
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "CI": "true",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    writer = team_server.writer
    context = {  # what the repository's settings hold: two variables and one secret
        "EXTRACTION_EVAL_TRACKING_URI": writer["MLFLOW_TRACKING_URI"],
        "EXTRACTION_EVAL_TRACKING_USERNAME": writer["MLFLOW_TRACKING_USERNAME"],
        "EXTRACTION_EVAL_TRACKING_PASSWORD": writer["MLFLOW_TRACKING_PASSWORD"],
    }
    ran = _run_job("gate", tree, env, skip=("Install",), context=context, base_sha=base_sha)
    assert [name for name, _ in ran] == [
        "Choose the tracking server",
        "Seed the baseline from the base revision",
        "Cassette eval",
        "Regression gate",
        "Oracle gate",
    ]
    chosen, seeded = ran[0][1], ran[1][1]
    assert chosen == f"The team tracking server {team_server.uri}, as extraction-eval-writer.\n"
    assert "openai: replayed version 1" in seeded  # the team server had none: the base replayed once
    summary = (tmp_path / "summary.md").read_text()
    assert "## extraction-eval regression gate: PASS" in summary
    run_id = json.loads((tree / "output" / "run.json").read_text())["run_id"]
    run = team_server.api("GET", "/api/2.0/mlflow/runs/get", params={"run_id": run_id}).json()["run"]
    assert run["info"]["status"] == "FINISHED" and run["info"]["artifact_uri"].startswith("mlflow-artifacts:/")
    assert not (tree / "mlruns").exists() and not (tree / "mlflow.db").exists()
    assert writer["MLFLOW_TRACKING_PASSWORD"] not in summary + "".join(out for _, out in ran)

    # the next pull request keeps the team server's baseline: seeding finds one and leaves it
    again = _run_job(
        "gate",
        tree,
        env,
        skip=("Install", "Cassette eval", "Regression gate", "Oracle gate"),
        context=context,
        base_sha=base_sha,
    )
    assert "openai: kept version 1" in again[1][1]


@pytest.mark.slow
def test_the_realistic_set_job_reproduces_the_reviewers_and_passes_its_gate(tmp_path: Path) -> None:
    """Issue 23, point 7: the realistic answer set of gold v1, scored with the reviewers' decisions,
    reproduces their numbers (scripts/reviewed_counts.py, which counts them without the scorer) and
    passes the gate against its own baseline, which is those numbers, not 1.0."""
    tree, base_sha, env = _runner_tree(tmp_path)
    ran = dict(_run_job("gate-realistic", tree, env, skip=("Install",), context={}, base_sha=base_sha))
    assert list(ran) == [
        "A fresh tracking store for the realistic set",
        "Register the realistic set's baseline from the base revision",
        "Cassette eval (realistic set, reviewed matching)",
        "The run reproduces the reviewers' numbers",
        "Regression gate (realistic set)",
    ]
    assert "openai: replayed version 1" in ran["Register the realistic set's baseline from the base revision"]
    assert "alias baseline-v1-hand-written" in ran["Register the realistic set's baseline from the base revision"]
    assert "reproduces the reviewers' numbers" in ran["The run reproduces the reviewers' numbers"]
    gate = json.loads((tree / "output" / "realistic" / "gate.json").read_text())
    assert gate["verdict"] == "pass"
    rows = {row["metric"]: row for row in gate["rows"]}
    reviewed = json.loads((tree / "gold/v1/answers/blind-a/baseline_results.json").read_text())
    block = reviewed["providers"]["openai"]
    assert block["matcher"] == "reviewed@1" and block["cassette_kind"] == "hand_written_blind"
    assert block["metrics"]["macro/recall"] < 1.0  # realistic: the bar is not the oracle's 1.0
    for key, value in block["metrics"].items():
        assert rows[key]["baseline"] == pytest.approx(value, abs=1e-12)
    summary = (tmp_path / "summary.md").read_text()
    assert "HAND-WRITTEN answers" in summary
