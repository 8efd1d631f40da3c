"""Two runs of different gold versions, compared on what they share (issue 26; docs/gates.md).

A later gold version carries an earlier one's conversations with recorded errata
(``gold/<v>/errata.jsonl``, each naming its ``from_version``; scripts/gold_v3_assemble.py). Its
numbers are never read against the earlier version's bar, but ``diff`` and the gate report compare
the two runs on the **shared** part: the conversations both ran, and in them the expected rows that
no erratum touched and that both runs list with the same fields. Recall over those rows is
comparable (the same rows, the same texts); precision is not (a prediction is not tied to a row),
so only the recall metrics are compared. Pure functions over per-conversation rows, plus one reader
of a gold folder's errata.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._flips import RECALL_KEYS, Rows, _hits

ERRATA_FILE = "errata.jsonl"
#: The fields of an expected row that must agree for the row to be shared.
ROW_FIELDS = ("content", "categories", "temporal_kind", "supersedes")


def read_errata(gold_dir: Path) -> list[dict[str, Any]]:
    """The errata of a gold folder (none when it has no ``errata.jsonl``); ValueError names a bad line.

    Only the fields this module reads are checked here: the gate calls it on every run and does not
    load the gold models for it. Every field of every row is checked when the folder loads
    (``gold._load.load_errata``), so a bad file fails ``gold validate`` and every run first."""
    path = gold_dir / ERRATA_FILE
    if not path.is_file():
        return []
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or not {"from_version", "kind", "conversation_id"} <= set(row):
                raise ValueError("needs from_version, kind and conversation_id")
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: not an erratum ({exc})") from None
        out.append(row)
    return out


def errata_between(version_a: str, version_b: str, folders: Mapping[str, Path]) -> list[dict[str, Any]]:
    """The errata that lead from one of the two versions to the other (read from the later one's
    folder, ``folders[version]``); empty when neither names the other."""
    for later, earlier in ((version_b, version_a), (version_a, version_b)):
        folder = folders.get(later)
        if folder is not None:
            found = [e for e in read_errata(folder) if e["from_version"] == earlier]
            if found:
                return found
    return []


@dataclass(frozen=True)
class SharedView:
    """What two runs of different gold versions share."""

    conversations: tuple[str, ...]
    #: memory ids compared: in both runs' rows, same fields, no erratum.
    rows: frozenset[str]
    #: memory ids an erratum names (edited, added or removed), left out.
    erratum_rows: frozenset[str]
    #: memory ids whose fields differ between the runs although no erratum names them, left out.
    unexplained: frozenset[str]
    #: rows of the shared conversations in only one of the two runs, left out.
    one_sided: int


def _expected(row: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["memory_id"]: e for e in row.get("expected", [])}


def shared_view(a: Rows, b: Rows, errata: Sequence[Mapping[str, Any]]) -> SharedView:
    common = tuple(sorted(set(a) & set(b)))
    named = frozenset(str(e["memory_id"]) for e in errata if e.get("kind") == "expected" and e.get("memory_id"))
    rows: set[str] = set()
    unexplained: set[str] = set()
    one_sided = 0
    for cid in common:
        ea, eb = _expected(a[cid]), _expected(b[cid])
        one_sided += len((set(ea) ^ set(eb)) - named)
        for mid in set(ea) & set(eb):
            if mid in named:
                continue
            same = all(
                (sorted(ea[mid][f]) == sorted(eb[mid][f]) if f == "categories" else ea[mid].get(f) == eb[mid].get(f))
                for f in ROW_FIELDS
            )
            (rows if same else unexplained).add(mid)
    touched = frozenset(m for m in named if any(m in _expected(a[c]) or m in _expected(b[c]) for c in common))
    return SharedView(common, frozenset(rows), touched, frozenset(unexplained), one_sided)


def restrict(rows: Rows, view: SharedView) -> dict[str, dict[str, Any]]:
    """The shared conversations' rows with only the shared expected rows and their matches."""
    out = {}
    for cid in view.conversations:
        row = dict(rows[cid])
        row["expected"] = [e for e in row.get("expected", []) if e["memory_id"] in view.rows]
        row["matches"] = [m for m in row.get("matches", []) if m["memory_id"] in view.rows]
        out[cid] = row
    return out


def shared_recall(rows: Rows, view: SharedView) -> dict[str, tuple[int, int]]:
    """Per recall metric, (hits, rows in scope) over the shared rows."""
    totals = dict.fromkeys(RECALL_KEYS, (0, 0))
    for row in restrict(rows, view).values():
        hits = _hits(row)
        for e in row["expected"]:
            for key in RECALL_KEYS:
                if key.startswith("recall/") and key.split("/", 1)[1] not in e.get("categories", []):
                    continue
                h, n = totals[key]
                totals[key] = (h + int(e["memory_id"] in hits[key]), n + 1)
    return totals


def render_shared(
    view: SharedView,
    recall_a: Mapping[str, tuple[int, int]],
    recall_b: Mapping[str, tuple[int, int]],
    label_a: str,
    label_b: str,
) -> list[str]:
    """Markdown: what is shared, what is left out and why, and recall on the shared rows."""
    unexplained = ""
    if view.unexplained:
        shown = ", ".join(sorted(view.unexplained)[:10])
        unexplained = f"; {len(view.unexplained)} row(s) that differ with no erratum naming them ({shown})"
    lines = [
        f"Compared on what the two gold versions share: {len(view.conversations)} conversation(s), "
        f"{len(view.rows)} expected row(s) with the same text, categories, temporal kind and supersession "
        f"in both. Left out: {len(view.erratum_rows)} row(s) an erratum changed, added or removed; "
        f"{view.one_sided} row(s) only one run lists{unexplained}. Recall only: a prediction is not tied "
        "to a row, so precision is not comparable across versions.",
        "",
        f"| metric (shared rows) | {label_a} | {label_b} | difference |",
        "| --- | ---: | ---: | ---: |",
    ]
    for key in RECALL_KEYS:
        (ha, na), (hb, nb) = recall_a[key], recall_b[key]
        if na == 0 and nb == 0:
            continue
        va = ha / na if na else None
        vb = hb / nb if nb else None
        diff = "—" if va is None or vb is None else f"{vb - va:+.4f}"
        cell_a = "—" if va is None else f"{va:.4f} ({ha}/{na})"
        cell_b = "—" if vb is None else f"{vb:.4f} ({hb}/{nb})"
        lines.append(f"| `{key}` | {cell_a} | {cell_b} | {diff} |")
    return lines
