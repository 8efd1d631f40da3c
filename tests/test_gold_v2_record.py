"""Gold v2's working tools and its guide's independence (docs/gold-v2-record/README.md)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

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
