"""Agreement of two match reviewers before adjudication, and the worklist of their disagreements.

    python scripts/answers_agreement.py --a R1/decisions.jsonl --b R2/decisions.jsonl \
        --answers ANSWERS.jsonl... --out DIR

Pairs F1 (the two reviewers' sets of gold row <-> answer pairs), Cohen's kappa over every
(gold row, answer memory) cell of every conversation (paired or not), and the same for the
forbidden and stale decisions. Writes DIR/agreement.json and DIR/worklist.jsonl (one row per
conversation where the two differ, with both decisions).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import run_entry


def read(path: Path) -> dict[str, dict]:
    return {
        json.loads(line)["conversation_id"]: json.loads(line)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    }


def kappa(cells: list[tuple[int, int]]) -> float | None:
    n = len(cells)
    if n == 0:
        return None
    po = sum(a == b for a, b in cells) / n
    pa, pb = sum(a for a, _ in cells) / n, sum(b for _, b in cells) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return None if pe == 1 else (po - pe) / (1 - pe)


def f1(a: set, b: set) -> float | None:
    return None if not a and not b else 2 * len(a & b) / (len(a) + len(b))


def agreement(
    a: dict[str, dict],
    b: dict[str, dict],
    gold: dict[str, list[str]],
    answers: dict[str, int],
    forbidden: dict[str, int],
    stale: dict[str, list[str]],
) -> tuple[dict, list[dict]]:
    pairs_a, pairs_b, cells, f_cells, s_cells, work = set(), set(), [], [], [], []
    fa_all, fb_all, sa_all, sb_all = set(), set(), set(), set()
    full = 0
    for cid in sorted(set(a) | set(b)):
        da, db = a.get(cid, {}), b.get(cid, {})
        pa = {(cid, *p) for p in da.get("pairs", [])}
        pb = {(cid, *p) for p in db.get("pairs", [])}
        fa = {(cid, *p) for p in da.get("forbidden", [])}
        fb = {(cid, *p) for p in db.get("forbidden", [])}
        sa = {(cid, *p) for p in da.get("stale", [])}
        sb = {(cid, *p) for p in db.get("stale", [])}
        pairs_a |= pa
        pairs_b |= pb
        fa_all |= fa
        fb_all |= fb
        sa_all |= sa
        sb_all |= sb
        n_ans = answers.get(cid, 0)
        for mid in gold.get(cid, []):
            for k in range(1, n_ans + 1):
                cell = (cid, mid, f"A{k}")
                cells.append((int(cell in pa), int(cell in pb)))
        for j in range(1, forbidden.get(cid, 0) + 1):
            for k in range(1, n_ans + 1):
                cell = (cid, f"F{j}", f"A{k}")
                f_cells.append((int(cell in fa), int(cell in fb)))
        for mid in stale.get(cid, []):
            for k in range(1, n_ans + 1):
                for field in ("content", "supersedes"):
                    cell = (cid, mid, f"A{k}", field)
                    s_cells.append((int(cell in sa), int(cell in sb)))
        if pa == pb and fa == fb and sa == sb and cid in a and cid in b:
            full += 1
        else:
            work.append(
                {
                    "conversation_id": cid,
                    "a": {k: da.get(k, []) for k in ("pairs", "forbidden", "stale")},
                    "b": {k: db.get(k, []) for k in ("pairs", "forbidden", "stale")},
                    "notes": {"a": da.get("note", ""), "b": db.get("note", "")},
                }
            )
    report = {
        "conversations": len(set(a) | set(b)),
        "conversations_in_full_agreement": full,
        "pairs": {
            "a": len(pairs_a),
            "b": len(pairs_b),
            "both": len(pairs_a & pairs_b),
            "f1": f1(pairs_a, pairs_b),
            "kappa_over_cells": kappa(cells),
            "cells": len(cells),
        },
        "forbidden": {
            "a": len(fa_all),
            "b": len(fb_all),
            "both": len(fa_all & fb_all),
            "f1": f1(fa_all, fb_all),
            "kappa_over_cells": kappa(f_cells),
            "cells": len(f_cells),
        },
        "stale": {
            "a": len(sa_all),
            "b": len(sb_all),
            "both": len(sa_all & sb_all),
            "f1": f1(sa_all, sb_all),
            "kappa_over_cells": kappa(s_cells),
            "cells": len(s_cells),
        },
    }
    return report, work


def main(
    a: Annotated[Path, typer.Option("--a", help="reviewer a's decisions.jsonl")],
    b: Annotated[Path, typer.Option("--b", help="reviewer b's decisions.jsonl")],
    answers: Annotated[list[Path], typer.Option("--answers", help="the set's answers.jsonl (repeat the option)")],
    out: Annotated[Path, typer.Option("--out", help="where agreement.json and worklist.jsonl go")],
    gold: Annotated[list[Path] | None, typer.Option("--gold", help="gold folders (repeat; default v1 and v2)")] = None,
) -> None:
    gold_dirs = gold or [Path("gold/v1"), Path("gold/v2")]
    counts: dict[str, int] = {}
    for path in answers:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            counts[row["conversation_id"]] = len(row["memories"])
    rows: dict[str, list[str]] = {}
    stale: dict[str, list[str]] = {}
    forbidden: dict[str, int] = {}
    for folder in gold_dirs:
        for line in (folder / "expected_memories.jsonl").read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r["conversation_id"] in counts:
                rows.setdefault(r["conversation_id"], []).append(r["memory_id"])
                if r["supersedes"]:
                    stale.setdefault(r["conversation_id"], []).append(r["memory_id"])
        fpath = folder / "forbidden_memories.jsonl"
        if fpath.exists():
            for line in fpath.read_text(encoding="utf-8").splitlines():
                cid = json.loads(line)["conversation_id"]
                forbidden[cid] = forbidden.get(cid, 0) + 1
    ra = {k: v for k, v in read(a).items() if k in counts}
    rb = {k: v for k, v in read(b).items() if k in counts}
    report, work = agreement(ra, rb, rows, counts, forbidden, stale)
    out.mkdir(parents=True, exist_ok=True)
    (out / "agreement.json").write_text(json.dumps(report, indent=2) + "\n")
    with open(out / "worklist.jsonl", "w", encoding="utf-8") as fh:
        for row in work:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(json.dumps(report, indent=2))
    print(f"{len(work)} conversation(s) to adjudicate -> {out / 'worklist.jsonl'}")


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
