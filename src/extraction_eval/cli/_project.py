"""``python -m extraction_eval.cli._project ARGS``: the MLproject entry points' command.

MLproject parameters always have a value; an optional CLI option (``--max-failure-rate``,
``--max-tokens``, ``--run-id``…) is left unset by its empty default. This drops every
``--option ''`` pair and hands the rest to the CLI unchanged, so ``-P`` names and values
are the CLI's own.

An unknown ``-P`` name or a value the CLI refuses fails here, before anything runs. MLflow
has already created the project's run by then (it does so before it starts the command);
that run, which holds nothing but MLflow's tags and params, is deleted, so no FAILED run
is left in the experiment.
"""

from __future__ import annotations

import sys
from typing import Any

import typer
from typer.exceptions import TyperException

#: CLI flags that take no value, and the -P values that turn them on or leave them off.
FLAGS = frozenset({"--no-traces"})
TRUE = frozenset({"true", "1", "yes"})
FALSE = frozenset({"false", "0", "no", ""})


def cli_args(argv: list[str]) -> list[str]:
    """``argv`` without the ``--option ''`` pairs; a flag's ``-P`` value (``--no-traces true``)
    becomes the flag or nothing. Any other value after a flag is left in place, for the CLI to
    refuse."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] in FLAGS and i + 1 < len(argv) and argv[i + 1].lower() in TRUE | FALSE:
            if argv[i + 1].lower() in TRUE:
                out.append(argv[i])
            i += 2
            continue
        if argv[i].startswith("--") and i + 1 < len(argv) and argv[i + 1] == "":
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def refusal(args: list[str]) -> tuple[str, int] | None:
    """What the CLI would refuse in ``args`` (an unknown option, a bad value, ``run`` options
    that cannot go together), as (message, exit code), parsed and converted but not run; None
    when they are fine."""
    from .._exceptions import ExtractionEvalError
    from . import app

    if any(a in ("-h", "--help", "-V", "--version") for a in args):
        return None  # the CLI prints them
    group: Any = typer.main.get_command(app)
    try:
        ctx = group.make_context("extraction-eval", list(args))
        with ctx:
            name, command, rest = group.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
            if command is None:
                return None
            with command.make_context(name or "", rest, parent=ctx) as sub:
                if name == "run":
                    from ..evaluation import RunOptions, check_options

                    check_options(sub.params["mode"], RunOptions(repeat=sub.params["repeat"]))
    except TyperException as exc:  # click's UsageError and BadParameter (typer vendors click)
        return f"Error: {exc.format_message()}\nTry 'extraction-eval -h' for help.", exc.exit_code
    except ExtractionEvalError as exc:
        return f"error: {exc}", exc.exit_code
    return None


def main() -> None:
    from .._settings import mlflow_run_id, tracking_uri
    from . import app

    args = cli_args(sys.argv[1:])
    refused = refusal(args)
    if refused is not None:
        message, code = refused
        typer.echo(message, err=True)
        run_id = mlflow_run_id()
        if run_id is not None:
            from ..tracking._log import discard_project_run

            if discard_project_run(tracking_uri(), run_id):
                typer.echo(f"deleted MLflow run {run_id}, which `mlflow run` created for these arguments.", err=True)
        sys.exit(code)
    app(args=args, prog_name="extraction-eval")


if __name__ == "__main__":
    main()
