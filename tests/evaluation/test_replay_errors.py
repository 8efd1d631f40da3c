"""Through the CLI, a replay that cannot answer names the conversation, the file and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from extraction_eval.cli import app

from ..helpers import assert_marked_failed, read_rows, write_rows


def _run(gold: Path, out: Path, mode: str = "cassette") -> tuple[int, str]:
    result = CliRunner().invoke(app, ["run", "--mode", mode, "--gold", str(gold), "--output-dir", str(out)])
    return result.exit_code, result.output


def _drop_cassette(gold: Path, conversation_id: str, *, resign: bool) -> None:
    # with resign, the manifest's file hash agrees with the shorter file
    write_rows(gold, [r for r in read_rows(gold) if r["conversation_id"] != conversation_id], sign=resign)


@pytest.mark.parametrize("resign", [False, True], ids=["hash-differs", "hash-resigned"])
@pytest.mark.parametrize("mode", ["cassette", "smoke"])
def test_missing_cassette_line_names_the_conversation(
    mode: str, resign: bool, tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    _drop_cassette(tiny_gold, "t03", resign=resign)
    code, output = _run(tiny_gold, tmp_path / "out", mode)
    assert code == 2, output
    where = tiny_gold / "cassette_manifest.json"
    assert f"{where}: field 'counts.cassettes' is 8 but the files hold 7" in output  # the count check still speaks
    assert "1 conversation(s) cannot be replayed:\nconversation 't03': no cassette recorded.\n  recording 't0" in output
    assert "    conversation_id  DIFFERS" in output
    assert_marked_failed(tmp_path / "out")


def test_missing_cassette_file_names_the_path_and_the_fix(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    path = tiny_gold / "openai_cassettes.jsonl"
    recorded = json.loads((tiny_gold / "cassette_manifest.json").read_text())["files"][path.name]
    path.unlink()
    code, output = _run(tiny_gold, tmp_path / "out")
    assert code == 2, output
    assert output == (
        f"error: {path}: file not found, but the manifest records its sha256 {recorded}; restore it with "
        f"`git checkout -- {path}`, or write it again with `extraction-eval cassettes oracle --gold {tiny_gold}`.\n"
    )
    assert_marked_failed(tmp_path / "out")
