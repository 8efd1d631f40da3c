"""A hand-written answer set replays as cassettes of its own kind, and ``--matcher reviewed``
scores it exactly as its reviewers matched it (counts computed by hand below)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from mlflow import MlflowClient

from extraction_eval import ConfigurationError, GoldDataError, Mode, RunOptions, run_eval
from extraction_eval.cassettes._answers import write_answer_cassettes
from extraction_eval.scoring import MissingDecision

#: What a writer wrote for the tiny gold set (t01..t08), blind to its rows.
ANSWERS = {
    "t01": [("The user has a penicillin allergy.", ["factual"], "durable", None)],
    "t02": [("User lives in Lisbon now.", ["factual"], "current", "User lived in Porto.")],
    "t03": [("User wants bullet points instead of long paragraphs.", ["preference"], "durable", None)],
    "t04": [
        ("User often skips breakfast on weekdays.", ["behavioral"], "current", None),
        ("User asked whether skipping breakfast is bad.", ["episodic"], "past", None),
    ],
    "t05": [("User has a dentist appointment on Friday.", ["episodic"], "future", None)],
    "t06": [("User ran the Lisbon half marathon on 2026-03-01.", ["episodic"], "past", None)],
    "t07": [
        (
            "User writes a failing test before fixing a bug, and the team reviews code on Tuesdays.",
            ["procedural"],
            "durable",
            None,
        )
    ],
    "t08": [],
}

#: The reviewers' decisions: t05 lacks the date (not the same fact); t07's merged memory pairs
#: with the row it states most completely; t04's second memory states no gold row.
DECISIONS = {
    "t01": {"pairs": [["t01-m1", "A1"]], "stale": []},
    "t02": {"pairs": [["t02-m1", "A1"]], "stale": [["t02-m1", "A1", "supersedes"]]},
    "t03": {"pairs": [["t03-m1", "A1"]], "stale": []},
    "t04": {"pairs": [["t04-m1", "A1"]], "stale": []},
    "t05": {"pairs": [], "stale": []},
    "t06": {"pairs": [["t06-m1", "A1"]], "stale": []},
    "t07": {"pairs": [["t07-m1", "A1"]], "stale": []},
    "t08": {"pairs": [], "stale": []},
}


def _memory(content: str, categories: list[str], kind: str, supersedes: str | None) -> dict[str, object]:
    return {"content": content, "categories": categories, "temporal_kind": kind, "supersedes": supersedes}


def write_set(
    gold: Path, name: str = "blind-a", decisions: dict[str, dict[str, list[list[str]]]] | None = None
) -> Path:
    folder = gold / "answers" / name
    folder.mkdir(parents=True)
    with open(folder / "answers.jsonl", "w", encoding="utf-8") as fh:
        for cid, memories in ANSWERS.items():
            row = {
                "conversation_id": cid,
                "writer": "w1" if cid < "t05" else "w2",
                "memories": [_memory(*m) for m in memories],
            }
            fh.write(json.dumps(row) + "\n")
    write_answer_cassettes(gold, name)
    responses = {
        json.loads(line)["conversation_id"]: json.loads(line)["response"]
        for line in (folder / "openai_cassettes.jsonl").read_text().splitlines()
    }
    with open(folder / "matches.jsonl", "w", encoding="utf-8") as fh:
        for cid, d in (DECISIONS if decisions is None else decisions).items():
            row = {
                "conversation_id": cid,
                "answer_sha256": hashlib.sha256(responses[cid].encode()).hexdigest(),
                "pairs": d["pairs"],
                "forbidden": [],
                "stale": d["stale"],
                "decided": "agreed",
            }
            fh.write(json.dumps(row) + "\n")
    return folder


def test_cassettes_of_an_answer_set(tiny_gold: Path) -> None:
    folder = write_set(tiny_gold)
    manifest = json.loads((folder / "cassette_manifest.json").read_text())
    assert manifest["cassette_kind"] == "hand_written_blind"
    assert manifest["model"] == "hand-written"
    assert manifest["gold_version"] == "tiny"
    rows = [json.loads(line) for line in (folder / "openai_cassettes.jsonl").read_text().splitlines()]
    assert [r["conversation_id"] for r in rows] == [f"t0{i}" for i in range(1, 9)]
    assert json.loads(rows[3]["response"])["memories"][1]["content"] == "User asked whether skipping breakfast is bad."
    assert {r["cassette_kind"] for r in rows} == {"hand_written_blind"}
    # the oracle cassettes beside it are untouched
    oracle = json.loads((tiny_gold / "cassette_manifest.json").read_text())
    assert oracle["cassette_kind"] == "oracle_aligned_expected_json"
    # idempotent: a second build writes nothing new
    again = write_answer_cassettes(tiny_gold, "blind-a")
    assert (again.cassettes_written, again.cassettes_kept, again.manifest_written) == (0, 8, False)
    assert again.writers == {"w1": 4, "w2": 4}


def test_reviewed_matcher_reproduces_the_reviewers_counts(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    write_set(tiny_gold)
    result = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out", RunOptions(answers="blind-a", matcher="reviewed"))
    m = result.metrics
    # by hand: 8 expected rows, 8 answer memories, 6 pairs (t01, t02, t03, t04-m1, t06, t07-m1)
    assert (m["counts/expected"], m["counts/predicted"], m["counts/matched"]) == (8, 8, 6)
    assert m["micro/recall"] == pytest.approx(6 / 8)
    assert m["micro/precision"] == pytest.approx(6 / 8)
    # factual: expected t01, t02, t07-m2; matched with factual on both sides: t01, t02
    assert m["recall/factual"] == pytest.approx(2 / 3)
    assert m["precision/factual"] == pytest.approx(1.0)
    # episodic: expected t05, t06; matched t06; predicted t04-A2, t05-A1, t06-A1
    assert m["recall/episodic"] == pytest.approx(1 / 2)
    assert m["precision/episodic"] == pytest.approx(1 / 3)
    # t07-m1 is procedural+behavioral, its answer procedural only: a pair, not an exact category set
    assert m["category_accuracy"] == pytest.approx(5 / 6)
    assert m["multilabel/exact_match"] == pytest.approx(0.0)
    assert m["supersession/recall"] == pytest.approx(1.0)
    assert m["negatives/false_positive_rate"] == pytest.approx(0.0)
    tags = MlflowClient(local_store).get_run(result.logged.run_id).data.tags
    assert tags["cassette_kind"] == "hand_written_blind"
    assert tags["answer_set"] == "blind-a"
    assert tags["matcher"] == "reviewed@1"
    assert tags["model"] == "hand-written"
    assert "HAND-WRITTEN answers (answer set 'blind-a'), not a model recording" in tags["mlflow.note.content"]
    assert "-blind-a" in tags["mlflow.runName"]
    assert "HAND-WRITTEN" in result.evidence


def test_a_pair_without_a_decision_fails_closed(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    decisions = {cid: d for cid, d in DECISIONS.items() if cid != "t05"}
    write_set(tiny_gold, decisions=decisions)
    with pytest.raises(
        MissingDecision,
        match=r"no reviewed decision for the pair A='User has a dentist appointment on 2026-03-06\.' B='User has a dentist appointment on Friday\.'",
    ):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out", RunOptions(answers="blind-a", matcher="reviewed"))


def test_a_decision_never_carries_over_to_another_answer(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    folder = write_set(tiny_gold)
    lines = (folder / "answers.jsonl").read_text().splitlines()
    row = json.loads(lines[2])
    row["memories"][0]["content"] = "User likes bullet points."
    lines[2] = json.dumps(row)
    (folder / "answers.jsonl").write_text("\n".join(lines) + "\n")
    write_answer_cassettes(tiny_gold, "blind-a")
    with pytest.raises(MissingDecision, match=r"decisions for 't03' were made on an answer with sha256"):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out", RunOptions(answers="blind-a", matcher="reviewed"))


def test_reviewed_needs_an_answer_set(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="add --answers SET"):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out", RunOptions(matcher="reviewed"))


def test_unknown_answer_set_names_the_known_ones(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    write_set(tiny_gold)
    with pytest.raises(GoldDataError, match=r"--answers 'blind-b'.*answer sets of .*: \['blind-a'\]"):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out", RunOptions(answers="blind-b"))
    with pytest.raises(GoldDataError, match="not an answer set name"):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out", RunOptions(answers="../v1"))


def test_answers_only_replay(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="use it with --mode cassette, smoke or fast, not --mode live"):
        run_eval(Mode.LIVE, tiny_gold, tmp_path / "out", RunOptions(answers="blind-a"))


def test_default_matcher_on_the_answer_set(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    """The same answers under the default matcher: a number of its own, with its own matcher tag."""
    write_set(tiny_gold)
    result = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out", RunOptions(answers="blind-a"))
    tags = MlflowClient(local_store).get_run(result.logged.run_id).data.tags
    assert tags["matcher"] == "fact-cover@2"
    assert result.metrics["counts/predicted"] == 8
    # t06 is equal to its gold row, so every matcher pairs it; t05 (no date) no matcher may pair
    rows = [json.loads(line) for line in (tmp_path / "out" / "per_conversation.jsonl").read_text().splitlines()]
    by_id = {r["conversation_id"]: r for r in rows}
    assert by_id["t06"]["counts"]["micro/recall"] == [1, 1]
    assert by_id["t05"]["counts"]["micro/recall"] == [0, 1]
