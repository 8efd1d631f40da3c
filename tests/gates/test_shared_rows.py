"""Two runs of different gold versions compared on what they share (issue 26): by hand.

Run A (gold v2) and run B (gold v3) both ran conversations c1 and c2; A also ran c0, B also c9.
In c1, m1 is the same in both; m2 was edited by an erratum (its text differs); m3 was removed
by an erratum (A only); m4 was added by an erratum (B only). In c2, m1 is the same in both, and m2
differs in categories although no erratum names it (reported, left out). So the shared rows are
c1-m1 and c2-m1. A matched c1-m1 (with its category) and c2-m1; B matched c1-m1 only.
micro/recall on shared rows: A 2/2, B 1/2. recall/factual (c1-m1, c2-m1 are factual): the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extraction_eval.gates._shared import (
    errata_between,
    read_errata,
    render_shared,
    restrict,
    shared_recall,
    shared_view,
)


def exp(mid: str, content: str, categories: list[str] | None = None) -> dict[str, Any]:
    return {
        "memory_id": mid,
        "content": content,
        "categories": categories or ["factual"],
        "temporal_kind": "durable",
        "supersedes": None,
    }


def row(cid: str, expected: list[dict[str, Any]], matched: list[str]) -> dict[str, Any]:
    predicted = [{"content": f"p{i}", "categories": ["factual"]} for i in range(len(matched))]
    matches = [
        {"memory_id": m, "predicted_index": i, "similarity": 1.0, "category_ok": True, "temporal_ok": True}
        for i, m in enumerate(matched)
    ]
    return {"conversation_id": cid, "expected": expected, "predicted": predicted, "matches": matches}


A = {
    "c0": row("c0", [exp("c0-m1", "User is x.")], ["c0-m1"]),
    "c1": row(
        "c1",
        [exp("c1-m1", "User is a nurse."), exp("c1-m2", "User has a dog."), exp("c1-m3", "User repeats m2.")],
        ["c1-m1", "c1-m2"],
    ),
    "c2": row("c2", [exp("c2-m1", "User lives in Oslo."), exp("c2-m2", "User runs.", ["behavioral"])], ["c2-m1"]),
}
B = {
    "c9": row("c9", [exp("c9-m1", "User is y.")], []),
    "c1": row(
        "c1",
        [exp("c1-m1", "User is a nurse."), exp("c1-m2", "User has a beagle."), exp("c1-m4", "User is 40.")],
        ["c1-m1", "c1-m4"],
    ),
    "c2": row("c2", [exp("c2-m1", "User lives in Oslo."), exp("c2-m2", "User runs.", ["preference"])], []),
}
ERRATA = [
    {"from_version": "v2", "kind": "expected", "conversation_id": "c1", "memory_id": "c1-m2", "action": "edit"},
    {"from_version": "v2", "kind": "expected", "conversation_id": "c1", "memory_id": "c1-m3", "action": "remove"},
    {"from_version": "v2", "kind": "expected", "conversation_id": "c1", "memory_id": "c1-m4", "action": "add"},
]


def test_shared_rows_and_recall_by_hand() -> None:
    view = shared_view(A, B, ERRATA)
    assert view.conversations == ("c1", "c2")
    assert view.rows == {"c1-m1", "c2-m1"}
    assert view.erratum_rows == {"c1-m2", "c1-m3", "c1-m4"}
    assert view.unexplained == {"c2-m2"}
    assert view.one_sided == 0  # c1-m3 and c1-m4 are one-sided, but an erratum names both
    assert shared_recall(A, view)["micro/recall"] == (2, 2)
    assert shared_recall(B, view)["micro/recall"] == (1, 2)
    assert shared_recall(B, view)["recall/factual"] == (1, 2)
    assert shared_recall(B, view)["recall/behavioral"] == (0, 0)
    restricted = restrict(B, view)
    assert [e["memory_id"] for e in restricted["c1"]["expected"]] == ["c1-m1"]
    assert [m["memory_id"] for m in restricted["c1"]["matches"]] == ["c1-m1"]
    markdown = "\n".join(render_shared(view, shared_recall(A, view), shared_recall(B, view), "A", "B"))
    assert "2 conversation(s), 2 expected row(s)" in markdown
    assert "3 row(s) an erratum changed, added or removed" in markdown
    assert "1 row(s) that differ with no erratum naming them (c2-m2)" in markdown
    assert "| `micro/recall` | 1.0000 (2/2) | 0.5000 (1/2) | -0.5000 |" in markdown
    assert "recall/behavioral" not in markdown  # no shared row in scope on either side


def test_without_errata_a_changed_row_is_left_out_and_said(tmp_path: Path) -> None:
    view = shared_view(A, B, [])
    assert view.unexplained == {"c1-m2", "c2-m2"}
    assert view.one_sided == 2  # c1-m3 (A only), c1-m4 (B only)
    assert view.rows == {"c1-m1", "c2-m1"}


def test_errata_are_read_from_the_later_version_s_folder(tmp_path: Path) -> None:
    v3 = tmp_path / "v3"
    v3.mkdir()
    (v3 / "errata.jsonl").write_text("".join(json.dumps(e) + "\n" for e in ERRATA), encoding="utf-8")
    folders = {"v2": tmp_path / "v2", "v3": v3}
    assert errata_between("v2", "v3", folders) == ERRATA
    assert errata_between("v3", "v2", folders) == ERRATA  # either order
    assert errata_between("v1", "v3", folders) == []  # v3's errata lead from v2, not v1
    assert read_errata(tmp_path / "v2") == []
    (v3 / "errata.jsonl").write_text('{"kind": "expected"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"errata.jsonl:1: not an erratum \(needs from_version"):
        read_errata(v3)
