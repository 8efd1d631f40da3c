"""MLproject: every option of `run` and `gate` is a -P param under the CLI's name, and the
command the entry point runs is the CLI with the options that were left empty dropped."""

from __future__ import annotations

import shlex
import subprocess
import sys
from typing import Any

import pytest
import typer
from mlflow.projects._project_spec import load_project

from extraction_eval.cli import app
from extraction_eval.cli._project import cli_args

from ..conftest import REPO

# options of the CLI that are not run settings: help, and --progress (an entry point is never on a terminal)
NOT_PARAMS = {"help", "progress"}


def _command(name: str) -> Any:
    group: Any = typer.main.get_command(app)
    return group.commands[name]


@pytest.mark.parametrize(("entry_point", "command"), [("main", "run"), ("gate", "gate")])
def test_every_option_is_a_param_with_the_clis_name(entry_point: str, command: str) -> None:
    spec = load_project(str(REPO))
    params = set(spec.get_entry_point(entry_point).parameters)
    options = {p.name for p in _command(command).params} - NOT_PARAMS
    assert params == options


def test_the_entry_point_command_is_the_cli_without_empty_options() -> None:
    spec = load_project(str(REPO))
    line = spec.get_entry_point("main").compute_command({"mode": "smoke", "max_failure_rate": "0.2"}, None)
    argv = shlex.split(line)
    assert argv[:3] == ["python", "-m", "extraction_eval.cli._project"]
    assert cli_args(argv[3:]) == [
        "run",
        "--no-progress",
        "--mode",
        "smoke",
        "--gold",
        "gold/v1",
        "--output-dir",
        "output",
        "--max-failure-rate",
        "0.2",
        "--concurrency",
        "8",
        "--timeout",
        "60.0",
        "--max-retries",
        "4",
        "--repeat",
        "1",
    ]
    on = spec.get_entry_point("main").compute_command({"no_traces": "true"}, None)
    assert "--no-traces" in cli_args(shlex.split(on)[3:])
    assert cli_args(["run", "--no-traces", "maybe"]) == ["run", "--no-traces", "maybe"]  # the CLI refuses it


def test_project_environment_is_python_env() -> None:
    spec = load_project(str(REPO))
    assert spec.env_type == "python_env" and spec.env_config_path == str(REPO / "python_env.yaml")


def test_version_help_and_completion() -> None:
    from importlib.metadata import version

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "extraction_eval", *args], capture_output=True, text=True)

    assert cli("--version").stdout == f"extraction-eval {version('extraction-eval')}\n"
    assert cli("-h").stdout == cli("--help").stdout and "--install-completion" in cli("-h").stdout
    assert "--max-failure-rate" in cli("run", "-h").stdout and "--summary" in cli("gold", "review", "-h").stdout
