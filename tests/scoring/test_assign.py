"""The pure-Python Hungarian algorithm against scipy's linear_sum_assignment."""

from __future__ import annotations

import random

import pytest
from scipy.optimize import linear_sum_assignment

from extraction_eval.scoring._assign import max_weight_assignment


def total(weights: list[list[float]], pairs: list[tuple[int, int]]) -> float:
    return sum(weights[r][c] for r, c in pairs)


@pytest.mark.parametrize("seed", range(40))
def test_same_optimum_as_scipy_on_random_matrices(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        rows, cols = rng.randint(1, 7), rng.randint(1, 7)
        weights = [
            [0.0 if rng.random() < 0.4 else round(rng.uniform(0.5, 1.0), 3) for _ in range(cols)] for _ in range(rows)
        ]
        pairs = max_weight_assignment(weights)
        r, c = linear_sum_assignment(weights, maximize=True)
        assert total(weights, pairs) == pytest.approx(float(sum(weights[i][j] for i, j in zip(r, c, strict=True))))
        assert len(pairs) == min(rows, cols)
        assert len({p[0] for p in pairs}) == len(pairs) == len({p[1] for p in pairs})  # one-to-one


def test_known_small_cases() -> None:
    assert max_weight_assignment([]) == []
    assert max_weight_assignment([[0.9, 0.8], [1.0, 0.0]]) == [(0, 1), (1, 0)]  # 1.8 beats greedy 0.9
    assert max_weight_assignment([[0.5], [0.7], [0.6]]) == [(1, 0)]
