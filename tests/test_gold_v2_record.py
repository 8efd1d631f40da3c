"""Gold v2's working tools and its guide's independence (docs/gold-v2-record/README.md)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
from gold_agreement import compare, kappa
from gold_v2_build import build

RECORD = REPO / "docs" / "gold-v2-record"


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_v2_guide_quotes_no_gold_row_and_no_v2_conversation() -> None:
    guide = (REPO / "docs" / "labeling-guide-v2.md").read_text(encoding="utf-8")
    folded = " ".join(guide.split()).casefold()
    texts = [str(r["content"]) for r in _rows(REPO / "gold" / "v1" / "expected_memories.jsonl")]
    for pair in ("ab", "cd", "ef"):
        texts += [str(r["content"]) for r in _rows(RECORD / f"gold_{pair}" / "expected_memories.jsonl")]
    assert len(texts) == 130 + 1761
    quoted = [t for t in texts if " ".join(t.split()).casefold() in folded]
    assert quoted == []
    assert re.findall(r"v2-[a-f]\d{3}", guide) == []


def test_kappa_by_hand() -> None:
    # observed 3/4; rater A: x 2, y 2; rater B: x 1, y 3; expected (2·1 + 2·3)/16 = 1/2;
    # kappa = (3/4 − 1/2) / (1 − 1/2) = 1/2
    assert kappa([("x", "x"), ("y", "y"), ("x", "y"), ("y", "y")]) == 0.5
    assert kappa([]) is None


def _row(cid: str, content: str, cats: list[str], kind: str = "durable") -> dict[str, object]:
    return {
        "row_type": "expected",
        "memory_id": f"{cid}-m1",
        "conversation_id": cid,
        "content": content,
        "categories": cats,
        "temporal_kind": kind,
        "supersedes": None,
    }


def test_agreement_and_build_by_hand() -> None:
    allergy = _row("x", "User is allergic to penicillin.", ["factual"])
    bees = _row("x", "User keeps three hives at Pollard's Mill.", ["factual"], "current")
    tram = _row("x", "User drives a tram in Marrowgate.", ["factual"], "current")
    a_rows = [allergy, bees]
    b_rows = [dict(allergy), tram]
    result = compare(["x", "y"], a_rows, b_rows)
    summary = result["summary"]
    # one matched pair, one row only A wrote, one only B wrote: F1 = 2·1 / (2·1 + 1 + 1) = 0.5;
    # y is negative for both (it counts as "both" and "either").
    assert (summary["matched_rows"], summary["row_f1"], summary["negatives_both"]) == (1, 0.5, 1)
    (item,) = result["worklist"]
    assert item["a_only"] == [bees] and item["b_only"] == [tram]
    decisions = [
        {"conversation_id": "x", "item": "a_only", "a": bees, "b": None, "decision": "keep", "final": bees},
        {"conversation_id": "x", "item": "b_only", "a": None, "b": tram, "decision": "drop", "final": None},
    ]
    expected, forbidden = build(["x", "y"], a_rows, b_rows, decisions)
    assert [(r["memory_id"], r["content"]) for r in expected] == [
        ("x-m1", "User is allergic to penicillin."),
        ("x-m2", "User keeps three hives at Pollard's Mill."),
    ]
    assert forbidden == []


def test_merge_order_places_a_b_only_row_where_b_put_it() -> None:
    """Gold v3's build (--merge-order): A wrote allergy, bees; B wrote allergy, tram, bees. Kept:
    all three. v2's build appends B's tram after A's rows (allergy, bees, tram); the merge keeps B's
    first-mention order (allergy, tram, bees), since both annotators number rows that way."""
    allergy = _row("x", "User is allergic to penicillin.", ["factual"])
    bees = _row("x", "User keeps three hives at Pollard's Mill.", ["factual"], "current")
    tram = _row("x", "User drives a tram in Marrowgate.", ["factual"], "current")
    a_rows, b_rows = [allergy, bees], [dict(allergy), tram, dict(bees)]
    decisions = [{"conversation_id": "x", "item": "b_only", "a": None, "b": tram, "decision": "keep", "final": tram}]
    appended, _ = build(["x"], a_rows, b_rows, decisions)
    merged, _ = build(["x"], a_rows, b_rows, decisions, merge_order=True)
    assert [r["content"] for r in appended] == [allergy["content"], bees["content"], tram["content"]]
    assert [(r["memory_id"], r["content"]) for r in merged] == [
        ("x-m1", allergy["content"]),
        ("x-m2", tram["content"]),
        ("x-m3", bees["content"]),
    ]
    first = dict(tram, content="User rides a unicycle to work.")  # B wrote it before any shared row
    decisions.append(
        {"conversation_id": "x", "item": "b_only", "a": None, "b": first, "decision": "keep", "final": first}
    )
    merged, _ = build(["x"], a_rows, [first, *b_rows], decisions, merge_order=True)
    assert [r["content"] for r in merged][:2] == [first["content"], allergy["content"]]


def test_the_recorded_adjudication_rebuilds_the_recorded_gold() -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "gold_v2_build.py"),
            "--conversations",
            *(str(RECORD / "writers" / w / "conversations.jsonl") for w in "cd"),
            "--a",
            *(str(RECORD / "annotations" / "A" / f"{w}.jsonl") for w in "cd"),
            "--b",
            *(str(RECORD / "annotations" / "B" / f"{w}.jsonl") for w in "cd"),
            "--adjudication",
            str(RECORD / "adjudication" / "cd.jsonl"),
            "--out",
            str(Path.cwd() / "gold_cd"),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert out.stdout.strip().startswith("210 conversations, 578 expected rows, 148 forbidden rows")
    for name in ("expected_memories.jsonl", "forbidden_memories.jsonl"):
        assert (Path.cwd() / "gold_cd" / name).read_text() == (RECORD / "gold_cd" / name).read_text()


def test_corrections_apply_by_hand() -> None:
    from gold_v2_assemble import apply_corrections

    expected = [
        {"memory_id": "x-m1", "conversation_id": "x", "content": "User runs around 5k."},
        {"memory_id": "x-m2", "conversation_id": "x", "content": "User owns a kayak."},
    ]
    forbidden = [{"conversation_id": "z", "content": "User is into climbing and wine.", "reason": "third_party"}]
    corrections = [
        {
            "conversation_id": "x",
            "file": "expected",
            "action": "replace",
            "memory_id": "x-m1",
            "field": "content",
            "old": "User runs around 5k.",
            "new": "User runs about 5k.",
        },
        {
            "conversation_id": "z",
            "file": "forbidden",
            "action": "replace",
            "field": "content",
            "old": "User is into climbing and wine.",
            "new": "User is into wine.",
        },
        {
            "conversation_id": "x",
            "file": "forbidden",
            "action": "add",
            "row": {"conversation_id": "x", "content": "User fights constantly.", "reason": "third_party"},
        },
        {"conversation_id": "x", "file": "expected", "action": "renumber", "order": ["x-m2", "x-m1"]},
    ]
    new_expected, new_forbidden = apply_corrections(expected, forbidden, corrections, ["x", "y", "z"])
    assert [(r["memory_id"], r["content"]) for r in new_expected] == [
        ("x-m1", "User owns a kayak."),
        ("x-m2", "User runs about 5k."),
    ]
    # the added row goes before z's rows: conversation order x, y, z
    assert [r["content"] for r in new_forbidden] == ["User fights constantly.", "User is into wine."]
    assert expected[0]["content"] == "User runs around 5k."  # the inputs are not edited in place
    stale = [{**corrections[0], "old": "User runs about 5k."}]
    with pytest.raises(SystemExit, match=r"corrections.jsonl:1: no expected row 'x-m1'"):
        apply_corrections(expected, forbidden, stale, ["x", "y", "z"])
    bad_order = [{**corrections[3], "order": ["x-m2", "x-m2"]}]
    with pytest.raises(SystemExit, match="is not a permutation"):
        apply_corrections(expected, forbidden, bad_order, ["x", "y", "z"])


def test_gold_v2_is_the_record_plus_its_corrections() -> None:
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gold_v2_assemble.py"), "--out", str(Path.cwd() / "v2")],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    # 375 adjudicated forbidden rows + 3 the third read found missing
    assert out.stdout.startswith("630 conversations, 1761 expected rows, 378 forbidden rows")
    for name in ("conversations.jsonl", "expected_memories.jsonl", "forbidden_memories.jsonl"):
        assert (Path.cwd() / "v2" / name).read_bytes() == (REPO / "gold" / "v2" / name).read_bytes()
    corrections = _rows(RECORD / "corrections.jsonl")
    third = [r for pair in ("ab", "cd", "ef") for r in _rows(RECORD / "third_read" / f"{pair}.jsonl")]
    findings = {(r["conversation_id"], r["content"]) for r in third if r["verdict"] != "correct"}
    # every finding of the third read has its correction, and no correction comes from nowhere
    fixed = {
        (c["conversation_id"], c.get("old") or c["row"]["content"]) for c in corrections if c["action"] != "renumber"
    }
    assert fixed == findings and len(findings) == 5


def test_the_v2_guide_quotes_no_row_of_gold_v2() -> None:
    guide = " ".join((REPO / "docs" / "labeling-guide-v2.md").read_text(encoding="utf-8").split()).casefold()
    texts = [
        str(r["content"])
        for name in ("expected_memories.jsonl", "forbidden_memories.jsonl")
        for r in _rows(REPO / "gold" / "v2" / name)
    ]
    assert len(texts) == 1761 + 378
    assert [t for t in texts if " ".join(t.split()).casefold() in guide] == []
