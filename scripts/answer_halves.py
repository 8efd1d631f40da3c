"""Write <gold>/answers/halves.json: the seeded tuning/held-out split of a gold version's answer sets.

    python scripts/answer_halves.py --gold gold/v1
    python scripts/answer_halves.py --gold gold/v3 --inherit v2   # v2's conversations keep their half

Run once per gold version, before any answer set is scored; then pin the file's sha256 in
src/extraction_eval/gold/_pinned.py (ANSWER_HALVES). It prints the sha256 to pin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import run_entry
from extraction_eval._jsonio import sha256_file, write_json
from extraction_eval.gold import load_gold
from extraction_eval.gold._halves import HALVES_FILE, halves_document, load_halves
from extraction_eval.gold._load import ANSWERS_DIR


def main(
    gold_dir: Annotated[Path, typer.Option("--gold", help="the gold folder to split")],
    inherit: Annotated[
        str | None, typer.Option("--inherit", help="an earlier version whose halves its conversations keep (v2)")
    ] = None,
) -> None:
    gold = load_gold(gold_dir, require_manifest=False)
    path = gold_dir / ANSWERS_DIR / HALVES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    inherited = None
    if inherit is not None:
        earlier = load_gold(gold_dir.resolve().parent / inherit, require_manifest=False)
        inherited = load_halves(earlier)
    doc = halves_document(gold, inherited=inherited, inherits=inherit)
    write_json(path, doc)
    print(f"{path}: {len(doc['tuning'])} tuning, {len(doc['heldout'])} held-out; sha256 {sha256_file(path)}")


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
