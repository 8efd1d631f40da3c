"""Write <gold>/answers/halves.json: the seeded tuning/held-out split of a gold version's answer sets.

    python scripts/answer_halves.py --gold gold/v1

Run once per gold version, before any answer set is scored; then pin the file's sha256 in
src/extraction_eval/gold/_pinned.py (ANSWER_HALVES). It prints the sha256 to pin.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from extraction_eval._jsonio import sha256_file, write_json
from extraction_eval.gold import load_gold
from extraction_eval.gold._halves import HALVES_FILE, halves_document
from extraction_eval.gold._load import ANSWERS_DIR


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, required=True)
    args = parser.parse_args()
    gold = load_gold(args.gold, require_manifest=False)
    path = args.gold / ANSWERS_DIR / HALVES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = halves_document(gold)
    write_json(path, doc)
    print(f"{path}: {len(doc['tuning'])} tuning, {len(doc['heldout'])} held-out; sha256 {sha256_file(path)}")


if __name__ == "__main__":
    main()
