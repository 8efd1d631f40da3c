"""What happened to each memory, in words a reviewer scans (pure; the conversation's
``status`` is ``conversation_status`` in ``_metrics``).

A memory's ``outcome``: ``matched`` (content, categories and temporal kind right),
``category_mismatch`` / ``temporal_mismatch`` (matched in content, wrong category set /
temporal kind; a pair wrong in both is ``category_mismatch`` with both columns shown),
``missed`` (an expected memory nothing matched), ``spurious`` (a prediction matched to
nothing).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from ._metrics import ConversationScore, MatchedPair, conversation_status
from ._types import Memory


class MemoryOutcome(StrEnum):
    MATCHED = "matched"
    MISSED = "missed"
    SPURIOUS = "spurious"
    CATEGORY_MISMATCH = "category_mismatch"
    TEMPORAL_MISMATCH = "temporal_mismatch"


def pair_outcome(pair: MatchedPair) -> MemoryOutcome:
    """A matched pair's outcome: a wrong category set first, then a wrong temporal kind."""
    if not pair.category_ok:
        return MemoryOutcome.CATEGORY_MISMATCH
    if not pair.temporal_ok:
        return MemoryOutcome.TEMPORAL_MISMATCH
    return MemoryOutcome.MATCHED


def outcome_counts(s: ConversationScore) -> dict[str, int]:
    """How many memories of each outcome the conversation has (the flat summary of its rows)."""
    counts = {o.value: 0 for o in MemoryOutcome}
    for row in memory_rows(s):
        counts[row["outcome"]] += 1
    return counts


def _labels(memory: Memory | None) -> tuple[str, str]:
    if memory is None:
        return "", ""
    return ", ".join(sorted(c.value for c in memory.categories)), memory.temporal_kind.value


def _row(
    s: ConversationScore,
    outcome: MemoryOutcome,
    expected: Memory | None,
    predicted: Memory | None,
    *,
    memory_id: str,
    similarity: float | None,
) -> dict[str, Any]:
    exp_categories, exp_kind = _labels(expected)
    pred_categories, pred_kind = _labels(predicted)
    return {
        "conversation_id": s.conversation_id,
        "status": conversation_status(s).value,
        "outcome": outcome.value,
        "memory_id": memory_id,
        "expected": expected.content if expected else "",
        "predicted": predicted.content if predicted else "",
        "expected_categories": exp_categories,
        "predicted_categories": pred_categories,
        "expected_temporal": exp_kind,
        "predicted_temporal": pred_kind,
        "similarity": similarity,
    }


def memory_rows(s: ConversationScore) -> list[dict[str, Any]]:
    """One flat row per expected memory (matched or missed) and per spurious prediction; a
    failed conversation gets one ``missed`` row per expected memory (or none)."""
    rows: list[dict[str, Any]] = []
    by_id = {p.expected.memory_id: p for p in s.pairs}
    for item in s.case.expected:
        pair = by_id.get(item.memory_id)
        if pair is None:
            rows.append(_row(s, MemoryOutcome.MISSED, item.memory, None, memory_id=item.memory_id, similarity=None))
            continue
        outcome = pair_outcome(pair)
        rows.append(_row(s, outcome, item.memory, pair.predicted, memory_id=item.memory_id, similarity=pair.similarity))
    for index in s.unmatched_predicted:
        rows.append(
            _row(
                s, MemoryOutcome.SPURIOUS, None, s.predictions[index], memory_id=f"predicted[{index}]", similarity=None
            )
        )
    return rows
