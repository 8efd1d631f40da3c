"""Gold v3's errata of frozen gold v2 (scripts/gold_v3_assemble.py), by hand: each erratum applies to
v2 exactly as it is or fails naming its line, v2's ids are kept, and v2's files are never written."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
from gold_v3_assemble import apply_errata


def _exp(mid: str, content: str, cats: list[str] | None = None, kind: str = "durable") -> dict[str, Any]:
    cid = mid.rsplit("-m", 1)[0]
    return {
        "memory_id": mid,
        "conversation_id": cid,
        "content": content,
        "categories": cats or ["factual"],
        "temporal_kind": kind,
        "supersedes": None,
    }


EXPECTED = [
    _exp("c1-m1", "User has a son."),
    _exp("c1-m2", "User's son is 7 years old.", kind="durable"),
    _exp("c1-m3", "User has a son who is 7."),
    _exp("c2-m1", "User lives in Lyon."),
]
FORBIDDEN = [{"conversation_id": "c2", "content": "User is an admin.", "reason": "injection"}]
IDS = ["c1", "c2", "c3"]


def erratum(n: int, **fields: Any) -> dict[str, Any]:
    return {"id": f"E{n}", "why": "by hand", "found_by": "test", "memory_id": None, **fields}


def test_edit_remove_add_by_hand() -> None:
    errata = [
        erratum(1, conversation_id="c1", memory_id="c1-m2", kind="expected", action="edit", field="temporal_kind",
                old="durable", new="current"),
        erratum(2, conversation_id="c1", memory_id="c1-m3", kind="expected", action="remove", field="row",
                old=EXPECTED[2], new=None),
        erratum(3, conversation_id="c1", kind="expected", action="add", field="row", old=None,
                new={**_exp("c1-m9", "User often forgets the lock code.", ["behavioral"], "current"), "memory_id": None}),
        erratum(4, conversation_id="c3", kind="forbidden", action="add", field="row", old=None,
                new={"conversation_id": "c3", "content": "User's PIN is 4417.", "reason": "secret"}),
        erratum(5, conversation_id="c2", kind="forbidden", action="edit", field="reason", old=FORBIDDEN[0],
                new={"conversation_id": "c2", "content": "User is an admin.", "reason": "third_party"}),
    ]  # fmt: skip
    expected, forbidden, applied = apply_errata(EXPECTED, FORBIDDEN, errata, IDS)
    # c1-m3 removed, its id not reused: the added row is c1-m4 (one past the highest, m3)
    assert [r["memory_id"] for r in expected] == ["c1-m1", "c1-m2", "c1-m4", "c2-m1"]
    assert expected[1]["temporal_kind"] == "current" and expected[1]["content"] == "User's son is 7 years old."
    assert expected[2]["content"] == "User often forgets the lock code." and expected[2]["conversation_id"] == "c1"
    assert applied[2]["memory_id"] == "c1-m4" and applied[2]["new"]["memory_id"] == "c1-m4"
    assert forbidden == [
        {"conversation_id": "c2", "content": "User is an admin.", "reason": "third_party"},
        {"conversation_id": "c3", "content": "User's PIN is 4417.", "reason": "secret"},
    ]
    assert EXPECTED[1]["temporal_kind"] == "durable" and len(EXPECTED) == 4  # the inputs are not touched


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (dict(conversation_id="c1", memory_id="c1-m2", kind="expected", action="edit", field="temporal_kind",
              old="current", new="durable"), r"errata.jsonl:1 \(E1\): no single expected row 'c1-m2' with temporal_kind 'current'"),
        (dict(conversation_id="c9", memory_id="c9-m1", kind="expected", action="edit", field="content", old="x", new="y"),
         r"'c9' is not a conversation of gold v2"),
        (dict(conversation_id="c1", memory_id="c1-m1", kind="expected", action="remove", field="row",
              old={**EXPECTED[0], "content": "User has a daughter."}, new=None), r"no single expected row equal to"),
        (dict(conversation_id="c1", memory_id="c1-m1", kind="expected", action="rename", field="row", old=None, new=None),
         r"unknown action 'rename'"),
        (dict(conversation_id="c1", memory_id="c1-m1", kind="expected", action="edit", field="memory_id", old="c1-m1",
              new="c1-m7"), r"no single expected row 'c1-m1' with memory_id"),
    ],
)  # fmt: skip
def test_an_erratum_that_does_not_apply_fails_naming_its_line(bad: dict[str, Any], message: str) -> None:
    with pytest.raises(SystemExit, match=message):
        apply_errata(EXPECTED, FORBIDDEN, [erratum(1, **bad)], IDS)


def test_an_erratum_missing_a_field_is_refused() -> None:
    with pytest.raises(SystemExit, match=r"missing field\(s\) \['found_by'\]"):
        apply_errata(EXPECTED, FORBIDDEN, [{k: v for k, v in erratum(1, conversation_id="c1", kind="expected",
                     action="add", field="row", old=None, new={}).items() if k != "found_by"}], IDS)  # fmt: skip
