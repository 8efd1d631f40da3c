#!/usr/bin/env python3
"""Build adjudicated gold rows from two blind annotations and the adjudication record.

    python scripts/gold_v2_build.py --conversations F.jsonl [...] --a A.jsonl [...] --b B.jsonl [...] \
        --adjudication ADJ.jsonl [...] --out DIR

Per conversation, the rows both annotators wrote (paired by the default matcher, as in
scripts/gold_agreement.py) with the same categories, temporal kind and supersedes stand, in
annotator A's wording; every other item takes the adjudicator's decision (one line of the
adjudication record per worklist item). Rows are ordered as A wrote them, then the rows only
B wrote, and renumbered ``<conversation_id>-m<k>``. Writes ``expected_memories.jsonl`` and
``forbidden_memories.jsonl`` to DIR, and fails naming the conversation when a disagreement has
no decision.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gold_agreement import match_rows, read_jsonl

EXPECTED_KEYS = ("memory_id", "conversation_id", "content", "categories", "temporal_kind", "supersedes")


def _key(row: dict[str, Any] | None) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False)


def build(
    conversation_ids: list[str],
    a_rows: list[dict[str, Any]],
    b_rows: list[dict[str, Any]],
    decisions: list[dict[str, Any]],
    *,
    merge_order: bool = False,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """With ``merge_order`` (gold v3 on), a row only B wrote is placed after the row that B's own
    order puts before it (its nearest preceding row both wrote), not at the end: both annotators
    number in first-mention order, so the merge keeps it (v2, built without it, has about 35
    conversations whose rows are out of first-mention order; issue 26)."""
    by: dict[str, dict[str, list[dict[str, Any]]]] = {"A": defaultdict(list), "B": defaultdict(list)}
    forb: dict[str, dict[str, list[dict[str, Any]]]] = {"A": defaultdict(list), "B": defaultdict(list)}
    for name, rows in (("A", a_rows), ("B", b_rows)):
        for row in rows:
            (forb if row.get("row_type") == "forbidden" else by)[name][row["conversation_id"]].append(row)
    decided: dict[tuple[str, str], dict[str, Any]] = {}
    for d in decisions:
        decided[(d["item"], _key(d.get("a")) if d.get("a") else _key(d.get("b")))] = d

    def decision(item: str, row: dict[str, Any], cid: str) -> dict[str, Any]:
        found = decided.get((item, _key(row)))
        if found is None:
            raise SystemExit(f"{cid}: no adjudication for {item} row {row['content']!r}")
        return found

    expected: list[dict[str, Any]] = []
    forbidden: list[dict[str, Any]] = []
    for cid in conversation_ids:
        ra, rb = by["A"][cid], by["B"][cid]
        pairs = match_rows([r["content"] for r in ra], [r["content"] for r in rb])
        paired_a = {i: j for i, j, _ in pairs}
        paired_b = set(paired_a.values())
        placed: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
        for i, row in enumerate(ra):
            if i in paired_a:
                other = rb[paired_a[i]]
                same = (
                    sorted(row["categories"]) == sorted(other["categories"])
                    and row["temporal_kind"] == other["temporal_kind"]
                    and (row.get("supersedes") is None) == (other.get("supersedes") is None)
                )
                if same:
                    placed.append(((i, 0, 0), row))
                    continue
                d = decision("field_difference", row, cid)
                choice = {"keep_a": row, "keep_b": other}.get(d["decision"], d.get("final"))
                if choice is not None:
                    placed.append(((i, 0, 0), choice))
            else:
                d = decision("a_only", row, cid)
                if d["decision"] == "keep" and d.get("final") is not None:
                    placed.append(((i, 0, 0), d["final"]))
        a_of_b = {j: i for i, j in paired_a.items()}
        for j, row in enumerate(rb):
            if j not in paired_b:
                d = decision("b_only", row, cid)
                if d["decision"] == "keep" and d.get("final") is not None:
                    before = [a_of_b[k] for k in range(j) if k in a_of_b]
                    anchor = (before[-1] if before else -1) if merge_order else len(ra)
                    placed.append(((anchor, 1, j), d["final"]))
        final = [row for _, row in sorted(placed, key=lambda p: p[0])]
        for k, row in enumerate(final, 1):
            out = {key: row.get(key) for key in EXPECTED_KEYS}
            out["memory_id"] = f"{cid}-m{k}"
            out["conversation_id"] = cid
            expected.append(out)
        fa, fb = forb["A"][cid], forb["B"][cid]
        fpairs = match_rows([r["content"] for r in fa], [r["content"] for r in fb])
        fpaired_a = {i for i, _, _ in fpairs}
        fpaired_b = {j for _, j, _ in fpairs}
        kept = [fa[i] for i in sorted(fpaired_a)]
        for i, row in enumerate(fa):
            if i not in fpaired_a:
                d = decision("forbidden_a_only", row, cid)
                if d["decision"] == "keep" and d.get("final") is not None:
                    kept.append(d["final"])
        for j, row in enumerate(fb):
            if j not in fpaired_b:
                d = decision("forbidden_b_only", row, cid)
                if d["decision"] == "keep" and d.get("final") is not None:
                    kept.append(d["final"])
        forbidden += [{"conversation_id": cid, "content": r["content"], "reason": r["reason"]} for r in kept]
    return expected, forbidden


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=Path, nargs="+", required=True)
    parser.add_argument("--a", type=Path, nargs="+", required=True)
    parser.add_argument("--b", type=Path, nargs="+", required=True)
    parser.add_argument("--adjudication", type=Path, nargs="+", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--merge-order", action="store_true", help="place B-only rows in B's order (v3 on)")
    args = parser.parse_args(argv)
    ids = [row["conversation_id"] for row in read_jsonl(args.conversations)]
    expected, forbidden = build(
        ids, read_jsonl(args.a), read_jsonl(args.b), read_jsonl(args.adjudication), merge_order=args.merge_order
    )
    args.out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("expected_memories.jsonl", expected), ("forbidden_memories.jsonl", forbidden)):
        with open(args.out / name, "w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(ids)} conversations, {len(expected)} expected rows, {len(forbidden)} forbidden rows -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
