"""The pure-Python Hungarian algorithm against scipy's linear_sum_assignment."""

from __future__ import annotations

import random

import pytest
from scipy.optimize import linear_sum_assignment

from extraction_eval.scoring import (
    Case,
    ExpectedItem,
    FactCoverMatcher,
    KeyedDiceMatcher,
    Memory,
    Outcome,
    Pair,
    assign,
    resolve_matcher,
    score,
)
from extraction_eval.scoring._assign import max_weight_assignment
from extraction_eval.vocab import Category, TemporalKind


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


def test_the_matchers_thresholds() -> None:
    # the boundary tests below are written for these thresholds
    assert (KeyedDiceMatcher().threshold, FactCoverMatcher().threshold) == (0.5, 0.6)
    assert resolve_matcher("keyed-dice@3") == KeyedDiceMatcher()


def recall(matcher_name: str, expected: str, predicted: str) -> float:
    fact = Memory(expected, frozenset({Category.BEHAVIORAL}), TemporalKind.CURRENT)
    guess = Memory(predicted, frozenset({Category.BEHAVIORAL}), TemporalKind.CURRENT)
    case = Case("A", (ExpectedItem("a1", fact),), Outcome((guess,)))
    return score([case], resolve_matcher(matcher_name)).metrics["micro/recall"]


# contract: pairs at or above the matcher's threshold are matched, pairs below never are.
BOUNDARY = [
    # keyed-dice@3 (threshold 0.5): dice 2*2/(5+4) = 0.444 below, 2*2/(5+3) = 0.5 at the threshold
    ("keyed-dice@3", "User drinks green tea every morning.", "User drinks coffee every evening.", 0.444444444, []),
    ("keyed-dice@3", "User drinks green tea every morning.", "User drinks green coffee.", 0.5, [Pair(0, 0, 0.5)]),
    # fact-cover@1 (threshold 0.6): covers 2 of 4 content words below, 3 of 5 at the threshold
    ("fact-cover@1", "User drinks green tea every morning.", "User drinks tea.", 0.5, []),
    ("fact-cover@1", "User reads science fiction novels at night.", "User reads novels.", 0.6, [Pair(0, 0, 0.6)]),
]


@pytest.mark.parametrize(("matcher_name", "expected", "predicted", "similarity", "pairs"), BOUNDARY)
def test_a_pair_matches_at_or_above_the_threshold_only(
    matcher_name: str, expected: str, predicted: str, similarity: float, pairs: list[Pair]
) -> None:
    matcher = resolve_matcher(matcher_name)
    assert matcher.similarity(expected, predicted) == similarity
    assert assign(matcher, [expected], [predicted]) == pairs
    assert recall(matcher_name, expected, predicted) == (1.0 if pairs else 0.0)


def test_a_below_threshold_pair_is_never_traded_for_an_eligible_one() -> None:
    # one eligible pair (0.5) and one below the threshold (0.444): only the eligible one is kept
    kd = KeyedDiceMatcher()
    tea = "User drinks green tea every morning."
    assert assign(kd, [tea, tea], ["User drinks coffee every evening.", "User drinks green coffee."]) == [
        Pair(0, 1, 0.5)
    ]


def test_equal_totals_take_the_lowest_indices() -> None:
    # "Deterministic for equal totals": row i takes the lowest column still free
    assert max_weight_assignment([[1.0, 1.0], [1.0, 1.0]]) == [(0, 0), (1, 1)]
    assert max_weight_assignment([[0.8, 0.8, 0.8]]) == [(0, 0)]
    assert max_weight_assignment([[0.8], [0.8], [0.8]]) == [(0, 0)]
    assert max_weight_assignment([[0.7, 0.7], [0.7, 0.7], [0.7, 0.7]]) == [(0, 0), (1, 1)]
    assert max_weight_assignment([[0.0, 0.0]]) == [(0, 0)]  # a full assignment; callers drop zeros


def test_assign_with_nothing_on_one_side_is_empty() -> None:
    kd = KeyedDiceMatcher()
    assert (assign(kd, [], ["User drinks tea."]), assign(kd, ["User drinks tea."], [])) == ([], [])
