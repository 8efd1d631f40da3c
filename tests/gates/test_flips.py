"""What flipped between two runs (gates/_flips.py; docs/matcher.md, "Re-scoring a run, and what
flipped"): pure functions over per_conversation.jsonl rows, every expected value written by hand.
`extraction-eval diff` and the gate report on real runs are tests/pipeline/test_rescore.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from extraction_eval.gates._flips import RECALL_KEYS, Flip, Side, flips, parse_rows, recall_key_for, render_flips

LISBON, TEA, RUNS, CAT = "User lives in Lisbon.", "User likes tea.", "User runs 5 km.", "User has a cat."


class _Lookup:
    """A matcher that explains itself from a table: (similarity, rule) per (expected, predicted)."""

    threshold = 0.5

    def __init__(self, name: str, table: dict[tuple[str, str], tuple[float, str]]) -> None:
        self.name, self.version, self.table = name, "1", table

    def similarity(self, a: str, b: str) -> float:
        return self.explain(a, b)[0]

    def explain(self, a: str, b: str) -> tuple[float, str]:
        return self.table.get((a, b), (0.0, f"{self.name}: nothing shared"))


def _expected(mid: str, content: str, *categories: str) -> dict[str, Any]:
    return {"memory_id": mid, "content": content, "categories": sorted(categories), "temporal_kind": "current"}


def _predicted(content: str, *categories: str) -> dict[str, Any]:
    return {"content": content, "categories": sorted(categories), "temporal_kind": "current", "supersedes": None}


def _match(mid: str, index: int, similarity: float, category_ok: bool = True, temporal_ok: bool = True) -> dict:
    return {
        "memory_id": mid,
        "predicted_index": index,
        "similarity": similarity,
        "category_ok": category_ok,
        "temporal_ok": temporal_ok,
    }


def _row(cid: str, expected: list, predicted: list, matches: list, failure: str | None = None) -> dict[str, Any]:
    return {
        "conversation_id": cid,
        "failure_reason": failure,
        "expected": expected,
        "predicted": predicted,
        "matches": matches,
    }


C1_EXPECTED = [_expected("m1", LISBON, "factual"), _expected("m2", TEA, "behavioral", "preference")]
# Run A. c1: m1 matched by a prediction with its category; m2 matched with the wrong categories by a
# prediction that carries preference, not behavioral. c2 failed. c3 predicted nothing. c4 is only in A.
A = {
    "c3": _row("c3", [_expected("m4", CAT, "factual")], [], []),
    "c2": _row("c2", [_expected("m3", RUNS, "behavioral")], [], [], failure="invalid_json"),
    "c1": _row(
        "c1",
        C1_EXPECTED,
        [_predicted("User lives in Lisbon now.", "factual"), _predicted("User enjoys tea.", "preference")],
        [_match("m1", 0, 0.9), _match("m2", 1, 0.8, category_ok=False)],
    ),
    "c4": _row("c4", [_expected("m5", CAT, "factual")], [], []),
}
# Run B. c1: m1 unmatched (two predictions near it); m2 matched with every label, by a prediction with
# both its categories. c2 and c3 matched. c5 is only in B.
B = {
    "c1": _row(
        "c1",
        C1_EXPECTED,
        [_predicted("User resides in Lisbon.", "episodic"), _predicted("User enjoys tea.", "behavioral", "preference")],
        [_match("m2", 1, 0.7)],
    ),
    "c2": _row("c2", [_expected("m3", RUNS, "behavioral")], [_predicted("User runs 5 km daily.", "behavioral")], []),
    "c3": _row("c3", [_expected("m4", CAT, "factual")], [_predicted("User has a cat named Tom.", "factual")], []),
    "c5": _row("c5", [_expected("m6", CAT, "factual")], [], []),
}
B["c2"]["matches"] = [_match("m3", 0, 0.95, temporal_ok=False)]
B["c3"]["matches"] = [_match("m4", 0, 0.85)]

MATCHER_A = _Lookup(
    "a", {(LISBON, "User lives in Lisbon now."): (0.9, "a: dice 0.900"), (TEA, "User enjoys tea."): (0.8, "a: tea")}
)
# The nearest prediction to m1 in B is the one of higher similarity, whatever its rule's spelling.
MATCHER_B = _Lookup(
    "b",
    {
        (LISBON, "User resides in Lisbon."): (0.4, "b: dice 0.400"),
        (LISBON, "User enjoys tea."): (0.1, "b: substitution"),
        (TEA, "User enjoys tea."): (0.7, "b: tea"),
        (RUNS, "User runs 5 km daily."): (0.95, "b: runs"),
        (CAT, "User has a cat named Tom."): (0.85, "b: cat"),
    },
)

M1_A = Side(True, "User lives in Lisbon now.", 0.9, "a: dice 0.900")
M1_B = Side(False, "User resides in Lisbon.", 0.4, "nearest prediction, unmatched: b: dice 0.400")
M2_A = Side(True, "User enjoys tea.", 0.8, "a: tea")
M2_B = Side(True, "User enjoys tea.", 0.7, "b: tea")
M3_A = Side(False, None, None, "the conversation failed (invalid_json)")
M3_B = Side(True, "User runs 5 km daily.", 0.95, "b: runs")
M4_A = Side(False, None, None, "no prediction in this conversation")
M4_B = Side(True, "User has a cat named Tom.", 0.85, "b: cat")


def _flip(metric: str, cid: str, mid: str, text: str, direction: str, a: Side, b: Side) -> Flip:
    return Flip(metric, cid, mid, text, direction, a, b)


def test_every_flip_per_recall_metric_with_both_sides() -> None:
    # Hits in A: micro {c1 m1, m2}; strict {c1 m1} (m2's categories wrong); recall/factual {c1 m1};
    # recall/preference {c1 m2}; recall/behavioral none (m2's prediction lacks it; c2 failed).
    # Hits in B: micro {c1 m2, c2 m3, c3 m4}; strict {c1 m2, c3 m4} (m3's temporal kind wrong);
    # recall/factual {c3 m4}; recall/preference {c1 m2}; recall/behavioral {c1 m2, c2 m3}.
    # Conversations in one run only (c4, c5) are not compared; metrics in RECALL_KEYS' order, then
    # conversations, then memories, each sorted.
    assert flips(A, B, MATCHER_A, MATCHER_B) == [
        _flip("micro/recall", "c1", "m1", LISBON, "lost", M1_A, M1_B),
        _flip("micro/recall", "c2", "m3", RUNS, "gained", M3_A, M3_B),
        _flip("micro/recall", "c3", "m4", CAT, "gained", M4_A, M4_B),
        _flip("strict/recall", "c1", "m1", LISBON, "lost", M1_A, M1_B),
        _flip("strict/recall", "c1", "m2", TEA, "gained", M2_A, M2_B),
        _flip("strict/recall", "c3", "m4", CAT, "gained", M4_A, M4_B),
        _flip("recall/factual", "c1", "m1", LISBON, "lost", M1_A, M1_B),
        _flip("recall/factual", "c3", "m4", CAT, "gained", M4_A, M4_B),
        _flip("recall/behavioral", "c1", "m2", TEA, "gained", M2_A, M2_B),
        _flip("recall/behavioral", "c2", "m3", RUNS, "gained", M3_A, M3_B),
    ]
    assert RECALL_KEYS == (
        "micro/recall",
        "strict/recall",
        "recall/factual",
        "recall/procedural",
        "recall/preference",
        "recall/behavioral",
        "recall/episodic",
    )


def test_from_b_to_a_every_flip_turns_around() -> None:
    back = flips(B, A, MATCHER_B, MATCHER_A, ["strict/recall"])
    assert [(f.memory_id, f.direction) for f in back] == [("m1", "gained"), ("m2", "lost"), ("m4", "lost")]
    assert (back[0].a, back[0].b) == (M1_B, M1_A)


def test_only_the_recall_metrics_asked_for_in_the_order_asked() -> None:
    found = flips(A, B, MATCHER_A, MATCHER_B, ["recall/factual", "micro/f1", "micro/recall", "recall/unknown"])
    assert [(f.metric, f.conversation_id) for f in found] == [
        ("recall/factual", "c1"),
        ("recall/factual", "c3"),
        ("micro/recall", "c1"),
        ("micro/recall", "c2"),
        ("micro/recall", "c3"),
    ]
    assert flips(A, B, MATCHER_A, MATCHER_B, ["micro/f1"]) == []


def test_a_match_needs_category_and_temporal_kind_for_strict_recall() -> None:
    def strict_hits(category_ok: bool | None, temporal_ok: bool | None) -> list[Flip]:
        match = {"memory_id": "m4", "predicted_index": 0, "similarity": 0.85}
        match |= {k: v for k, v in (("category_ok", category_ok), ("temporal_ok", temporal_ok)) if v is not None}
        b = {"c3": {**B["c3"], "matches": [match]}}
        return flips({"c3": A["c3"]}, b, MATCHER_A, MATCHER_B, ["strict/recall"])

    assert [f.direction for f in strict_hits(True, True)] == ["gained"]
    for labels in ((True, False), (False, True), (True, None), (None, True), (None, None)):
        assert strict_hits(*labels) == []


def test_no_prediction_and_failure_read_from_the_record() -> None:
    # A failed conversation says so even if it kept predictions; no predictions at all otherwise.
    a = {"c1": {**A["c1"], "failure_reason": "length", "matches": []}}
    (lost,) = flips({"c1": B["c1"]}, a, MATCHER_B, MATCHER_A, ["micro/recall"])
    assert lost.b == Side(False, None, None, "the conversation failed (length)")
    a = {"c1": {**A["c1"], "predicted": [], "matches": []}}
    (lost,) = flips({"c1": B["c1"]}, a, MATCHER_B, MATCHER_A, ["micro/recall"])
    assert lost.b == Side(False, None, None, "no prediction in this conversation")


def test_parse_rows_keeps_sample_0_by_conversation_id() -> None:
    rows = [
        {"conversation_id": "c1", "sample": 0, "n": 1},
        {"conversation_id": "c1", "sample": 1, "n": 2},  # a --repeat run's second sample
        {"conversation_id": 7, "n": 3},  # a single-sample run has no sample field
    ]
    text = "\n".join(json.dumps(r) for r in rows[:2]) + "\n\n  \n" + json.dumps(rows[2]) + "\n"
    assert parse_rows(text, "run r1 per_conversation.jsonl") == {"c1": rows[0], "7": rows[2]}
    assert parse_rows("", "x") == {}


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("{not json", "JSONDecodeError"),
        ('{"sample": 0}', "KeyError"),  # no conversation_id
        ("[1, 2]", "AttributeError"),  # not an object
    ],
)
def test_parse_rows_names_the_source_and_line_of_a_bad_row(line: str, error: str) -> None:
    text = json.dumps({"conversation_id": "c1"}) + "\n\n" + line + "\n"
    with pytest.raises(ValueError) as raised:
        parse_rows(text, "baseline run r0 per_conversation.jsonl")
    assert str(raised.value) == f"baseline run r0 per_conversation.jsonl line 3: not a per-conversation row ({error})"


@pytest.mark.parametrize(
    ("metric", "recall"),
    [
        ("recall/factual", "recall/factual"),
        ("precision/episodic", "recall/episodic"),
        ("f1/procedural", "recall/procedural"),
        ("strict/f1", "strict/recall"),
        ("strict/precision", "strict/recall"),
        ("macro/f1", "micro/recall"),
        ("micro/precision", "micro/recall"),
        ("supersession/recall", "micro/recall"),
        ("category_accuracy", "micro/recall"),  # no "/": the whole key is its last part
        ("temporal_accuracy", "micro/recall"),
        ("category_accuracy/episodic", "recall/episodic"),
        ("counts/matched/factual", "recall/factual"),  # the category is the last part
    ],
)
def test_the_recall_a_failing_metric_is_read_through(metric: str, recall: str) -> None:
    assert recall_key_for(metric) == recall


def test_render_one_table_per_metric_in_the_order_found() -> None:
    found = flips(A, B, MATCHER_A, MATCHER_B, ["strict/recall", "recall/factual"])
    header = (
        "| conversation | memory | flip | expected | baseline prediction | sim | rule | run prediction | sim | rule |"
    )
    rule = "| --- | --- | --- | --- | --- | ---: | --- | --- | ---: | --- |"
    assert render_flips(found, "baseline", "run") == [
        "",
        "### `strict/recall`: 1 lost, 2 gained",
        "",
        header,
        rule,
        "| c1 | m1 | lost | User lives in Lisbon. | User lives in Lisbon now. | 0.900 | a: dice 0.900 | "
        "User resides in Lisbon. | 0.400 | nearest prediction, unmatched: b: dice 0.400 |",
        "| c1 | m2 | gained | User likes tea. | User enjoys tea. | 0.800 | a: tea | User enjoys tea. | 0.700 | b: tea |",
        "| c3 | m4 | gained | User has a cat. | — | — | no prediction in this conversation | "
        "User has a cat named Tom. | 0.850 | b: cat |",
        "",
        "### `recall/factual`: 1 lost, 1 gained",
        "",
        header,
        rule,
        "| c1 | m1 | lost | User lives in Lisbon. | User lives in Lisbon now. | 0.900 | a: dice 0.900 | "
        "User resides in Lisbon. | 0.400 | nearest prediction, unmatched: b: dice 0.400 |",
        "| c3 | m4 | gained | User has a cat. | — | — | no prediction in this conversation | "
        "User has a cat named Tom. | 0.850 | b: cat |",
    ]
    assert render_flips([], "A", "B") == []


def test_a_table_cell_escapes_pipes_and_joins_lines() -> None:
    side = Side(True, "a | b\nc", 0.12345, "rule | x")
    flip = Flip("micro/recall", "c1", "m1", "x\ny", "lost", side, Side(False, None, None, "gone"))
    assert render_flips([flip], "A", "B")[-1] == (
        "| c1 | m1 | lost | x y | a \\| b c | 0.123 | rule \\| x | — | — | gone |"
    )


def test_a_memory_only_run_b_lists_shows_b_s_text() -> None:
    # c3's gold row gained m9 between the runs (a corrected gold folder of the same version)
    m9 = _expected("m9", "User has a dog.", "factual")
    b = {"c3": {**B["c3"], "expected": [*B["c3"]["expected"], m9], "matches": [_match("m9", 0, 0.85)]}}
    (gained,) = flips({"c3": A["c3"]}, b, MATCHER_A, MATCHER_B, ["micro/recall"])
    assert (gained.memory_id, gained.expected, gained.direction) == ("m9", "User has a dog.", "gained")
    assert gained.a == M4_A  # A predicted nothing
    # a memory both rows list keeps A's text
    b = {"c1": {**B["c1"], "expected": [_expected("m1", "User lives in Lisbon (B).", "factual"), C1_EXPECTED[1]]}}
    assert flips(A, b, MATCHER_A, MATCHER_B, ["micro/recall"])[0].expected == LISBON


def test_the_parts_a_row_leaves_out_read_as_empty() -> None:
    # parse_rows needs a conversation id only: a row without expected, predicted or matches has no
    # hit and no prediction; a memory without categories counts for no category; a match naming a
    # memory neither row lists still counts for micro and strict recall, with no text.
    a = parse_rows(json.dumps({"conversation_id": "c3"}), "A")
    b_row = {
        "conversation_id": "c3",
        "expected": [{"memory_id": "m4", "content": CAT}],
        "predicted": [{"content": "User has a cat named Tom."}],
        "matches": [_match("m4", 0, 0.85), _match("m7", 0, 0.5)],
    }
    found = flips(a, {"c3": b_row}, MATCHER_A, MATCHER_B)
    assert [(f.metric, f.memory_id, f.expected, f.direction) for f in found] == [
        ("micro/recall", "m4", CAT, "gained"),
        ("micro/recall", "m7", "", "gained"),
        ("strict/recall", "m4", CAT, "gained"),
        ("strict/recall", "m7", "", "gained"),
    ]
    assert found[0].a == Side(False, None, None, "no prediction in this conversation")
    assert found[0].b == M4_B
    assert found[1].b == Side(True, "User has a cat named Tom.", 0.5, "b: nothing shared")
    # the other way round: the row with nothing matched is B's
    assert [f.direction for f in flips({"c3": b_row}, a, MATCHER_B, MATCHER_A)] == ["lost"] * 4


def test_the_nearest_prediction_is_the_most_similar_and_the_first_of_equals() -> None:
    expected = [_expected("m1", LISBON, "factual")]
    predicted = [_predicted("Also Lisbon."), _predicted("User moved to Lisbon."), _predicted("Lisbon, again.")]
    a = {"c1": _row("c1", expected, [_predicted(LISBON, "factual")], [_match("m1", 0, 1.0)])}
    b = {"c1": _row("c1", expected, predicted, [])}

    def nearest(table: dict[tuple[str, str], tuple[float, str]]) -> Side:
        (lost,) = flips(a, b, MATCHER_A, _Lookup("b", table), ["micro/recall"])
        return lost.b

    # the most similar, though neither first in the answer nor last in spelling
    side = nearest({(LISBON, p["content"]): (s, "r") for p, s in zip(predicted, (0.2, 0.3, 0.45), strict=True)})
    assert side == Side(False, "Lisbon, again.", 0.45, "nearest prediction, unmatched: r")
    # of equally similar predictions, the first in the answer, whatever the rules say
    table = {(LISBON, p["content"]): (0.3, r) for p, r in zip(predicted, ("a", "c", "b"), strict=True)}
    assert nearest(table) == Side(False, "Also Lisbon.", 0.3, "nearest prediction, unmatched: a")
    table = {(LISBON, p["content"]): (0.3, r) for p, r in zip(predicted, ("c", "a", "b"), strict=True)}
    assert nearest(table) == Side(False, "Also Lisbon.", 0.3, "nearest prediction, unmatched: c")
