"""What a reviewer reads about one run: the per-memory outcomes, the conversation status,
the confusion counts and plots, and a description that never calls edited cassettes
oracle-aligned. The tiny fixture (t01..t08, t08 negative) with hand-made answers."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from matplotlib import image
from mlflow import MlflowClient

from extraction_eval import Mode, run_eval
from extraction_eval.evaluation import answer_from_cassette, category_confusion, replayed_cassettes, temporal_confusion
from extraction_eval.gold import load_cassettes, load_gold
from extraction_eval.vocab import CassetteKind

from ..helpers import mutate_cassettes


def _memories(row: dict[str, Any]) -> list[dict[str, Any]]:
    return list(json.loads(row["response"])["memories"])


def _answer(row: dict[str, Any], memories: list[dict[str, Any]]) -> dict[str, Any]:
    return {**row, "response": json.dumps({"memories": memories})}


def _worse(row: dict[str, Any]) -> dict[str, Any] | None:
    """t01 dropped; t05 broken JSON; t07 one category and one temporal kind wrong; t08 (negative)
    gets a prediction; the rest as the oracle wrote them."""
    cid = row["conversation_id"]
    if cid == "t01":
        return _answer(row, [])
    if cid == "t05":
        return {**row, "response": "not json"}
    if cid == "t07":
        first, second = _memories(row)
        return _answer(row, [{**first, "categories": ["procedural"]}, {**second, "temporal_kind": "past"}])
    if cid == "t08":
        return _answer(
            row,
            [
                {
                    "content": "User likes tea.",
                    "categories": ["preference"],
                    "temporal_kind": "durable",
                    "supersedes": None,
                }
            ],
        )
    return None


@pytest.fixture
def worse_run(tiny_gold: Path, local_store: str, tmp_path: Path) -> tuple[Any, Path, Path]:
    mutate_cassettes(tiny_gold, _worse)  # re-signed: the file hash agrees with the manifest
    out = tmp_path / "out"
    return run_eval(Mode.CASSETTE, tiny_gold, out), out, tiny_gold


def test_statuses_and_memory_rows_say_what_happened(worse_run: tuple[Any, Path, Path]) -> None:
    result, out, _ = worse_run
    rows = [json.loads(line) for line in (out / "per_conversation.jsonl").read_text().splitlines()]
    assert {r["conversation_id"]: r["status"] for r in rows} == {
        "t01": "all_missed",
        "t02": "all_matched",
        "t03": "all_matched",
        "t04": "all_matched",
        "t05": "failed",
        "t06": "all_matched",
        "t07": "partial",
        "t08": "false_positive",
    }
    t07 = next(r for r in rows if r["conversation_id"] == "t07")
    assert t07["outcomes"] == {
        "matched": 0,
        "missed": 0,
        "spurious": 0,
        "category_mismatch": 1,
        "temporal_mismatch": 1,
    }
    client = MlflowClient()
    table = json.loads(
        Path(client.download_artifacts(result.logged.run_id, "per_memory_table.json", str(out / "dl"))).read_text()
    )
    records = [dict(zip(table["columns"], values, strict=True)) for values in table["data"]]
    outcomes = [(r["conversation_id"], r["outcome"]) for r in records]
    assert outcomes == [
        ("t01", "missed"),
        ("t02", "matched"),
        ("t03", "matched"),
        ("t04", "matched"),
        ("t05", "missed"),
        ("t06", "matched"),
        ("t07", "category_mismatch"),
        ("t07", "temporal_mismatch"),
        ("t08", "spurious"),
    ]
    mismatch = records[6]
    assert (mismatch["expected_categories"], mismatch["predicted_categories"]) == (
        "behavioral, procedural",
        "procedural",
    )
    assert mismatch["similarity"] == 1.0 and records[0]["similarity"] is None
    assert (records[8]["expected"], records[8]["predicted"]) == ("", "User likes tea.")
    assert (records[7]["expected_temporal"], records[7]["predicted_temporal"]) == ("current", "past")


def test_confusion_counts_by_hand(worse_run: tuple[Any, Path, Path]) -> None:
    result, _, _ = worse_run
    # matched pairs: t02 factual/current, t03 preference/durable, t04 behavioral/current,
    # t06 episodic/past, t07a {procedural, behavioral}->{procedural} durable,
    # t07b factual current->past
    labels, matrix = category_confusion(result.report)
    assert labels == ("factual", "procedural", "preference", "behavioral", "episodic")
    assert matrix == [
        [2, 0, 0, 0, 0],
        [0, 1, 0, 0, 0],
        [0, 0, 1, 0, 0],
        [0, 1, 0, 1, 0],  # behavioral expected, predicted procedural (t07a) and behavioral (t04)
        [0, 0, 0, 0, 1],
    ]
    kinds, kind_matrix = temporal_confusion(result.report)
    assert kinds == ("durable", "current", "past", "future")
    assert kind_matrix == [[2, 0, 0, 0], [0, 2, 1, 0], [0, 0, 1, 0], [0, 0, 0, 0]]


def test_plots_are_pngs_of_the_drawn_size(worse_run: tuple[Any, Path, Path]) -> None:
    result, out, _ = worse_run
    sizes = {}
    for name in ("per_category.png", "category_confusion.png", "temporal_confusion.png"):
        path = out / "plots" / name
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        pixels = image.imread(path)
        sizes[name] = pixels.shape[:2]
        assert pixels.std() > 0.05  # not a blank canvas
    assert sizes == {
        "per_category.png": (420, 1100),
        "category_confusion.png": (500, 600),
        "temporal_confusion.png": (500, 600),
    }
    local = Path(MlflowClient().download_artifacts(result.logged.run_id, "plots/per_category.png", str(out / "dl")))
    assert local.read_bytes() == (out / "plots" / "per_category.png").read_bytes()


def test_edited_cassettes_are_never_called_oracle_aligned(worse_run: tuple[Any, Path, Path]) -> None:
    result, out, gold = worse_run
    run = MlflowClient().get_run(result.logged.run_id)
    tags = run.data.tags
    assert tags["cassettes_edited"] == "true"
    assert tags["cassette_file_sha256"] == hashlib.sha256((gold / "openai_cassettes.jsonl").read_bytes()).hexdigest()
    assert run.info.run_name == "cassette-openai-tiny-edited"
    note = tags["mlflow.note.content"]
    assert "EDITED cassettes: 4 of 8 replayed answers are not the oracle's conversion of the expected rows" in note
    assert "(t01, t05, t07, t08)" in note
    assert "oracle-aligned cassettes" not in note and "embed the expected JSON" not in note
    assert json.loads((out / "run.json").read_text())["evidence"] in note
    assert result.evidence.startswith("Evidence: EDITED cassettes")


def test_a_changed_cassette_file_is_named_with_both_hashes(tiny_gold: Path) -> None:
    """The contract gate stops a run on a file the manifest does not sign; should one get past
    it, the evidence names both hashes even when every answer is still the oracle's."""
    path = tiny_gold / "openai_cassettes.jsonl"
    recorded = hashlib.sha256(path.read_bytes()).hexdigest()
    path.write_text(path.read_text().replace("{", "{ ", 1), encoding="utf-8")  # same rows, other bytes
    gold = load_gold(tiny_gold)
    answers = {c.conversation_id: answer_from_cassette(c) for c in (c for _, c in load_cassettes(path))}
    replayed = replayed_cassettes(gold, CassetteKind.ORACLE_ALIGNED, answers)
    now = hashlib.sha256(path.read_bytes()).hexdigest()
    assert (replayed.file_sha256, replayed.not_oracle, replayed.edited) == (now, (), True)
    assert replayed.edits() == f"openai_cassettes.jsonl has sha256 {now[:12]}…, the manifest records {recorded[:12]}…"


