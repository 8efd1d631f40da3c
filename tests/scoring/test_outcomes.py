"""Each memory's outcome, in the words of ``per_memory_table.json`` and the ``outcomes`` counts
of ``per_conversation.jsonl`` (docs/tracking-reference.md, docs/data-format.md): one row per
expected memory (matched or missed) and per spurious prediction, every column written out by hand."""

from __future__ import annotations

from extraction_eval.scoring import (
    Case,
    ConversationScore,
    ExpectedItem,
    FailureReason,
    MatchedPair,
    Memory,
    MemoryOutcome,
    Outcome,
    memory_rows,
    outcome_counts,
)
from extraction_eval.vocab import Category, TemporalKind

F, P, B = Category.FACTUAL, Category.PREFERENCE, Category.BEHAVIORAL
DURABLE, CURRENT, PAST = TemporalKind.DURABLE, TemporalKind.CURRENT, TemporalKind.PAST


def memory(content: str, categories: set[Category], kind: TemporalKind) -> Memory:
    return Memory(content=content, categories=frozenset(categories), temporal_kind=kind)


EXPECTED = (
    ExpectedItem("c1-m1", memory("User is vegan.", {F, P}, DURABLE)),
    ExpectedItem("c1-m2", memory("User runs on Sundays.", {B}, CURRENT)),
    ExpectedItem("c1-m3", memory("User lives in Lyon.", {F}, CURRENT)),
    ExpectedItem("c1-m4", memory("User has a cat.", {F}, DURABLE)),
    ExpectedItem("c1-m5", memory("User sold the car.", {F}, PAST)),
)
PREDICTED = (
    memory("User lives in Lyon.", {F}, PAST),  # m3: right categories, wrong temporal kind
    memory("User is a vegan.", {P, F}, DURABLE),  # m1: all right
    memory("User likes jazz.", {P}, DURABLE),  # spurious
    memory("User runs every Sunday.", {P}, PAST),  # m2: both wrong -> category_mismatch
    memory("User has a cat.", {F}, CURRENT),  # m4: right categories, wrong temporal kind
    memory("User drinks tea.", {P, B}, CURRENT),  # spurious
)


def scored(expected: tuple[ExpectedItem, ...], outcome: Outcome, pairs: tuple[MatchedPair, ...]) -> ConversationScore:
    return ConversationScore(
        case=Case("c1", expected, outcome),
        pairs=pairs,
        supersession_hits=frozenset(),
        stale_leaks=frozenset(),
        spurious_supersedes=0,
    )


def pair(expected_index: int, predicted_index: int, similarity: float) -> MatchedPair:
    return MatchedPair(EXPECTED[expected_index], predicted_index, PREDICTED[predicted_index], similarity)


def row(outcome, memory_id, expected, predicted, exp_cat, pred_cat, exp_kind, pred_kind, similarity, status="partial"):
    return {
        "conversation_id": "c1",
        "status": status,
        "outcome": outcome,
        "memory_id": memory_id,
        "expected": expected,
        "predicted": predicted,
        "expected_categories": exp_cat,
        "predicted_categories": pred_cat,
        "expected_temporal": exp_kind,
        "predicted_temporal": pred_kind,
        "similarity": similarity,
    }


def test_one_row_per_expected_memory_in_gold_order_then_one_per_spurious_prediction() -> None:
    s = scored(
        EXPECTED, Outcome(predictions=PREDICTED), (pair(2, 0, 0.9), pair(0, 1, 0.8), pair(1, 3, 0.7), pair(3, 4, 1.0))
    )
    assert memory_rows(s) == [
        row(
            "matched",
            "c1-m1",
            "User is vegan.",
            "User is a vegan.",
            "factual, preference",
            "factual, preference",
            "durable",
            "durable",
            0.8,
        ),
        row(
            "category_mismatch",
            "c1-m2",
            "User runs on Sundays.",
            "User runs every Sunday.",
            "behavioral",
            "preference",
            "current",
            "past",
            0.7,
        ),
        row(
            "temporal_mismatch",
            "c1-m3",
            "User lives in Lyon.",
            "User lives in Lyon.",
            "factual",
            "factual",
            "current",
            "past",
            0.9,
        ),
        row(
            "temporal_mismatch",
            "c1-m4",
            "User has a cat.",
            "User has a cat.",
            "factual",
            "factual",
            "durable",
            "current",
            1.0,
        ),
        row("missed", "c1-m5", "User sold the car.", "", "factual", "", "past", "", None),
        row("spurious", "predicted[2]", "", "User likes jazz.", "", "preference", "", "durable", None),
        row("spurious", "predicted[5]", "", "User drinks tea.", "", "behavioral, preference", "", "current", None),
    ]
    assert outcome_counts(s) == {
        "matched": 1,
        "missed": 1,
        "spurious": 2,
        "category_mismatch": 1,
        "temporal_mismatch": 2,
    }


def test_a_failed_conversation_misses_every_expected_memory() -> None:
    s = scored(EXPECTED[:2], Outcome.failed(FailureReason.INVALID_JSON, "not JSON"), ())
    assert memory_rows(s) == [
        row("missed", "c1-m1", "User is vegan.", "", "factual, preference", "", "durable", "", None, "failed"),
        row("missed", "c1-m2", "User runs on Sundays.", "", "behavioral", "", "current", "", None, "failed"),
    ]
    assert outcome_counts(s) == {o.value: 0 for o in MemoryOutcome} | {"missed": 2}


def test_every_outcome_is_counted_even_at_zero() -> None:
    s = scored((), Outcome(), ())
    assert memory_rows(s) == []
    assert outcome_counts(s) == {
        "matched": 0,
        "missed": 0,
        "spurious": 0,
        "category_mismatch": 0,
        "temporal_mismatch": 0,
    }
    all_right = scored(
        EXPECTED[:1], Outcome(predictions=PREDICTED[1:2]), (MatchedPair(EXPECTED[0], 0, PREDICTED[1], 0.8),)
    )
    assert memory_rows(all_right) == [
        row(
            "matched",
            "c1-m1",
            "User is vegan.",
            "User is a vegan.",
            "factual, preference",
            "factual, preference",
            "durable",
            "durable",
            0.8,
            "all_matched",
        ),
    ]
