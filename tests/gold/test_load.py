"""Bad gold rows fail with the file, the line, the field and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extraction_eval import GoldDataError
from extraction_eval.gold import ForbiddenMemory, Turn, load_gold

from ..conftest import TINY, copy_gold


@pytest.fixture
def gold(tmp_path: Path) -> Path:
    return copy_gold(TINY, tmp_path / "g", oracle=False)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _write(path: Path, lines: list[str], *, newline: bool = True) -> None:
    path.write_text("\n".join(lines) + ("\n" if newline else ""), encoding="utf-8")


def edit_row(path: Path, index: int, drop: tuple[str, ...] = (), **changes: object) -> None:
    """Rewrite one JSONL row (0-based ``index``) with fields changed or dropped."""
    lines = _lines(path)
    row = json.loads(lines[index])
    for key in drop:
        del row[key]
    row.update(changes)
    lines[index] = json.dumps(row)
    _write(path, lines)


def test_fixture_loads(gold: Path) -> None:
    data = load_gold(gold, require_manifest=False)
    assert len(data.conversations) == 8 and len(data.memories) == 8
    assert data.negative_ids == ("t08",)
    assert data.version == "g"  # the folder's name when there is no manifest


def test_invalid_json_names_file_and_line(gold: Path) -> None:
    path = gold / "conversations.jsonl"
    lines = _lines(path)
    lines[2] = lines[2][:-1] + ",}"
    _write(path, lines)
    with pytest.raises(GoldDataError, match=r"conversations\.jsonl:3: invalid JSON .*Fix the line"):
        load_gold(gold, require_manifest=False)


def test_truncated_last_line_is_named_as_such(gold: Path) -> None:
    path = gold / "expected_memories.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])
    with pytest.raises(GoldDataError, match=r"expected_memories\.jsonl:8: truncated last line.*git checkout"):
        load_gold(gold, require_manifest=False)


def test_invalid_utf8_names_the_line(gold: Path) -> None:
    path = gold / "conversations.jsonl"
    raw = path.read_bytes().split(b"\n")
    raw[3] = raw[3].replace(b"breakfast", b"breakf\xffst")
    path.write_bytes(b"\n".join(raw))
    with pytest.raises(
        GoldDataError, match=r"conversations\.jsonl:4: invalid UTF-8 at byte \d+.*Save the file as UTF-8"
    ):
        load_gold(gold, require_manifest=False)


def test_unknown_category_lists_the_choices(gold: Path) -> None:
    edit_row(gold / "expected_memories.jsonl", 3, categories=["habit"])
    with pytest.raises(GoldDataError) as info:
        load_gold(gold, require_manifest=False)
    choices = "['factual', 'procedural', 'preference', 'behavioral', 'episodic']"
    assert str(info.value) == (  # one line: no second, false "Tuple should have at least 1 item" line
        f"{gold / 'expected_memories.jsonl'}:4: field 'categories[0]': Input should be 'factual', 'procedural', "
        f"'preference', 'behavioral' or 'episodic' (got 'habit'); use 1 to 3 distinct values of {choices}."
    )


def test_empty_categories_still_say_too_short(gold: Path) -> None:
    edit_row(gold / "expected_memories.jsonl", 3, categories=[])
    with pytest.raises(GoldDataError, match=r":4: field 'categories': Tuple should have at least 1 item"):
        load_gold(gold, require_manifest=False)


def test_unknown_temporal_kind_lists_the_choices(gold: Path) -> None:
    edit_row(gold / "expected_memories.jsonl", 0, temporal_kind="forever")
    with pytest.raises(
        GoldDataError, match=r":1: field 'temporal_kind'.*'forever'.*'durable', 'current', 'past', 'future'"
    ):
        load_gold(gold, require_manifest=False)


def test_duplicate_id_names_both_lines(gold: Path) -> None:
    edit_row(gold / "conversations.jsonl", 5, conversation_id="t02")
    with pytest.raises(GoldDataError, match=r":6: field 'conversation_id': duplicate id 't02' \(first on line 2\)"):
        load_gold(gold, require_manifest=False)


def test_memory_pointing_at_no_conversation(gold: Path) -> None:
    edit_row(gold / "expected_memories.jsonl", 1, conversation_id="t99")
    with pytest.raises(
        GoldDataError, match=r"expected_memories\.jsonl:2: field 'conversation_id': 't99' is not a conversation"
    ):
        load_gold(gold, require_manifest=False)


def test_missing_and_extra_fields(gold: Path) -> None:
    edit_row(gold / "expected_memories.jsonl", 0, drop=("supersedes",), confidence=1)
    with pytest.raises(GoldDataError) as info:
        load_gold(gold, require_manifest=False)
    assert "field 'supersedes' is missing; add the field 'supersedes'" in str(info.value)
    assert "field 'confidence' is not part of an expected memory" in str(info.value)


def test_bad_session_date(gold: Path) -> None:
    edit_row(gold / "conversations.jsonl", 0, session_date="2026-02-30")
    with pytest.raises(GoldDataError, match=r":1: field 'session_date'.*not a real date.*YYYY-MM-DD"):
        load_gold(gold, require_manifest=False)


def test_empty_expected_memories_file_means_every_conversation_is_negative(gold: Path) -> None:
    (gold / "expected_memories.jsonl").write_bytes(b"")
    data = load_gold(gold, require_manifest=False)
    assert data.memories == () and data.negative_ids == tuple(f"t0{i}" for i in range(1, 9))


def test_empty_conversations_file_is_named(gold: Path) -> None:
    path = gold / "conversations.jsonl"
    path.write_bytes(b"")
    (gold / "expected_memories.jsonl").write_bytes(b"")
    with pytest.raises(GoldDataError) as info:
        load_gold(gold, require_manifest=False)
    assert str(info.value) == (
        f"{path}: no conversations (the file is empty). A gold folder needs at least one; restore the file "
        f"with `git checkout -- {path}` or point --gold at the right folder."
    )


def test_a_blank_line_is_still_an_empty_line(gold: Path) -> None:
    (gold / "expected_memories.jsonl").write_bytes(b"\n")
    with pytest.raises(GoldDataError, match=r"expected_memories\.jsonl:1: empty line"):
        load_gold(gold, require_manifest=False)


def test_missing_folder_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(GoldDataError, match="not a gold folder.*--gold gold/v1"):
        load_gold(tmp_path / "nope")


def test_a_turn_is_small_and_its_typo_is_named(gold: Path) -> None:
    """Turns are slotted dataclasses (issue 25: 48 bytes each, not a model's 480); an unknown key in
    one is still refused with its file, line and field, like a model's."""
    import sys

    turn = load_gold(gold, require_manifest=False).conversations[0].turns[0]
    assert not hasattr(turn, "__dict__") and sys.getsizeof(turn) <= 64
    assert turn == Turn(role=turn.role, content=turn.content)
    rows = [json.loads(line) for line in (gold / "conversations.jsonl").read_text().splitlines()]
    edit_row(gold / "conversations.jsonl", 2, turns=[{**rows[2]["turns"][0], "speaker": "me"}])
    with pytest.raises(GoldDataError) as info:
        load_gold(gold, require_manifest=False)
    assert str(info.value) == (
        f"{gold / 'conversations.jsonl'}:3: field 'turns[0].speaker' is not part of a conversation; "
        "remove it or fix its spelling."
    )


def test_rows_share_their_fields_set_and_a_copy_keeps_its_own(gold: Path) -> None:
    """Issue 25: rows that gave the same fields share one fields-set (not 728 bytes each); it is
    still each row's own answer, and ``model_copy(update=...)`` changes the copy's alone."""
    loaded = load_gold(gold, require_manifest=False)
    first, second = loaded.memories[0], loaded.memories[1]
    assert first.model_fields_set is second.model_fields_set
    assert first.model_fields_set == {
        "memory_id",
        "conversation_id",
        "content",
        "categories",
        "temporal_kind",
        "supersedes",
    }
    assert loaded.conversations[0].model_fields_set is loaded.conversations[1].model_fields_set
    forbidden = ForbiddenMemory(conversation_id="t01", content="User's PIN is 1234.", reason="secret")
    assert forbidden.model_fields_set == {"conversation_id", "content", "reason"}  # stratum left to its default
    copy = forbidden.model_copy(update={"stratum": "hard"})
    assert copy.model_fields_set == {"conversation_id", "content", "reason", "stratum"}
    assert forbidden.model_fields_set == {"conversation_id", "content", "reason"}
    again = ForbiddenMemory(conversation_id="t02", content="User's PIN is 9.", reason="secret")
    assert again.model_fields_set is forbidden.model_fields_set and "stratum" not in again.model_fields_set
