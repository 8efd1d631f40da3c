"""The root ``extraction-eval`` app: sub-apps composed with ``add_typer``, errors turned
into exit codes in one place (``_Group.invoke``)."""

from __future__ import annotations

import os
import signal
import threading
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from .._entry import HELP_OPTIONS, entry_app
from .._exceptions import ExtractionEvalError, Terminated
from .._settings import mask_secrets


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated()


class _Group(TyperGroup):
    """Turns every ExtractionEvalError into a one-line message and its exit code, and SIGINT and
    SIGTERM into a line and the conventional 130 and 143 (after the command has ended its MLflow
    run and marked its output folder on the way out). Every line is masked (``mask_secrets``)."""

    def invoke(self, ctx: Any) -> Any:
        # MLflow's INFO lines ("Creating initial MLflow database tables...") are not for the user of
        # this tool; MLFLOW_LOGGING_LEVEL, when set, still wins. Read when a command runs, not at import.
        os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")
        in_main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _raise_terminated) if in_main else None
        try:
            return super().invoke(ctx)
        except ExtractionEvalError as exc:
            typer.echo(f"error: {mask_secrets(str(exc))}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            typer.echo("interrupted (SIGINT): stopped (exit 130).", err=True)
            raise typer.Exit(130) from None
        except Terminated:
            typer.echo("terminated (SIGTERM): stopped (exit 143).", err=True)
            raise typer.Exit(143) from None
        finally:
            if in_main:
                signal.signal(signal.SIGTERM, previous)


#: ``-h`` and ``--help`` on every command (the toolkit every entry point shares).
CONTEXT = HELP_OPTIONS


def new_app(help_text: str) -> typer.Typer:
    return entry_app(help_text, no_args_is_help=True)


app = typer.Typer(
    cls=_Group,
    help="Measure LLM memory extraction against a versioned gold set, tracked in MLflow, and gate regressions.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=CONTEXT,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"extraction-eval {version('extraction-eval')}")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Measure LLM memory extraction against a versioned gold set, tracked in MLflow, and gate regressions."""
