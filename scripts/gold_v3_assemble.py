#!/usr/bin/env python3
"""Assemble gold/v3 from frozen gold v2, its recorded errata and v3's new conversations.

    python scripts/gold_v3_assemble.py [--record docs/gold-v3-record] [--v2 gold/v2] [--out gold/v3]

Gold v3 = gold v2 corrected + the hard security slice (docs/gold-set.md#v3):

1. gold v2's three files, read and never written: v2 stays frozen (its hashes are pinned);
2. every erratum of ``errata.jsonl`` applied to v2's rows, in order (``apply_errata``); an erratum
   whose ``old`` does not match v2 as it is fails naming its line, so none is lost;
3. v2's forbidden rows marked ``stratum: telegraphed`` (the v2 style the audit of issue 26
   describes);
4. the new conversations (``writers/<g|h|i>/conversations.jsonl``) with their adjudicated rows
   (``gold_<w>/``, made by scripts/gold_v2_build.py from two blind annotations), the third
   read's corrections (``corrections.jsonl``, scripts/gold_v2_assemble.py's format) applied, and
   every new forbidden row marked ``stratum: hard``.

Writes ``conversations.jsonl``, ``expected_memories.jsonl``, ``forbidden_memories.jsonl`` and
``errata.jsonl`` (the errata, as applied: what separates v2's rows from v3's, read by ``diff``
and the gate report) to OUT, byte for byte reproducible.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from extraction_eval._entry import run_entry

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from gold_v2_assemble import _read, _write, apply_corrections  # noqa: E402

WRITERS = ("g", "h", "i")
ERRATUM_KEYS = ("id", "conversation_id", "memory_id", "kind", "action", "field", "old", "new", "why", "found_by")
EXPECTED_KEYS = ("memory_id", "conversation_id", "content", "categories", "temporal_kind", "supersedes")


def _next_id(used: set[str], cid: str) -> str:
    """The next memory id of a conversation: one past the highest it ever had (v2's ids and the ones
    added since), so a removed row's id is never reused."""
    numbers = [int(m.rsplit("-m", 1)[1]) for m in used if m.rsplit("-m", 1)[0] == cid]
    return f"{cid}-m{max(numbers, default=0) + 1}"