def test_the_system_prompt_is_a_registry_version_per_hash_linked_to_each_run(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from extraction_eval.contract import _prompt, prompt_sha256, system_prompt

    client = MlflowClient(local_store)
    first = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "a")
    second = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "b")
    (version,) = client.search_prompt_versions("extraction-eval-system-prompt")
    assert version.template == system_prompt() and version.tags["prompt_sha256"] == prompt_sha256()
    for result in (first, second):
        linked = json.loads(client.get_run(result.logged.run_id).data.tags["mlflow.linkedPrompts"])
        assert linked == [{"name": "extraction-eval-system-prompt", "version": "1"}]
    # another prompt (run past the drift with the local override) is version 2
    new = (system_prompt() + "\nAlso extract the user's favourite colour.\n").encode("utf-8")
    monkeypatch.setattr(_prompt, "_prompt_bytes", lambda: new)
    monkeypatch.setenv("EXTRACTION_EVAL_ALLOW_CONTRACT_DRIFT", "1")
    third = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "c")
    versions = {
        v.version: v.tags["prompt_sha256"] for v in client.search_prompt_versions("extraction-eval-system-prompt")
    }
    assert versions == {1: hashlib.sha256(system_prompt_bytes_before(new)).hexdigest(), 2: prompt_sha256()}
    linked = json.loads(client.get_run(third.logged.run_id).data.tags["mlflow.linkedPrompts"])
    assert linked == [{"name": "extraction-eval-system-prompt", "version": "2"}]


def system_prompt_bytes_before(new: bytes) -> bytes:
    return new[: -len(b"\nAlso extract the user's favourite colour.\n")]
