"""One-to-one matching: the assignment that maximises total similarity (Hungarian)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._matcher import Matcher


@dataclass(frozen=True)
class Pair:
    expected_index: int
    predicted_index: int
    similarity: float


def similarity_matrix(matcher: Matcher, expected: Sequence[str], predicted: Sequence[str]) -> list[list[float]]:
    return [[matcher.similarity(e, p) for p in predicted] for e in expected]


def assign(matcher: Matcher, expected: Sequence[str], predicted: Sequence[str]) -> list[Pair]:
    """Pairs at or above the threshold, chosen to maximise their total similarity.

    Entries below the threshold are zeroed before solving, so every kept pair is
    eligible and no eligible pair is traded for an ineligible one.
    """
    if not expected or not predicted:
        return []
    matrix = similarity_matrix(matcher, expected, predicted)
    eligible = [[s if s >= matcher.threshold else 0.0 for s in row] for row in matrix]
    if not any(s > 0.0 for row in eligible for s in row):
        return []
    from scipy.optimize import linear_sum_assignment  # heavy import, only when needed

    rows, cols = linear_sum_assignment(eligible, maximize=True)
    return [Pair(int(r), int(c), matrix[r][c]) for r, c in zip(rows, cols, strict=True) if eligible[r][c] > 0.0]
