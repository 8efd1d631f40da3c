"""Every metric against numbers computed by hand."""

from __future__ import annotations

import math

import pytest

from extraction_eval.scoring import (
    DEFAULT_MATCHER,
    Case,
    ExpectedItem,
    FailureReason,
    Memory,
    Outcome,
    aggregate,
    score,
)
from extraction_eval.vocab import Category, TemporalKind

F, P, PR, B, E = (
    Category.FACTUAL,
    Category.PROCEDURAL,
    Category.PREFERENCE,
    Category.BEHAVIORAL,
    Category.EPISODIC,
)
DUR, CUR, PAST, FUT = TemporalKind.DURABLE, TemporalKind.CURRENT, TemporalKind.PAST, TemporalKind.FUTURE


def mem(content: str, cats: set[Category], kind: TemporalKind, supersedes: str | None = None) -> Memory:
    return Memory(content, frozenset(cats), kind, supersedes)


ALLERGY = "User is allergic to penicillin."
TESTS = "User always writes a failing test before fixing a bug."
LISBON, PORTO = "User lives in Lisbon.", "User lives in Porto."
DENTIST = "User has a dentist appointment on 2026-03-06."
BREAKFAST = "User usually skips breakfast on weekdays."


def mixed_cases() -> list[Case]:
    """Category, temporal, multi-label, supersession, stale-leak, negative and failure at once."""
    return [
        Case(
            "A",
            (ExpectedItem("a1", mem(ALLERGY, {F}, DUR)), ExpectedItem("a2", mem(TESTS, {P, B}, DUR))),
            Outcome(
                (
                    mem(ALLERGY, {F}, CUR),  # temporal wrong
                    mem(TESTS, {P}, DUR),  # category set wrong (multi-label missed)
                    mem("User likes jazz.", {PR}, DUR),  # spurious
                )
            ),
        ),
        Case(
            "B",
            (ExpectedItem("b1", mem(LISBON, {F}, CUR, PORTO)),),
            Outcome((mem(LISBON, {F}, CUR, PORTO), mem(PORTO, {F}, CUR))),  # hit + stale leak
        ),
        Case("C", (ExpectedItem("c1", mem(DENTIST, {E}, FUT)),), Outcome.failed(FailureReason.INVALID_JSON, "x")),
        Case("D", (), Outcome((mem("User asked about the capital of France.", {E}, PAST),))),
        Case("E", (), Outcome(())),
        Case(
            "F",
            (ExpectedItem("f1", mem(BREAKFAST, {B}, CUR)),),
            Outcome((mem(BREAKFAST, {B}, CUR, "User eats breakfast daily."),)),  # spurious supersedes
        ),
    ]


def test_mixed_case_every_metric_by_hand() -> None:
    m = score(mixed_cases(), DEFAULT_MATCHER).metrics
    expected = {
        # factual: pairs a1-p1, b1-q1 = 2; predicted F = p1, q1, q2 = 3; expected F = a1, b1 = 2
        "precision/factual": 2 / 3,
        "recall/factual": 1.0,
        "f1/factual": 0.8,
        "precision/procedural": 1.0,
        "recall/procedural": 1.0,
        "f1/procedural": 1.0,
        # preference: one spurious prediction, nothing expected -> both 0.0
        "precision/preference": 0.0,
        "recall/preference": 0.0,
        "f1/preference": 0.0,
        # behavioral: only f1-s1 carries B on both sides; expected B = a2, f1
        "precision/behavioral": 1.0,
        "recall/behavioral": 0.5,
        "f1/behavioral": 2 / 3,
        # episodic: c1 failed, r1 is a false positive
        "precision/episodic": 0.0,
        "recall/episodic": 0.0,
        "f1/episodic": 0.0,
        "macro/precision": (2 / 3 + 1 + 0 + 1 + 0) / 5,
        "macro/recall": (1 + 1 + 0 + 0.5 + 0) / 5,
        "macro/f1": (0.8 + 1 + 0 + 2 / 3 + 0) / 5,
        "micro/precision": 4 / 7,
        "micro/recall": 4 / 5,
        "strict/precision": 2 / 7,
        "strict/recall": 2 / 5,
        "category_accuracy": 3 / 4,
        "temporal_accuracy": 3 / 4,
        "category_accuracy/factual": 1.0,
        "temporal_accuracy/factual": 0.5,
        "category_accuracy/procedural": 0.0,
        "temporal_accuracy/procedural": 1.0,
        "category_accuracy/behavioral": 0.5,
        "temporal_accuracy/behavioral": 1.0,
        "multilabel/exact_match": 0.0,
        "supersession/recall": 1.0,
        "supersession/stale_leak_rate": 1.0,
        "negatives/false_positive_rate": 0.5,
        "failures/rate": 1 / 6,
        "counts/expected": 5,
        "counts/predicted": 7,
        "counts/matched": 4,
        "counts/failed": 1,
        "counts/spurious_supersedes": 1,
        "counts/conversations": 6,
        "counts/multi_label": 1,
        "counts/supersession": 1,
        "counts/negative_conversations": 2,
        "counts/matched/factual": 2,
        "counts/matched/procedural": 1,
        "counts/matched/preference": 0,
        "counts/matched/behavioral": 2,
        "counts/matched/episodic": 0,
    }
    assert set(m) == set(expected), set(m) ^ set(expected)
    for key, value in expected.items():
        assert m[key] == pytest.approx(value), key


