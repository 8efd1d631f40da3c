"""Issue 21, point 8: bounded memory per line. A gold or cassette line longer than MAX_LINE_BYTES
is refused with its file and line before it is read whole; the depth guard costs O(1) memory."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from extraction_eval import GoldDataError, Mode, run_eval
from extraction_eval._json import json_depth
from extraction_eval._jsonio import MAX_LINE_BYTES, iter_jsonl
from extraction_eval.gold import load_gold


def test_a_line_past_the_limit_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    fits = '{"a": "' + "x" * (MAX_LINE_BYTES - 20) + '"}'
    with open(path, "w") as fh:
        fh.write('{"a": 1}\n' + fits + "\n" + '{"a": "' + "y" * MAX_LINE_BYTES + '"}\n{"a": 2}\n')
    rows = iter_jsonl(path)
    assert next(rows).value == {"a": 1}
    assert len(next(rows).raw) == len(fits)  # at the limit: read
    with pytest.raises(GoldDataError, match=rf"rows.jsonl:3: the line is longer than {MAX_LINE_BYTES:,} bytes"):
        next(rows)


def test_a_huge_conversation_line_stops_validate_and_run(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    path = tiny_gold / "conversations.jsonl"
    lines = path.read_text().splitlines()
    lines[4] = lines[4].replace('"content": "', '"content": "' + "z" * (MAX_LINE_BYTES + 1), 1)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(GoldDataError, match=r"conversations.jsonl:5: the line is longer than"):
        load_gold(tiny_gold)
    with pytest.raises(GoldDataError, match=r"conversations.jsonl:5: the line is longer than"):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")


def test_a_huge_cassette_line_stops_the_replay(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    path = tiny_gold / "openai_cassettes.jsonl"
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace('"response": "', '"response": "' + " " * (MAX_LINE_BYTES + 1), 1)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(GoldDataError, match=r"openai_cassettes.jsonl:2: the line is longer than"):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")


@pytest.mark.parametrize("size", [1_000_000, 4_000_000])
def test_the_depth_guard_costs_constant_memory(size: int) -> None:
    """A long string literal (the old guard's regex kept a frame per character: ~120 bytes each)."""
    text = '{"a": "' + "q" * size + '", "b": [[1]]}'
    tracemalloc.start()
    try:
        assert json_depth(text) == 3
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64_000  # bytes, whatever the text's length


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ('{"a": "[[[[", "b": 1}', 1),
        ('{"a": "x\\"[[", "b": [1]}', 2),
        ('{"a": "x\\\\", "b": [[1]]}', 3),
        ('["\\\\\\"[", [[]]]', 3),
        ("[]", 1),
        ('"just text {"', 0),
    ],
)
def test_the_depth_guard_skips_strings_and_escapes(text: str, depth: int) -> None:
    assert json_depth(text) == depth