def apply_errata(
    expected: list[dict[str, Any]],
    forbidden: list[dict[str, Any]],
    errata: Sequence[dict[str, Any]],
    conversation_ids: Sequence[str],
    *,
    where: str = "errata.jsonl",
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """v2's rows with every erratum applied, and the errata as applied (an added expected row's
    ``memory_id`` filled in). Expected rows keep their v2 ids: an edited row keeps its id, a removed
    row's id is not reused, an added row takes the next number of its conversation. SystemExit names
    the erratum that does not apply."""
    expected = [dict(r) for r in expected]
    forbidden = [dict(r) for r in forbidden]
    applied = []
    rank = {c: i for i, c in enumerate(conversation_ids)}
    used = {r["memory_id"] for r in expected}
    for line, e in enumerate(errata, 1):
        at = f"{where}:{line} ({e.get('id', '?')})"
        missing = [k for k in ERRATUM_KEYS if k not in e]
        if missing:
            raise SystemExit(f"{at}: missing field(s) {missing}; every erratum says {list(ERRATUM_KEYS)}")
        cid, kind, action, field = e["conversation_id"], e["kind"], e["action"], e["field"]
        if cid not in rank:
            raise SystemExit(f"{at}: {cid!r} is not a conversation of gold v2")
        if kind not in ("expected", "forbidden"):
            raise SystemExit(f"{at}: kind {kind!r} is neither expected nor forbidden")
        e = dict(e)
        rows = expected if kind == "expected" else forbidden
        if kind == "expected" and action in ("edit", "remove"):
            hits = [r for r in rows if r["memory_id"] == e["memory_id"] and r["conversation_id"] == cid]
        elif kind == "forbidden" and action in ("edit", "remove"):
            hits = [r for r in rows if r["conversation_id"] == cid and r["content"] == e["old"]["content"]]
        else:
            hits = []
        if action == "edit" and kind == "expected":
            if len(hits) != 1 or field not in EXPECTED_KEYS[2:] or hits[0][field] != e["old"]:
                raise SystemExit(f"{at}: no single expected row {e['memory_id']!r} with {field} {e['old']!r}")
            hits[0][field] = e["new"]
        elif action == "edit":  # a forbidden row has no id: old and new are whole rows
            if len(hits) != 1 or hits[0] != e["old"] or e["new"].get("conversation_id") != cid:
                raise SystemExit(f"{at}: no single forbidden row equal to {e['old']!r}")
            hits[0].clear()
            hits[0].update(e["new"])
        elif action == "remove":
            old = e["old"]
            if len(hits) != 1 or hits[0] != old:
                raise SystemExit(f"{at}: no single {kind} row equal to {old!r} to remove")
            rows.remove(hits[0])
        elif action == "add":
            row = dict(e["new"])
            if row.get("conversation_id") != cid:
                raise SystemExit(f"{at}: the new row is for another conversation: {row!r}")
            if kind == "expected":
                row["memory_id"] = _next_id(used, cid)
                used.add(row["memory_id"])
                row = {k: row.get(k) for k in EXPECTED_KEYS}
                e["memory_id"] = row["memory_id"]
                e["new"] = row
            elif row in forbidden:
                raise SystemExit(f"{at}: the forbidden row is already present: {row!r}")
            # after the conversation's other rows (in conversation order when it has none)
            at_index = sum(1 for r in rows if rank[r["conversation_id"]] <= rank[cid])
            rows.insert(at_index, row)
        else:
            raise SystemExit(f"{at}: unknown action {action!r} (edit, add or remove)")
        applied.append(e)
    return expected, forbidden, applied


def _distinct(forbidden: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The forbidden rows less any that repeats an earlier row of its conversation once case and
    spacing are folded (``gold validate`` refuses such a repeat, and the matcher cannot tell the two
    apart): v3-g051's two spellings of one password, "plumtree-Okra" and "plumtree-okra", kept
    by the adjudicator as two secret values, are one text to the scorer."""
    seen: set[tuple[str, str]] = set()
    out = []
    for row in forbidden:
        key = (row["conversation_id"], " ".join(row["content"].split()).casefold())
        if key in seen:
            print(f"dropped a forbidden row that repeats one of its conversation: {row['content']!r}")
            continue
        seen.add(key)
        out.append(row)
    return out


def assemble(record: Path, v2: Path) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    conversations = _read(v2 / "conversations.jsonl")
    expected, forbidden, errata = apply_errata(
        _read(v2 / "expected_memories.jsonl"),
        _read(v2 / "forbidden_memories.jsonl"),
        _read(record / "errata.jsonl"),
        [c["conversation_id"] for c in conversations],
    )
    forbidden = [{**r, "stratum": "telegraphed"} for r in forbidden]
    errata = [{"from_version": "v2", **e} for e in errata]  # read by diff and the gate report (gates/_shared.py)
    new = [row for w in WRITERS for row in _read(record / "writers" / w / "conversations.jsonl")]
    new_expected = [row for w in WRITERS for row in _read(record / f"gold_{w}" / "expected_memories.jsonl")]
    new_forbidden = [row for w in WRITERS for row in _read(record / f"gold_{w}" / "forbidden_memories.jsonl")]
    corrections = record / "corrections.jsonl"
    if corrections.exists():
        new_expected, new_forbidden = apply_corrections(
            new_expected, new_forbidden, _read(corrections), [c["conversation_id"] for c in new]
        )
    new_forbidden = [{**r, "stratum": "hard"} for r in _distinct(new_forbidden)]
    return conversations + new, expected + new_expected, forbidden + new_forbidden, errata


def main(
    record: Annotated[Path, typer.Option(help="the gold v3 working record")] = ROOT / "docs" / "gold-v3-record",
    v2: Annotated[Path, typer.Option(help="frozen gold v2 (read only)")] = ROOT / "gold" / "v2",
    out: Annotated[Path, typer.Option(help="the gold folder to write")] = ROOT / "gold" / "v3",
) -> None:
    if out.resolve() == v2.resolve():
        raise SystemExit(f"{out}: gold v2 is frozen; write v3 elsewhere")
    conversations, expected, forbidden, errata = assemble(record, v2)
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "conversations.jsonl", conversations)
    _write(out / "expected_memories.jsonl", expected)
    _write(out / "forbidden_memories.jsonl", forbidden)
    _write(out / "errata.jsonl", errata)
    print(
        f"{len(conversations)} conversations, {len(expected)} expected rows, {len(forbidden)} forbidden rows, "
        f"{len(errata)} errata -> {out}"
    )


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