def test_accuracy_over_zero_cases_is_not_logged_but_its_count_is() -> None:
    m = score(mixed_cases(), DEFAULT_MATCHER).metrics
    for category in ("preference", "episodic"):
        assert f"category_accuracy/{category}" not in m
        assert f"temporal_accuracy/{category}" not in m
        assert m[f"counts/matched/{category}"] == 0


def test_zero_denominators_nothing_expected_nothing_predicted_is_perfect() -> None:
    m = aggregate(list(score([Case("N", (), Outcome(()))], DEFAULT_MATCHER).conversations))
    for category in Category:
        assert m[f"precision/{category.value}"] == 1.0
        assert m[f"recall/{category.value}"] == 1.0
        assert m[f"f1/{category.value}"] == 1.0
    assert m["micro/precision"] == m["micro/recall"] == 1.0
    assert m["negatives/false_positive_rate"] == 0.0
    for absent in ("category_accuracy", "temporal_accuracy", "multilabel/exact_match", "supersession/recall"):
        assert absent not in m
    assert m["counts/supersession"] == 0


def test_zero_denominators_expected_but_nothing_predicted_is_zero() -> None:
    case = Case("X", (ExpectedItem("x1", mem(ALLERGY, {F}, DUR)),), Outcome(()))
    m = score([case], DEFAULT_MATCHER).metrics
    assert m["precision/factual"] == 0.0  # nothing predicted, but something expected
    assert m["recall/factual"] == 0.0
    assert m["f1/factual"] == 0.0
    assert m["precision/episodic"] == 1.0  # neither side has episodic


def test_run_over_zero_conversations_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"^a run over zero conversations has no metrics$"):
        score([], DEFAULT_MATCHER)


def test_perfect_predictions_score_one_everywhere() -> None:
    expected = (ExpectedItem("a1", mem(ALLERGY, {F}, DUR)), ExpectedItem("a2", mem(TESTS, {P, B}, DUR)))
    case = Case("A", expected, Outcome(tuple(e.memory for e in expected)))
    m = score([case], DEFAULT_MATCHER).metrics
    assert m["macro/precision"] == m["macro/recall"] == m["strict/recall"] == 1.0
    assert m["multilabel/exact_match"] == 1.0
    assert not any(math.isnan(v) for v in m.values())


def test_one_to_one_matching_never_reuses_a_prediction() -> None:
    # Two expected memories, one prediction that equals the first: one pair, not two.
    case = Case(
        "A",
        (ExpectedItem("a1", mem(LISBON, {F}, CUR)), ExpectedItem("a2", mem("User lives in Lisbon now.", {F}, CUR))),
        Outcome((mem(LISBON, {F}, CUR),)),
    )
    result = score([case], DEFAULT_MATCHER)
    assert result.metrics["counts/matched"] == 1
    (pair,) = result.conversations[0].pairs
    assert pair.expected.memory_id == "a1" and pair.similarity == 1.0


def test_hungarian_prefers_the_assignment_with_the_larger_total() -> None:
    # Greedy on the first expected row would steal the exact twin of the second.
    e1 = "User drinks green tea every morning."
    e2 = "User drinks green tea every morning at work."
    p1 = "User drinks green tea every morning at work."
    p2 = "User drinks tea every morning."
    case = Case(
        "A",
        (ExpectedItem("e1", mem(e1, {B}, CUR)), ExpectedItem("e2", mem(e2, {B}, CUR))),
        Outcome((mem(p1, {B}, CUR), mem(p2, {B}, CUR))),
    )
    pairs = {p.expected.memory_id: p.predicted_index for p in score([case], DEFAULT_MATCHER).conversations[0].pairs}
    assert pairs == {"e1": 1, "e2": 0}


