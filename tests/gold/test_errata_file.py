"""gold/v3/errata.jsonl is checked when the folder loads: every row names a conversation of the
version, an expected row's erratum names a row v3 has (edited, added) or no longer has (removed),
and a bad row is refused naming its file, line and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from extraction_eval import GoldDataError
from extraction_eval.gold import load_gold

from ..conftest import REPO


def _copy_with(tmp_path: Path, change: Any) -> Path:
    gold = tmp_path / "v3"
    shutil.copytree(REPO / "gold" / "v3", gold, ignore=shutil.ignore_patterns("answers"))
    rows = [json.loads(line) for line in (gold / "errata.jsonl").read_text(encoding="utf-8").splitlines()]
    change(rows)
    (gold / "errata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return gold


def test_the_committed_errata_load() -> None:
    gold = load_gold(REPO / "gold" / "v3")
    assert gold.version == "v3" and len(gold.conversations) == 810


def test_an_erratum_of_an_unknown_conversation_is_refused(tmp_path: Path) -> None:
    def unknown(rows: list[dict[str, Any]]) -> None:
        rows[1]["conversation_id"] = "v2-z999"

    with pytest.raises(
        GoldDataError, match=r"errata.jsonl:2: field 'conversation_id': 'v2-z999' is not a conversation"
    ):
        load_gold(_copy_with(tmp_path, unknown))


def test_a_removed_row_that_is_still_there_is_refused(tmp_path: Path) -> None:
    def still_there(rows: list[dict[str, Any]]) -> None:
        removal = next(r for r in rows if r["action"] == "remove")
        removal["memory_id"] = "v2-a001-m1"  # a row v3 has

    with pytest.raises(GoldDataError, match=r"field 'memory_id': 'v2-a001-m1' is still a row of expected_memories"):
        load_gold(_copy_with(tmp_path, still_there))


def test_an_erratum_without_its_evidence_is_refused(tmp_path: Path) -> None:
    def no_evidence(rows: list[dict[str, Any]]) -> None:
        del rows[0]["why"]

    with pytest.raises(GoldDataError, match=r"errata.jsonl:1.*why"):
        load_gold(_copy_with(tmp_path, no_evidence))
