"""One-to-one matching: the assignment that maximises total similarity (Hungarian).

A small pure-Python Hungarian algorithm (Kuhn-Munkres with potentials, O(n^2 m)):
per conversation the matrices are a handful of rows, and importing scipy.optimize
would cost about a second of every run's start-up. tests/scoring/test_assign.py
checks it against scipy's ``linear_sum_assignment`` on thousands of random matrices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._matcher import Matcher


@dataclass(frozen=True)
class Pair:
    expected_index: int
    predicted_index: int
    similarity: float


def max_weight_assignment(weights: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """Row-column pairs of a full one-to-one assignment that maximises the total weight.

    Every row gets a column when rows <= columns (and vice versa); callers drop the
    pairs they do not want (zero weights). Deterministic for equal totals.
    """
    rows = len(weights)
    cols = len(weights[0]) if rows else 0
    if rows == 0 or cols == 0:
        return []
    if rows > cols:
        transposed = [[weights[r][c] for r in range(rows)] for c in range(cols)]
        return [(r, c) for c, r in max_weight_assignment(transposed)]
    # Minimise cost = -weight; 1-indexed arrays as in the classic formulation.
    inf = float("inf")
    u = [0.0] * (rows + 1)
    v = [0.0] * (cols + 1)
    owner = [0] * (cols + 1)  # owner[j]: the row assigned to column j (0: none)
    way = [0] * (cols + 1)
    for i in range(1, rows + 1):
        owner[0] = i
        j0 = 0
        minv = [inf] * (cols + 1)
        used = [False] * (cols + 1)
        while True:
            used[j0] = True
            i0 = owner[j0]
            delta = inf
            j1 = 0
            row = weights[i0 - 1]
            for j in range(1, cols + 1):
                if not used[j]:
                    cur = -row[j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(cols + 1):
                if used[j]:
                    u[owner[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if owner[j0] == 0:
                break
        while True:
            j1 = way[j0]
            owner[j0] = owner[j1]
            j0 = j1
            if j0 == 0:
                break
    return sorted((owner[j] - 1, j - 1) for j in range(1, cols + 1) if owner[j] != 0)


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
    return [Pair(r, c, matrix[r][c]) for r, c in max_weight_assignment(eligible) if eligible[r][c] > 0.0]
