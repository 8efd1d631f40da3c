"""``python -m extraction_eval.stub_provider --gold DIR [--answers F] [--script F] [--port N]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._exceptions import ExtractionEvalError
from ._server import serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m extraction_eval.stub_provider",
        description="Serve a local OpenAI-compatible chat-completions stub for a gold folder.",
    )
    parser.add_argument("--gold", type=Path, required=True, help="gold folder to answer for")
    parser.add_argument("--answers", type=Path, help="JSONL answer set (default: gold memories)")
    parser.add_argument("--script", type=Path, help="JSON behaviour script")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--port-file", type=Path, help="write the bound port here")
    args = parser.parse_args(argv)
    try:
        serve(
            args.gold,
            args.answers,
            args.script,
            host=args.host,
            port=args.port,
            port_file=args.port_file,
        )
    except ExtractionEvalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
