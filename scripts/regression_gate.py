#!/usr/bin/env python3
"""The seed's `eval/regression_gate.py`: the regression gate without the full CLI.

Same judgement, output and exit codes as `extraction-eval gate` (0 pass, 1 regression,
2 could not evaluate). It uses the project's one entry-point toolkit (typer, through
`extraction_eval._entry`) but imports none of the CLI, so CI's gate step stays quick.

    python scripts/regression_gate.py [--run-id ID] [--output-dir output] [--gold gold/v1]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import entry_app

app = entry_app()


@app.command(help=__doc__.splitlines()[0])
def main(
    run_id: Annotated[str | None, typer.Option(help="judge this run (default: OUTPUT_DIR/run.json)")] = None,
    output_dir: Annotated[Path, typer.Option(help="where run.json is read and gate.md written")] = Path("output"),
    gold: Annotated[Path, typer.Option(help="the gold folder the run was scored on")] = Path("gold/v1"),
) -> None:
    from extraction_eval._exceptions import ExtractionEvalError
    from extraction_eval._settings import mask_secrets
    from extraction_eval.gates._gate_run import run_gate

    try:
        result, markdown = run_gate(run_id, output_dir, gold)
    except ExtractionEvalError as exc:
        print(f"error: {mask_secrets(str(exc))}", file=sys.stderr)
        raise typer.Exit(exc.exit_code) from None
    print(markdown)
    print(f"wrote {output_dir / 'gate.md'}; exit {result.exit_code} ({result.verdict.value})")
    raise typer.Exit(result.exit_code)


if __name__ == "__main__":
    app(prog_name="regression_gate.py")
