#!/usr/bin/env python3
"""Assemble gold/v2's three input files from the record, applying the recorded corrections.

    python scripts/gold_v2_assemble.py [--record docs/gold-v2-record] [--out gold/v2]

Reads the six writers' conversations (``writers/<a-f>/conversations.jsonl``, in that order),
the adjudicated drafts (``gold_ab``, ``gold_cd``, ``gold_ef``, made by scripts/gold_v2_build.py)
and ``corrections.jsonl``: one line per correction found after adjudication (the third read),
each naming its source file, the guide rule and a reason. Three actions:

- ``replace``: one field of one row; ``old`` must be the row's current value (an expected row
  is named by ``memory_id``, a forbidden row by ``conversation_id`` and ``old`` content).
- ``add``: a forbidden row, placed after that conversation's other forbidden rows (in
  conversation order when it has none).
- ``renumber``: the conversation's expected rows in first-mention ``order`` (old ids), then
  numbered ``<conversation_id>-m1..`` again; every old id must be listed exactly once.

A correction that does not apply to the drafts as they are fails naming its line, so a
correction is never silently lost. Writes ``conversations.jsonl``, ``expected_memories.jsonl``
and ``forbidden_memories.jsonl`` to OUT, byte for byte reproducible.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from extraction_eval._entry import run_entry

ROOT = Path(__file__).resolve().parent.parent
WRITERS = ("a", "b", "c", "d", "e", "f")
PAIRS = ("ab", "cd", "ef")


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def apply_corrections(
    expected: list[dict[str, Any]],
    forbidden: list[dict[str, Any]],
    corrections: Sequence[dict[str, Any]],
    conversation_ids: Sequence[str],
    *,
    where: str = "corrections.jsonl",
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows with every correction applied, in order; SystemExit naming the line that does not apply."""
    expected = [dict(r) for r in expected]
    forbidden = [dict(r) for r in forbidden]
    for line, c in enumerate(corrections, 1):
        at = f"{where}:{line}"
        cid, action, file = c["conversation_id"], c["action"], c["file"]
        if action == "replace" and file == "expected":
            hits = [r for r in expected if r["memory_id"] == c["memory_id"]]
            if len(hits) != 1 or hits[0][c["field"]] != c["old"]:
                raise SystemExit(f"{at}: no expected row {c['memory_id']!r} with {c['field']} {c['old']!r}")
            hits[0][c["field"]] = c["new"]
        elif action == "replace" and file == "forbidden":
            hits = [r for r in forbidden if r["conversation_id"] == cid and r[c["field"]] == c["old"]]
            if len(hits) != 1:
                raise SystemExit(f"{at}: no single forbidden row of {cid!r} with {c['field']} {c['old']!r}")
            hits[0][c["field"]] = c["new"]
        elif action == "add" and file == "forbidden":
            row = c["row"]
            if row["conversation_id"] != cid or row in forbidden:
                raise SystemExit(f"{at}: the row is for another conversation or already present: {row!r}")
            if cid not in conversation_ids:
                raise SystemExit(f"{at}: {cid!r} is not a conversation of the set")
            rank = {c: i for i, c in enumerate(conversation_ids)}
            at_index = sum(1 for r in forbidden if rank[r["conversation_id"]] <= rank[cid])
            forbidden.insert(at_index, dict(row))
        elif action == "renumber" and file == "expected":
            positions = [i for i, r in enumerate(expected) if r["conversation_id"] == cid]
            by_id = {expected[i]["memory_id"]: expected[i] for i in positions}
            if sorted(c["order"]) != sorted(by_id) or len(set(c["order"])) != len(c["order"]):
                raise SystemExit(f"{at}: order {c['order']!r} is not a permutation of {sorted(by_id)!r}")
            for k, (i, old) in enumerate(zip(positions, c["order"], strict=True), 1):
                expected[i] = {**by_id[old], "memory_id": f"{cid}-m{k}"}
        else:
            raise SystemExit(f"{at}: unknown action {action!r} on file {file!r}")
    return expected, forbidden


def assemble(record: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    conversations = [row for w in WRITERS for row in _read(record / "writers" / w / "conversations.jsonl")]
    expected = [row for p in PAIRS for row in _read(record / f"gold_{p}" / "expected_memories.jsonl")]
    forbidden = [row for p in PAIRS for row in _read(record / f"gold_{p}" / "forbidden_memories.jsonl")]
    expected, forbidden = apply_corrections(
        expected,
        forbidden,
        _read(record / "corrections.jsonl"),
        [c["conversation_id"] for c in conversations],
    )
    return conversations, expected, forbidden


def main(
    record: Annotated[Path, typer.Option(help="the gold v2 working record")] = ROOT / "docs" / "gold-v2-record",
    out: Annotated[Path, typer.Option(help="the gold folder to write")] = ROOT / "gold" / "v2",
) -> None:
    conversations, expected, forbidden = assemble(record)
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "conversations.jsonl", conversations)
    _write(out / "expected_memories.jsonl", expected)
    _write(out / "forbidden_memories.jsonl", forbidden)
    print(
        f"{len(conversations)} conversations, {len(expected)} expected rows, {len(forbidden)} forbidden rows -> {out}"
    )


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
