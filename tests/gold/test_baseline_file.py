"""baseline_results.json has one reader: the same message shape in the working tree and at a revision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extraction_eval import GoldDataError
from extraction_eval.gates._gate_run import baseline_file_note
from extraction_eval.gold import baseline_block, load_baseline_file, read_baseline_source
from extraction_eval.tracking import RegisteredBaseline

from ..conftest import TINY
from ..helpers import committed_gold_repo, git

FIELD = "field 'providers.openai.gated_metrics': Tuple should have at least 1 item after validation, not 0"


def without_gated_metrics(path: Path) -> None:
    data = json.loads(path.read_text())
    data["providers"]["openai"]["gated_metrics"] = []
    path.write_text(json.dumps(data))


def test_a_bad_field_is_named_alike_in_the_tree_and_at_a_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold, _ = committed_gold_repo(tmp_path / "repo", TINY)
    monkeypatch.chdir(tmp_path / "repo")
    rel = Path("gold/tiny/baseline_results.json")
    without_gated_metrics(gold / "baseline_results.json")
    git(tmp_path / "repo", "commit", "-qam", "no gated metrics")
    with pytest.raises(GoldDataError) as tree:
        read_baseline_source(Path("gold/tiny"))
    assert str(tree.value).startswith(f"{rel}: {FIELD} (got []); ")
    with pytest.raises(GoldDataError) as at_rev:
        read_baseline_source(Path("gold/tiny"), "HEAD")
    assert str(at_rev.value).startswith(f"{rel} at 'HEAD': {FIELD} (got []); ")
    (gold / "baseline_results.json").write_text("{\n  oops")
    git(tmp_path / "repo", "commit", "-qam", "broken")
    with pytest.raises(GoldDataError) as broken:
        read_baseline_source(Path("gold/tiny"), "HEAD")
    assert str(broken.value).startswith(f"{rel} at 'HEAD':2: invalid JSON (Expecting property name")


def test_a_revision_names_the_commit_it_was_read_at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, sha = committed_gold_repo(tmp_path / "repo", TINY)
    monkeypatch.chdir(tmp_path / "repo")
    source = read_baseline_source(Path("gold/tiny"), "main")
    assert (source.origin, source.revision) == (f"gold/tiny/baseline_results.json@{sha}", sha)
    assert source.baseline.gold_version == "tiny"


def test_a_block_is_none_without_the_file_or_the_provider(tmp_path: Path) -> None:
    assert baseline_block(tmp_path, "openai") is None
    (tmp_path / "baseline_results.json").write_bytes((TINY / "baseline_results.json").read_bytes())
    assert baseline_block(tmp_path, "vllm") is not None and baseline_block(tmp_path, "nope") is None
    assert load_baseline_file(tmp_path / "baseline_results.json").providers["openai"].model == "gpt-4o-mini"


def test_the_gate_notes_a_baseline_file_it_cannot_read(tmp_path: Path) -> None:
    registered = RegisteredBaseline("openai", "extraction-eval-openai", "1", "r1", {}, None)
    path = tmp_path / "baseline_results.json"
    path.write_bytes((TINY / "baseline_results.json").read_bytes())
    without_gated_metrics(path)
    note = baseline_file_note(tmp_path, registered)
    assert note == (
        f"**Review:** {path} in this tree cannot be read ({path}: {FIELD} (got []); see docs/data-format.md.); "
        "fix it before it is promoted."
    )
