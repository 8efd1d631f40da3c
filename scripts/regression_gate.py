#!/usr/bin/env python3
"""The seed's `eval/regression_gate.py`: the regression gate without the CLI framework.

Same judgement, output and exit codes as `extraction-eval gate` (0 pass, 1 regression,
2 could not evaluate); it skips typer's start-up cost, so CI's gate step is quick.

    python scripts/regression_gate.py [--run-id ID] [--output-dir output] [--gold gold/v1]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="regression_gate.py", description=__doc__.splitlines()[0])
    parser.add_argument("--run-id", default=None, help="judge this run (default: output/run.json)")
    parser.add_argument("--output-dir", type=Path, default=Path("output"))
    parser.add_argument("--gold", type=Path, default=Path("gold/v1"))
    args = parser.parse_args(argv)

    from extraction_eval._exceptions import ExtractionEvalError
    from extraction_eval._settings import mask_secrets
    from extraction_eval.gates._gate_run import run_gate

    try:
        result, markdown = run_gate(args.run_id, args.output_dir, args.gold)
    except ExtractionEvalError as exc:
        print(f"error: {mask_secrets(str(exc))}", file=sys.stderr)
        return exc.exit_code
    print(markdown)
    print(f"wrote {args.output_dir / 'gate.md'}; exit {result.exit_code} ({result.verdict.value})")
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main())
