"""The budget's arithmetic and the progress bar on a terminal."""

from __future__ import annotations

import io

import pytest

from extraction_eval.providers import Budget, ProviderAnswer
from extraction_eval.providers._progress import Progress


def answer(prompt: int, completion: int) -> ProviderAnswer:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    return ProviderAnswer("{}", "stop", None, None, usage, 0.1)


def test_dollar_budget_uses_the_price_table() -> None:
    budget = Budget("gpt-4o-mini", None, 0.0003)  # $0.15 in, $0.60 out per 1M tokens
    tokens, cost = budget.add(answer(1000, 100))
    # (1000 * 0.15 + 100 * 0.60) / 1_000_000 = (150 + 60) / 1e6 = 0.00021
    assert tokens == 1100
    assert cost == pytest.approx(0.00021)
    assert not budget.exhausted()  # 0.00021 < 0.0003
    budget.add(answer(1000, 100))
    assert budget.cost == pytest.approx(0.00042)  # 2 * 0.00021
    assert budget.exhausted()  # 0.00042 >= 0.0003


def test_token_budget_counts_both_directions() -> None:
    budget = Budget("Qwen/Qwen2.5-14B-Instruct", 2000, None)
    assert budget.add(answer(1500, 400)) == (1900, 0.0)  # no price known: cost 0, tokens still count
    assert not budget.exhausted()
    budget.add(answer(50, 50))
    assert budget.exhausted()


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_a_bar_on_a_terminal() -> None:
    stream = FakeTerminal()
    progress = Progress(4, stream=stream)
    assert progress.bar
    progress.update(failed=False, tokens=1200, cost=0.001)
    progress.update(failed=True, tokens=0, cost=0.0)
    progress.close()
    text = stream.getvalue()
    assert "\r[############............] 2/4 conversations | 1 failed | 1,200 tokens | $0.0010 | ETA " in text
    assert text.endswith("\n") and "progress:" not in text


def test_progress_off_a_terminal_is_plain_lines() -> None:
    stream = io.StringIO()
    progress = Progress(20, stream=stream, every_s=1e9)  # no time-based lines: only a new tenth prints
    assert not progress.bar
    for _ in range(20):
        progress.update(failed=False, tokens=10, cost=0.0)
    lines = stream.getvalue().splitlines()
    # tenth = 10 * done // 20: 0 at 1 (first line), then a new tenth at every even count
    done = [1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20]
    assert [line.split(" | ETA ")[0] for line in lines] == [
        f"progress: {n}/20 conversations | 0 failed | {10 * n} tokens | $0.0000" for n in done
    ]
    assert lines[-1].startswith("progress: 20/20 conversations | 0 failed | 200 tokens")
