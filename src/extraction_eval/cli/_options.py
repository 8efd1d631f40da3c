"""Options shared by several commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

GoldOption = Annotated[
    Path,
    typer.Option(
        "--gold",
        help="Gold folder (conversations, expected memories, cassettes, manifest, baseline).",
        envvar="EXTRACTION_EVAL_GOLD",
        file_okay=False,
    ),
]
OutputOption = Annotated[
    Path,
    typer.Option(
        "--output-dir",
        help="Where metrics.json, per_conversation.jsonl, run.json and gate.md go.",
        envvar="EXTRACTION_EVAL_OUTPUT_DIR",
        file_okay=False,
    ),
]
DEFAULT_GOLD = Path("gold/v1")
DEFAULT_OUTPUT = Path("output")
