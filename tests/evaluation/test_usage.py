"""Latency percentiles and the cost estimate, against docs/metrics.md and docs/providers.md."""

from __future__ import annotations

import pytest

from extraction_eval.evaluation import Answer, percentile, usage_metrics
from extraction_eval.providers import PRICES_PER_MTOK, cost_usd, usage_tokens

# docs/metrics.md's worked example: ten latencies 0.1 ... 1.0 s, given out of order so
# that the test also shows percentile() sorts before ranking.
TEN = [0.7, 0.1, 1.0, 0.4, 0.9, 0.2, 0.6, 0.3, 0.8, 0.5]


# percentile() returns one of its inputs (no interpolation, no arithmetic on values), so exact
# equality with the literal is right here.
@pytest.mark.parametrize(
    ("q", "expected"),
    [
        (50, 0.5),  # rank ceil(50/100 * 10) = ceil(5.0) = 5 -> the 5th smallest, 0.5
        (95, 1.0),  # rank ceil(95/100 * 10) = ceil(9.5) = 10 -> the largest, 1.0
        (100, 1.0),  # rank ceil(10.0) = 10
        (0, 0.1),  # rank ceil(0) = 0, raised to at least 1 -> the smallest
        (1, 0.1),  # rank ceil(0.1) = 1
        (11, 0.2),  # rank ceil(1.1) = 2
    ],
)
def test_percentile_is_nearest_rank_on_the_documented_example(q: float, expected: float) -> None:
    assert percentile(TEN, q) == expected


def test_percentile_does_not_interpolate() -> None:
    # p50 of four values: rank ceil(0.5 * 4) = 2 -> 2.0; linear interpolation would give 2.5
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.0
    # a single latency is every percentile of itself: rank max(1, ceil(q/100 * 1)) = 1
    assert percentile([0.42], 50) == 0.42
    assert percentile([0.42], 95) == 0.42


def test_price_table_is_the_documented_gpt_4o_mini_price() -> None:
    # docs/providers.md: USD 0.15 per 1M input tokens, 0.60 per 1M output tokens
    assert dict(PRICES_PER_MTOK) == {"gpt-4o-mini": (0.15, 0.60)}


@pytest.mark.parametrize(
    ("input_tokens", "output_tokens", "expected"),
    [
        (1_000_000, 0, 0.15),  # one million in at $0.15 per 1M
        (0, 1_000_000, 0.60),  # one million out at $0.60 per 1M
        (1_000_000, 1_000_000, 0.75),  # 0.15 + 0.60
        (1000, 100, 0.00021),  # (1000 * 0.15 + 100 * 0.60) / 1e6 = (150 + 60) / 1e6
        (3000, 300, 0.00063),  # (3000 * 0.15 + 300 * 0.60) / 1e6 = (450 + 180) / 1e6
        (0, 0, 0.0),
    ],
)
def test_cost_uses_the_price_per_million_tokens(input_tokens: int, output_tokens: int, expected: float) -> None:
    assert cost_usd("gpt-4o-mini", input_tokens, output_tokens) == pytest.approx(expected)


def test_a_model_without_a_price_has_no_cost() -> None:
    assert cost_usd("Qwen/Qwen2.5-14B-Instruct", 1000, 100) is None


def test_usage_tokens_reads_either_naming() -> None:
    assert usage_tokens({"prompt_tokens": 12, "completion_tokens": 3}) == (12, 3)
    assert usage_tokens({"input_tokens": 12, "output_tokens": 3}) == (12, 3)
    assert usage_tokens(None) == (None, None)


def test_usage_metrics_sum_tokens_then_price_and_rank_latencies() -> None:
    answers = [
        Answer("c1", input_tokens=1000, output_tokens=100, latency_s=0.3, retries=1),
        Answer("c2", input_tokens=2000, output_tokens=200, latency_s=0.1),
        Answer("c3"),  # no usage, no latency: left out of every sum and rank
    ]
    metrics = usage_metrics(answers, "gpt-4o-mini")
    assert set(metrics) == {
        "usage/input_tokens",
        "usage/output_tokens",
        "usage/cost_usd",
        "latency/p50_s",
        "latency/p95_s",
        "usage/retries",
    }
    assert metrics["usage/input_tokens"] == 3000.0  # 1000 + 2000
    assert metrics["usage/output_tokens"] == 300.0  # 100 + 200
    # (3000 * 0.15 + 300 * 0.60) / 1e6 = (450 + 180) / 1e6 = 0.00063
    assert metrics["usage/cost_usd"] == pytest.approx(0.00063)
    # latencies sorted: [0.1, 0.3]; p50 rank ceil(0.5 * 2) = 1 -> 0.1, p95 rank ceil(0.95 * 2) = 2 -> 0.3
    assert metrics["latency/p50_s"] == 0.1
    assert metrics["latency/p95_s"] == 0.3
    assert metrics["usage/retries"] == 1.0


def test_usage_metrics_without_a_price_or_latency() -> None:
    answers = [Answer("c1", input_tokens=10, output_tokens=5)]
    # no price for the model: tokens are logged, the cost is not; no latency and no retry: none of those
    assert usage_metrics(answers, "Qwen/Qwen2.5-14B-Instruct") == {
        "usage/input_tokens": 10.0,
        "usage/output_tokens": 5.0,
    }
    assert usage_metrics([Answer("c1")], "gpt-4o-mini") == {}