def test_failed_conversation_keeps_its_reason_in_the_detail() -> None:
    result = score(mixed_cases(), DEFAULT_MATCHER)
    row = next(c for c in result.conversations if c.conversation_id == "C").to_json()
    counts: dict[str, list[int]] = {
        f"{kind}/{c.value}": [0, 0]
        for kind in ("precision", "recall", "category_accuracy", "temporal_accuracy")
        for c in Category
    }
    for key in ("micro/precision", "strict/precision", "category_accuracy", "temporal_accuracy"):
        counts[key] = [0, 0]
    for key in ("multilabel/exact_match", "supersession/recall", "supersession/stale_leak_rate"):
        counts[key] = [0, 0]
    counts.update(
        {
            "recall/episodic": [0, 1],
            "micro/recall": [0, 1],
            "strict/recall": [0, 1],
            "negatives/false_positive_rate": [0, 0],
            "failures/rate": [1, 1],
        }
    )
    assert row == {
        "conversation_id": "C",
        "status": "failed",
        "failure_reason": "invalid_json",
        "error": "x",
        "expected": [
            {
                "memory_id": "c1",
                "content": DENTIST,
                "categories": ["episodic"],
                "temporal_kind": "future",
                "supersedes": None,
            }
        ],
        "predicted": [],
        "matches": [],
        "missed": ["c1"],
        "spurious": [],
        "supersession_hits": [],
        "stale_leaks": [],
        "counts": dict(sorted(counts.items())),
    }


def test_one_empty_conversation_every_metric() -> None:
    # contract: a precision or recall over nothing expected and nothing predicted is 1.0 (strict too)
    m = score([Case("N", (), Outcome(()))], DEFAULT_MATCHER).metrics
    cats = [c.value for c in Category]
    assert m == {
        **{f"{kind}/{c}": 1.0 for kind in ("precision", "recall", "f1") for c in cats},
        **{f"counts/matched/{c}": 0.0 for c in cats},
        "macro/precision": 1.0,
        "macro/recall": 1.0,
        "macro/f1": 1.0,
        "micro/precision": 1.0,
        "micro/recall": 1.0,
        "strict/precision": 1.0,
        "strict/recall": 1.0,
        "negatives/false_positive_rate": 0.0,
        "failures/rate": 0.0,
        "counts/multi_label": 0.0,
        "counts/supersession": 0.0,
        "counts/negative_conversations": 1.0,
        "counts/conversations": 1.0,
        "counts/expected": 0.0,
        "counts/predicted": 0.0,
        "counts/matched": 0.0,
        "counts/failed": 0.0,
        "counts/spurious_supersedes": 0.0,
    }


def supersession_case() -> Case:
    """A lone correct supersession, a pair with the wrong temporal kind, and a spurious prediction."""
    return Case(
        "S",
        (ExpectedItem("s1", mem(LISBON, {F}, CUR, PORTO)), ExpectedItem("s2", mem(ALLERGY, {F}, DUR))),
        Outcome((mem(ALLERGY, {F}, CUR), mem(LISBON, {F}, CUR, PORTO), mem("User likes jazz.", {PR}, DUR))),
    )


def test_a_correct_supersession_is_not_a_spurious_supersedes() -> None:
    # contract: counts/spurious_supersedes counts predictions naming a supersedes where their matched
    # expected memory has none; a matched expected memory that supersedes something is not one.
    m = score([supersession_case()], DEFAULT_MATCHER).metrics
    assert (m["counts/spurious_supersedes"], m["supersession/recall"], m["supersession/stale_leak_rate"]) == (
        0.0,
        1.0,
        0.0,
    )


