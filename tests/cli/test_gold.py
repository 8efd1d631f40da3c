"""`gold validate` refuses what cassette replay would refuse, and says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from extraction_eval.cli import app

from ..helpers import read_rows, write_rows


def _validate(gold: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["gold", "validate", "--gold", str(gold)])
    return result.exit_code, result.output


def test_a_fresh_folder_validates(tiny_gold: Path) -> None:
    code, output = _validate(tiny_gold)
    assert code == 0, output
    assert output.rstrip().endswith("ok")


def test_cassette_moved_to_an_unknown_id(tiny_gold: Path) -> None:
    rows = read_rows(tiny_gold)
    rows[2]["conversation_id"] = "t03b"
    write_rows(tiny_gold, rows, sign=True)
    code, output = _validate(tiny_gold)
    assert code == 2 and not output.rstrip().endswith("ok"), output
    assert "conversation 't03': no cassette recorded." in output
    assert "line 3: cassette 't03b': the gold set has no conversation 't03b' (closest ['t03'])." in output
    assert "the cassette filed as 't03b' has the request of gold conversation 't03'" in output


def test_two_cassettes_swapped(tiny_gold: Path) -> None:
    rows = read_rows(tiny_gold)
    rows[0]["conversation_id"], rows[1]["conversation_id"] = rows[1]["conversation_id"], rows[0]["conversation_id"]
    write_rows(tiny_gold, rows, sign=True)
    code, output = _validate(tiny_gold)
    assert code == 2, output
    assert "2 conversation(s) cannot be replayed" in output
    assert "conversation 't01': request hash mismatch" in output
    assert (
        "request_sha256   DIFFERS (it is the request of conversation 't02': cassettes swapped or ids renamed)" in output
    )


@pytest.mark.parametrize("kind", ["oracle_aligned_expected_json", "live_openai_recorded"])
def test_conversation_edited_after_recording(kind: str, tiny_gold: Path) -> None:
    cassettes = read_rows(tiny_gold)
    write_rows(tiny_gold, [{**r, "cassette_kind": kind} for r in cassettes], sign=True)
    manifest_path = tiny_gold / "cassette_manifest.json"
    manifest_path.write_text(json.dumps({**json.loads(manifest_path.read_text()), "cassette_kind": kind}))
    rows = read_rows(tiny_gold, "conversations.jsonl")
    rows[5]["session_date"] = "2026-03-03"  # edited after the cassettes were made
    write_rows(tiny_gold, rows, "conversations.jsonl", sign=True)
    code, output = _validate(tiny_gold)
    assert code == 2, output
    assert "conversation 't06': request hash mismatch" in output
    assert "request_sha256   DIFFERS (rendered messages or sampling differ" in output
    if kind == "live_openai_recorded":
        fix = f"`EXTRACTION_EVAL_MODE=record extraction-eval run --mode record --gold {tiny_gold}`"
        assert fix in output and "`extraction-eval cassettes oracle --gold" not in output
    else:
        assert f"`extraction-eval cassettes oracle --gold {tiny_gold}`" in output and "--mode record" not in output
