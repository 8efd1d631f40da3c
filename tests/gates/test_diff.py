"""``extraction-eval diff RUN_A RUN_B`` (docs/cli.md): the report's header, the conversations in
one run only, each run's own matcher explaining its side, a run's rows from its output folder or
its artifact, and the errors. The store is a stand-in reader; the flips themselves are
``_flips``' (tests/gates of that module), so their tables are compared with ``render_flips``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extraction_eval._exceptions import TrackingError
from extraction_eval.gates._diff import diff_runs
from extraction_eval.gates._flips import Flip, Side, render_flips
from extraction_eval.scoring import MATCHERS
from extraction_eval.scoring._matcher import explain
from extraction_eval.tracking import _client
from extraction_eval.tracking._reader import TrackedRun

VEGAN = {"memory_id": "c1-m1", "content": "User is vegan.", "categories": ["factual"], "temporal_kind": "durable"}


def row(cid: str, predicted: list[str], matched: bool, **extra: Any) -> dict[str, Any]:
    return {
        "conversation_id": cid,
        "expected": [VEGAN | {"memory_id": f"{cid}-m1", "supersedes": None}],
        "predicted": [
            {"content": p, "categories": ["factual"], "temporal_kind": "durable", "supersedes": None} for p in predicted
        ],
        "matches": (
            [
                {
                    "memory_id": f"{cid}-m1",
                    "predicted_index": 0,
                    "similarity": 1.0,
                    "category_ok": True,
                    "temporal_ok": True,
                }
            ]
            if matched
            else []
        ),
        **extra,
    }


def jsonl(*rows: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


class Reader:
    """The two calls diff makes of a tracking store, and whether it was closed."""

    def __init__(self, runs: dict[str, TrackedRun], artifacts: dict[str, str]) -> None:
        self.runs, self.artifacts, self.closed, self.uri = runs, artifacts, False, ""

    def get_run(self, run_id: str) -> TrackedRun | None:
        return self.runs.get(run_id)

    def read_artifact(self, run: TrackedRun, name: str) -> str | None:
        assert name == "per_conversation.jsonl"
        return self.artifacts.get(run.run_id)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Reader:
    runs = {
        "ra": TrackedRun("ra", "0", "FINISHED", 0, tags={"matcher": "keyed-dice@3"}),
        "rb": TrackedRun("rb", "0", "FINISHED", 0),  # no matcher tag: the default explains its side
    }
    reader = Reader(runs, {})

    def open_reader(uri: str) -> Reader:
        reader.uri = uri
        return reader

    monkeypatch.setattr(_client, "open_reader", open_reader)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:///somewhere/mlflow.db")
    return reader


def test_a_lost_memory_is_explained_by_each_runs_own_matcher(store: Reader) -> None:
    store.artifacts["ra"] = jsonl(row("c1", ["User is a vegan."], True), row("c2", [], False))
    store.artifacts["rb"] = jsonl(row("c1", ["User eats meat."], False), row("c3", [], False))
    found, report = diff_runs("ra", "rb")
    assert store.uri == "sqlite:///somewhere/mlflow.db" and store.closed
    keyed, default = MATCHERS["keyed-dice@3"], MATCHERS["fact-cover@2"]
    a_rule = explain(keyed, "User is vegan.", "User is a vegan.")[1]
    assert a_rule != explain(default, "User is vegan.", "User is a vegan.")[1]  # the matcher shows
    a = Side(True, "User is a vegan.", 1.0, a_rule)
    b_rule = explain(default, "User is vegan.", "User eats meat.")[1]
    assert b_rule != explain(keyed, "User is vegan.", "User eats meat.")[1]  # the matcher shows
    b = Side(False, "User eats meat.", 0.0, f"nearest prediction, unmatched: {b_rule}")
    assert found == [
        Flip(metric, "c1", "c1-m1", "User is vegan.", "lost", a, b)
        for metric in ("micro/recall", "strict/recall", "recall/factual")
    ]
    assert (
        report
        == "\n".join(
            [
                "## extraction-eval diff: A `ra` (keyed-dice@3) → B `rb` (?)",
                "",
                "gold ?: the runs share 1 conversation(s) (A has 2, B has 2); 3 flip(s) over the recall metrics "
                "on the shared ones (lost: matched in A, unmatched in B; gained: the reverse). On the unmatched "
                "side the nearest prediction is shown with the rule that refused it.",
                "",
                "In A only (not compared): c2.",
                "",
                "In B only (not compared): c3.",
                *render_flips(found, "A", "B"),
            ]
        )
        + "\n"
    )
    assert "### `micro/recall`: 1 lost, 0 gained" in report


def test_no_flip_and_at_most_20_conversations_named_as_in_one_run_only(store: Reader) -> None:
    store.artifacts["ra"] = jsonl(row("c1", ["User is vegan."], True), *(row(f"a{i:02}", [], False) for i in range(25)))
    store.artifacts["rb"] = jsonl(row("c1", ["User is vegan."], True))
    found, report = diff_runs("ra", "rb")
    named = [f"a{i:02}" for i in range(20)]
    assert found == []
    assert (
        report
        == "\n".join(
            [
                "## extraction-eval diff: A `ra` (keyed-dice@3) → B `rb` (?)",
                "",
                "gold ?: the runs share 1 conversation(s) (A has 26, B has 1); 0 flip(s) over the recall metrics "
                "on the shared ones (lost: matched in A, unmatched in B; gained: the reverse). On the unmatched "
                "side the nearest prediction is shown with the rule that refused it.",
                "",
                f"In A only (not compared) (20 of 25 shown): {', '.join(named)}.",
                "",
                "No expected memory flipped.",
            ]
        )
        + "\n"
    )
    # The other way round: the untagged run is A.
    assert diff_runs("rb", "ra")[1].startswith("## extraction-eval diff: A `rb` (?) → B `ra` (keyed-dice@3)\n")
    store.artifacts["ra"] = store.artifacts["rb"]
    _, same = diff_runs("ra", "rb")
    assert "only (not compared)" not in same and same.endswith("\n\nNo expected memory flipped.\n")


def test_two_runs_of_different_gold_versions(store: Reader) -> None:
    """Issue 22, point 4: the shared count names both versions; with nothing shared, exit 2 in one line."""
    from extraction_eval import CannotEvaluate

    store.runs["ra"] = TrackedRun("ra", "0", "FINISHED", 0, tags={"matcher": "fact-cover@2", "gold_version": "v1"})
    store.runs["rb"] = TrackedRun("rb", "0", "FINISHED", 0, tags={"matcher": "fact-cover@2", "gold_version": "v2"})
    store.artifacts["ra"] = jsonl(row("c1", ["User is vegan."], True), row("c2", [], False))
    store.artifacts["rb"] = jsonl(row("v2-a001", ["User is vegan."], True))
    with pytest.raises(
        CannotEvaluate,
        match=r"runs ra \(gold v1, 2 conversations\) and rb \(gold v2, 1 conversations\) share no conversation",
    ):
        diff_runs("ra", "rb")
    store.artifacts["rb"] = jsonl(row("c1", ["User is vegan."], True), row("v2-a001", [], False))
    _, report = diff_runs("ra", "rb")
    assert "gold v1 → gold v2: the runs share 1 conversation(s) (A has 2, B has 2)" in report


def test_a_runs_rows_come_from_the_output_folder_that_holds_it(store: Reader, tmp_path: Path) -> None:
    # Run A's artifact is not readable from here; its folder (run.json naming it) holds the file.
    (tmp_path / "run.json").write_text('{"run_id": "ra"}')
    (tmp_path / "per_conversation.jsonl").write_text(jsonl(row("c1", ["User is vegan."], True)))
    store.artifacts["rb"] = jsonl(row("c1", [], False))
    found, _ = diff_runs("ra", "rb", (tmp_path,))
    assert (found[0].metric, found[0].direction, found[0].b.rule) == (
        "micro/recall",
        "lost",
        "no prediction in this conversation",
    )
    # Run B's rows in a folder too: both sides read from folders, nothing from the store.
    other = tmp_path / "b"
    other.mkdir()
    (other / "run.json").write_text('{"run_id": "rb"}')
    (other / "per_conversation.jsonl").write_text(jsonl(row("c1", ["User is vegan."], True)))
    store.artifacts.clear()
    assert diff_runs("ra", "rb", (tmp_path, other))[0] == []


def test_rows_that_are_not_per_conversation_rows_are_a_tracking_error(store: Reader) -> None:
    store.artifacts["ra"] = jsonl(row("c1", [], False))
    store.artifacts["rb"] = '{"conversation_id": "c1"}\n[1, 2]\n'
    with pytest.raises(TrackingError) as caught:
        diff_runs("ra", "rb")
    assert str(caught.value) == (
        "run rb artifact per_conversation.jsonl line 2: not a per-conversation row (AttributeError); "
        "a per_conversation.jsonl is written by `extraction-eval run`."
    )
    store.artifacts["ra"], store.artifacts["rb"] = "not json\n", jsonl(row("c1", [], False))
    with pytest.raises(
        TrackingError, match=r"^run ra artifact per_conversation.jsonl line 1: .*\(JSONDecodeError\); a per"
    ):
        diff_runs("ra", "rb")


def test_an_unknown_run_is_an_error_and_the_store_is_closed(store: Reader) -> None:
    with pytest.raises(TrackingError, match="^run 'nope' is not in the tracking store"):
        diff_runs("ra", "nope")
    assert store.closed


def test_an_unregistered_matcher_tag_is_explained_by_the_default(store: Reader) -> None:
    store.runs["ra"] = TrackedRun("ra", "0", "FINISHED", 0, tags={"matcher": "retired@9"})
    store.artifacts["ra"] = jsonl(row("c1", ["User eats meat."], False))
    store.artifacts["rb"] = jsonl(row("c1", ["User is vegan."], True))
    found, report = diff_runs("ra", "rb")
    rule = explain(MATCHERS["fact-cover@2"], "User is vegan.", "User eats meat.")[1]
    assert found[0].direction == "gained" and found[0].a.rule == f"nearest prediction, unmatched: {rule}"
    assert report.startswith("## extraction-eval diff: A `ra` (retired@9) → B `rb` (?)\n")
