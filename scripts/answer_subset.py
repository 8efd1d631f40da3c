"""A gold folder holding only the conversations a review has decided, with its answer sets, so
that whole-set commands (`run --answers`, scripts/twin_gate.py) work on a review in progress.

    python scripts/answer_subset.py --gold gold/v2 --set blind-a [--set blind-a-twin] --out DIR

Copies into DIR the conversations that `<gold>/answers/<first set>/matches.jsonl` decides, their
expected and forbidden rows, the baseline file, and, for each set, those conversations' answers
(with their writers) and matches, then writes each set's cassettes and manifest with the
project's own code. DIR's folder name is its gold version, so name it for what it holds (e.g.
`.../v2-reviewed`); nothing in the project's gold folders is touched.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import run_entry
from extraction_eval.cassettes._answers import ANSWERS_FILE, write_answer_cassettes
from extraction_eval.evaluation._reviewing import MATCHES_FILE


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main(
    gold: Annotated[Path, typer.Option("--gold", help="the gold folder")],
    sets: Annotated[list[str], typer.Option("--set", help="answer sets to carry (the first decides the subset)")],
    out: Annotated[Path, typer.Option("--out", help="the new gold folder (must not exist)")],
) -> None:
    if out.exists():
        raise SystemExit(f"{out} exists: choose a new folder")
    decided = {r["conversation_id"] for r in _rows(gold / "answers" / sets[0] / MATCHES_FILE)}
    out.mkdir(parents=True)
    for name in ("conversations.jsonl", "expected_memories.jsonl", "forbidden_memories.jsonl"):
        if (gold / name).is_file():
            _write(out / name, [r for r in _rows(gold / name) if r["conversation_id"] in decided])
    shutil.copy(gold / "baseline_results.json", out / "baseline_results.json")
    data = json.loads((out / "baseline_results.json").read_text())
    data["gold_version"] = out.name
    (out / "baseline_results.json").write_text(json.dumps(data, indent=2) + "\n")
    for name in sets:
        source = gold / "answers" / name
        _write(
            out / "answers" / name / ANSWERS_FILE,
            [r for r in _rows(source / ANSWERS_FILE) if r["conversation_id"] in decided],
        )
        if (source / MATCHES_FILE).is_file():
            _write(
                out / "answers" / name / MATCHES_FILE,
                [r for r in _rows(source / MATCHES_FILE) if r["conversation_id"] in decided],
            )
        write_answer_cassettes(out, name)
    print(f"{out}: {len(decided)} conversations, sets {sets}")


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
