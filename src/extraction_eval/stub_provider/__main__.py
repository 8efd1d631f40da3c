"""``python -m extraction_eval.stub_provider --gold DIR [--answers F] [--script F] [--port N]``.

Typer, like every entry point of the project (the CLI, scripts/ and benchmarks/): ``-h`` and
``--help`` both print the help."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from .._entry import entry_app
from .._exceptions import ExtractionEvalError
from ._server import serve

app = entry_app()


@app.command(help="Serve a local OpenAI-compatible chat-completions stub for a gold folder.")
def stub(
    gold: Annotated[Path, typer.Option(help="gold folder to answer for")],
    answers: Annotated[Path | None, typer.Option(help="JSONL answer set (default: gold memories)")] = None,
    script: Annotated[Path | None, typer.Option(help="JSON behaviour script")] = None,
    host: Annotated[str, typer.Option(help="address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="0 picks a free port")] = 0,
    port_file: Annotated[Path | None, typer.Option(help="write the bound port here")] = None,
) -> None:
    try:
        serve(gold, answers, script, host=host, port=port, port_file=port_file)
    except ExtractionEvalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None


if __name__ == "__main__":
    app(prog_name="python -m extraction_eval.stub_provider")
