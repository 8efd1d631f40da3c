"""The matcher calibration pairs: pinned, split by the README's rule, each row checked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from extraction_eval import GoldDataError, load_gold
from extraction_eval.gold import ExpectedMemory
from extraction_eval.gold._calibration import Half, load_pairs, split_rule

from ..conftest import REPO

PAIRS = REPO / "gold" / "matcher-calibration"


@pytest.fixture(scope="module")
def memories() -> tuple[ExpectedMemory, ...]:
    return load_gold(REPO / "gold" / "v1", require_manifest=False).memories


def test_both_halves_load_and_share_no_gold_row(memories: tuple[ExpectedMemory, ...]) -> None:
    tuning, heldout = load_pairs(PAIRS, Half.TUNING, memories), load_pairs(PAIRS, Half.HELDOUT, memories)
    assert (len(tuning), len(heldout)) == (366, 372)  # the README's table
    assert sum(p.same_fact for p in tuning) == 216 and sum(p.same_fact for p in heldout) == 223
    assert not {p.memory_id for p in tuning} & {p.memory_id for p in heldout}
    assert not {p.conversation_id for p in tuning} & {p.conversation_id for p in heldout}


def test_the_split_rule_alternates_within_each_first_category(memories: tuple[ExpectedMemory, ...]) -> None:
    halves = split_rule(memories)
    assert len(halves) == 109  # gold v1's positive conversations
    assert sum(h is Half.TUNING for h in halves.values()) == 55


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "pairs"
    shutil.copytree(PAIRS, folder)
    return folder


def _edit_first_tuning_row(folder: Path, **changes: object) -> None:
    path = folder / "tuning.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    row.update(changes)
    for key in [k for k, v in changes.items() if v is None]:
        del row[key]
    lines[0] = json.dumps(row, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_an_edited_file_fails_its_pinned_hash(tmp_path: Path, memories: tuple[ExpectedMemory, ...]) -> None:
    folder = _copy(tmp_path)
    _edit_first_tuning_row(folder, note="edited")
    with pytest.raises(GoldDataError, match=r"tuning.jsonl: sha256 [0-9a-f]{64} differs from the pinned b635437"):
        load_pairs(folder, Half.TUNING, memories)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"colour": "red"},
            "tuning.jsonl:1: field 'colour' is not part of a calibration pair; remove it or fix its spelling.",
        ),
        ({"note": None}, "tuning.jsonl:1: field 'note' is missing; add the field 'note'"),
        ({"kind": "typo"}, "tuning.jsonl:1: field 'kind': Input should be"),
        ({"kind": "typo"}, "use one of ['user_prefix', 'synonym',"),
        ({"pair_id": "tuning-0002"}, "tuning.jsonl:1: field 'pair_id' is 'tuning-0002', expected 'tuning-0001'"),
        ({"memory_id": "c999-m1"}, "tuning.jsonl:1: field 'memory_id': 'c999-m1' is not a gold v1 row"),
        ({"gold": "User runs 5 km."}, "tuning.jsonl:1: field 'gold' is 'User runs 5 km.' but gold row 'c001-m1' has"),
        ({"categories": ["factual"]}, "field 'categories' is ['factual'] but gold row 'c001-m1' has ['behavioral']"),
        ({"same_fact": False}, "field 'same_fact' is false but kind 'number_format' is a same-fact kind"),
    ],
)
def test_a_bad_row_names_file_line_field_and_fix(
    tmp_path: Path, memories: tuple[ExpectedMemory, ...], changes: dict[str, object], message: str
) -> None:
    folder = _copy(tmp_path)
    _edit_first_tuning_row(folder, **changes)
    with pytest.raises(GoldDataError) as caught:
        load_pairs(folder, Half.TUNING, memories, check_pinned=False)
    assert message in str(caught.value)


def test_a_pair_in_the_wrong_half_is_refused(tmp_path: Path, memories: tuple[ExpectedMemory, ...]) -> None:
    folder = _copy(tmp_path)
    (folder / "heldout.jsonl").write_text(
        (folder / "tuning.jsonl").read_text(encoding="utf-8").replace('"tuning-', '"heldout-'), encoding="utf-8"
    )
    with pytest.raises(GoldDataError) as caught:
        load_pairs(folder, Half.HELDOUT, memories, check_pinned=False)
    assert str(caught.value).startswith(f"{folder / 'heldout.jsonl'}:1: conversation 'c001' belongs to the tuning half")
    assert "a gold text must never be in both halves" in str(caught.value)