def test_the_detail_row_of_an_ok_conversation_whole() -> None:
    (scored,) = score([supersession_case()], DEFAULT_MATCHER).conversations
    counts: dict[str, list[int]] = {
        f"{kind}/{c.value}": [0, 0]
        for kind in ("precision", "recall", "category_accuracy", "temporal_accuracy")
        for c in Category
    }
    counts.update(
        {
            "precision/factual": [2, 2],
            "recall/factual": [2, 2],
            "category_accuracy/factual": [2, 2],
            "temporal_accuracy/factual": [1, 2],  # s2: durable expected, current predicted
            "precision/preference": [0, 1],
            "micro/precision": [2, 3],
            "micro/recall": [2, 2],
            "strict/precision": [1, 3],
            "strict/recall": [1, 2],
            "category_accuracy": [2, 2],
            "temporal_accuracy": [1, 2],
            "multilabel/exact_match": [0, 0],
            "supersession/recall": [1, 1],
            "supersession/stale_leak_rate": [0, 1],
            "negatives/false_positive_rate": [0, 0],
            "failures/rate": [0, 1],
        }
    )
    assert scored.to_json() == {
        "conversation_id": "S",
        # docs/data-format.md: both expected rows matched, but s2's temporal kind is wrong and one
        # prediction is spurious, so the conversation is `partial`, not `all_matched`
        "status": "partial",
        "failure_reason": None,
        "error": None,
        "expected": [
            {
                "memory_id": "s1",
                "content": LISBON,
                "categories": ["factual"],
                "temporal_kind": "current",
                "supersedes": PORTO,
            },
            {
                "memory_id": "s2",
                "content": ALLERGY,
                "categories": ["factual"],
                "temporal_kind": "durable",
                "supersedes": None,
            },
        ],
        "predicted": [
            {"content": ALLERGY, "categories": ["factual"], "temporal_kind": "current", "supersedes": None},
            {"content": LISBON, "categories": ["factual"], "temporal_kind": "current", "supersedes": PORTO},
            {
                "content": "User likes jazz.",
                "categories": ["preference"],
                "temporal_kind": "durable",
                "supersedes": None,
            },
        ],
        "matches": [
            {"memory_id": "s1", "predicted_index": 1, "similarity": 1.0, "category_ok": True, "temporal_ok": True},
            {"memory_id": "s2", "predicted_index": 0, "similarity": 1.0, "category_ok": True, "temporal_ok": False},
        ],
        "missed": [],
        "spurious": [2],
        "supersession_hits": ["s1"],
        "stale_leaks": [],
        "counts": dict(sorted(counts.items())),
    }


def test_duplicate_predictions_with_different_labels_the_first_is_matched() -> None:
    # equal totals: the assignment is deterministic and takes the lowest-index prediction, so the
    # order of two equal texts, not chance, decides which labels are judged.
    expected = (ExpectedItem("a1", mem(ALLERGY, {F}, DUR)),)
    right, wrong = mem(ALLERGY, {F}, DUR), mem(ALLERGY, {E}, PAST)

    def judged(predictions: tuple[Memory, ...]) -> tuple[float, float, list[int]]:
        result = score([Case("A", expected, Outcome(predictions))], DEFAULT_MATCHER)
        m = result.metrics
        return (
            m["category_accuracy"],
            m["temporal_accuracy"],
            [p.predicted_index for p in result.conversations[0].pairs],
        )

    assert judged((right, wrong)) == (1.0, 1.0, [0])
    assert judged((wrong, right)) == (0.0, 0.0, [0])


# docs/data-format.md, per_conversation.jsonl `status`: what happened, one value per case
_ONE = (ExpectedItem("x1", mem(ALLERGY, {F}, DUR)),)
_TWO = (ExpectedItem("x1", mem(ALLERGY, {F}, DUR)), ExpectedItem("x2", mem(LISBON, {F}, CUR)))


@pytest.mark.parametrize(
    ("expected", "outcome", "status"),
    [
        (_ONE, Outcome((mem(ALLERGY, {F}, DUR),)), "all_matched"),
        (_TWO, Outcome((mem(ALLERGY, {F}, DUR), mem(LISBON, {F}, CUR))), "all_matched"),
        (_TWO, Outcome((mem(ALLERGY, {F}, DUR),)), "partial"),  # one expected missed
        (_ONE, Outcome((mem(ALLERGY, {F}, DUR), mem("User likes jazz.", {PR}, DUR))), "partial"),  # spurious
        (_ONE, Outcome((mem(ALLERGY, {PR}, DUR),)), "partial"),  # matched, category wrong
        (_ONE, Outcome((mem(ALLERGY, {F}, CUR),)), "partial"),  # matched, temporal kind wrong
        (_ONE, Outcome(()), "all_missed"),
        (_ONE, Outcome((mem("User likes jazz.", {PR}, DUR),)), "all_missed"),  # predicted, none matched
        ((), Outcome(()), "negative_ok"),
        ((), Outcome((mem("User likes jazz.", {PR}, DUR),)), "false_positive"),
        (_ONE, Outcome.failed(FailureReason.INVALID_JSON, "x"), "failed"),
        ((), Outcome.failed(FailureReason.INVALID_JSON, "x"), "failed"),  # a failure is never negative_ok
    ],
)
def test_every_conversation_status(expected: tuple[ExpectedItem, ...], outcome: Outcome, status: str) -> None:
    (scored,) = score([Case("X", expected, outcome)], DEFAULT_MATCHER).conversations
    assert scored.to_json()["status"] == status
