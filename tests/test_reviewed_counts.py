"""scripts/reviewed_counts.py counts the reviewers' numbers from their decisions alone, and the
harness's `--matcher reviewed` reproduces them exactly; both on a hand-built set whose numbers
are worked out by hand below."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from extraction_eval import Mode, RunOptions, run_eval

from .conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
from reviewed_counts import differences, reviewed_metrics

E = [
    {"memory_id": "a-m1", "conversation_id": "a", "content": "User lives in Lisbon.", "categories": ["factual"],
     "temporal_kind": "current", "supersedes": "User lives in Porto."},
    {"memory_id": "a-m2", "conversation_id": "a", "content": "User prefers tea.", "categories": ["preference"],
     "temporal_kind": "durable", "supersedes": None},
    {"memory_id": "b-m1", "conversation_id": "b", "content": "User runs on Sundays.",
     "categories": ["behavioral", "episodic"], "temporal_kind": "current", "supersedes": None},
]  # fmt: skip
A = [
    {"conversation_id": "a", "memories": [
        {"content": "The user moved to Lisbon.", "categories": ["factual"], "temporal_kind": "current",
         "supersedes": "User lived in Porto."},
        {"content": "User drinks coffee.", "categories": ["preference"], "temporal_kind": "durable", "supersedes": None},
    ]},
    {"conversation_id": "b", "memories": [
        {"content": "User goes running every Sunday.", "categories": ["behavioral"], "temporal_kind": "durable",
         "supersedes": None},
    ]},
    {"conversation_id": "c", "memories": []},
]  # fmt: skip
M = [
    {"conversation_id": "a", "pairs": [["a-m1", "A1"]], "forbidden": [], "stale": [["a-m1", "A1", "supersedes"]]},
    {"conversation_id": "b", "pairs": [["b-m1", "A1"]], "forbidden": [], "stale": []},
    {"conversation_id": "c", "pairs": [], "forbidden": [], "stale": []},
]


def test_the_reviewers_numbers_by_hand() -> None:
    got = reviewed_metrics(E, A, M)
    # pairs: a-m1/A1 (factual both), b-m1/A1 (behavioral both; the gold row is also episodic)
    assert got["counts/matched"] == 2 and got["counts/expected"] == 3 and got["counts/predicted"] == 3
    assert got["recall/factual"] == 1.0 and got["precision/factual"] == 1.0
    assert got["recall/preference"] == 0.0 and got["precision/preference"] == 0.0  # tea vs coffee: unpaired
    assert got["recall/behavioral"] == 1.0 and got["precision/behavioral"] == 1.0
    assert got["recall/episodic"] == 0.0 and got["precision/episodic"] == 0.0  # no answer carries episodic
    assert got["recall/procedural"] == 1.0 and got["precision/procedural"] == 1.0  # nothing either side
    assert got["macro/recall"] == pytest.approx(3 / 5) and got["macro/precision"] == pytest.approx(3 / 5)
    assert got["micro/recall"] == pytest.approx(2 / 3) and got["micro/precision"] == pytest.approx(2 / 3)
    # strict: a-m1/A1 is exact; b-m1/A1 has another category set and temporal kind
    assert got["strict/recall"] == pytest.approx(1 / 3)
    assert got["category_accuracy"] == 0.5 and got["temporal_accuracy"] == 0.5
    assert got["multilabel/exact_match"] == 0.0  # b-m1 is the one multi-label row, matched without episodic
    assert got["supersession/recall"] == 1.0 and got["supersession/stale_leak_rate"] == 0.0
    assert got["negatives/false_positive_rate"] == 0.0  # c: nothing expected, nothing answered


def test_differences_name_each_metric() -> None:
    assert differences({"a": 0.5, "b": 1.0}, {"a": 0.5 + 1e-12}) == ["b: reviewers 1.000000, the run has none"]
    assert differences({"a": 0.5}, {"a": 0.6}) == ["a: reviewers 0.500000, run 0.600000"]


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_reviewed_matcher_reproduces_gold_v1s_reviewers(tmp_path: Path, local_store: str) -> None:
    """Gold v1's realistic set, whole: both reviewers decided all 125 conversations (and agreed on
    every one), so `--matcher reviewed` runs the set as it stands, and logs every metric the
    script counts from the decisions alone."""
    gold = REPO / "gold" / "v1"
    folder = gold / "answers" / "blind-a"
    result = run_eval(Mode.CASSETTE, gold, tmp_path / "out", options=RunOptions(answers="blind-a", matcher="reviewed"))
    counted = reviewed_metrics(
        _rows(gold / "expected_memories.jsonl"), _rows(folder / "answers.jsonl"), _rows(folder / "matches.jsonl")
    )
    assert differences(counted, result.metrics) == []
    # the reviewers' 128 pairs of 130 gold rows and 163 answer memories (agreement-v1/agreement.json)
    assert (counted["counts/matched"], counted["counts/expected"], counted["counts/predicted"]) == (128, 130, 163)
    assert counted["micro/recall"] == pytest.approx(128 / 130) and counted["micro/precision"] == pytest.approx(
        128 / 163
    )


def test_the_reviewed_matcher_reproduces_gold_v2s_decided_share(tmp_path: Path, local_store: str) -> None:
    """Gold v2's realistic set, on the conversations its reviewers have decided
    (scripts/answer_subset.py): the same check, on a review that may still be in progress."""
    import subprocess

    if not (REPO / "gold" / "v2" / "answers" / "blind-a" / "matches.jsonl").is_file():
        pytest.fail("gold/v2/answers/blind-a/matches.jsonl is missing: the realistic set has no reviewed decisions")
    gold = tmp_path / "gold" / "v2-reviewed"
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "answer_subset.py"), "--gold", str(REPO / "gold" / "v2"),
         "--set", "blind-a", "--out", str(gold)],
        check=True, capture_output=True, cwd=tmp_path,
    )  # fmt: skip
    result = run_eval(Mode.CASSETTE, gold, tmp_path / "out", options=RunOptions(answers="blind-a", matcher="reviewed"))
    folder = gold / "answers" / "blind-a"
    decisions = _rows(folder / "matches.jsonl")
    counted = reviewed_metrics(_rows(gold / "expected_memories.jsonl"), _rows(folder / "answers.jsonl"), decisions)
    assert differences(counted, result.metrics) == []
    assert counted["counts/matched"] == sum(len(d["pairs"]) for d in decisions) > 250
    assert counted["macro/recall"] < 1.0  # realistic answers: not the oracle's perfect score


def test_v3_carries_v2_s_decisions_only_where_answer_and_rows_are_the_same() -> None:
    """Gold v3's realistic set: the 623 v2 conversations no erratum touched keep v2's reviewed
    decisions (same answer hash, same pairs); the 7 an erratum touched were reviewed again, like the
    180 new ones."""
    import json

    def by_id(path: Path) -> dict[str, dict]:
        return {r["conversation_id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}

    v2 = by_id(REPO / "gold" / "v2" / "answers" / "blind-a" / "matches.jsonl")
    v3 = by_id(REPO / "gold" / "v3" / "answers" / "blind-a" / "matches.jsonl")
    carried = [c for c, r in v3.items() if r["decided"] == "carried:v2"]
    assert len(v3) == 810 and len(carried) == 623
    for cid in carried:
        assert {k: v3[cid][k] for k in ("answer_sha256", "pairs", "forbidden", "stale")} == {
            k: v2[cid][k] for k in ("answer_sha256", "pairs", "forbidden", "stale")
        }
    touched = {
        json.loads(line)["conversation_id"]
        for line in (REPO / "gold" / "v3" / "errata.jsonl").read_text(encoding="utf-8").splitlines()
    }
    assert len(touched) == 7 and not touched & set(carried)
    assert {v3[c]["decided"] for c in touched} <= {"agreed", "adjudicated"}
    assert sum(r["decided"] == "agreed" for r in v3.values()) == 180
