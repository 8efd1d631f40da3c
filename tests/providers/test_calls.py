"""How ``call_all`` schedules provider calls: the bound, the start order, the collector.

The provider here is a fake (the last edge: what the event loop sees of a request). The
real SDK against the stub provider over HTTP is covered in test_live_modes.py.
"""

from __future__ import annotations

import asyncio
import gc

import httpx
import openai
import pytest

from extraction_eval._exceptions import ProviderError
from extraction_eval.gold import Conversation
from extraction_eval.providers import Budget, CallResult, ProviderAnswer, Redactor, RetryPolicy, call_all
from extraction_eval.providers._calls import NO_FULL_COLLECTION

ANSWER = ProviderAnswer('{"memories": []}', "stop", None, None, {"prompt_tokens": 10, "completion_tokens": 5}, 0.0)


def conversations(n: int) -> list[Conversation]:
    return [
        Conversation.model_validate(
            {"conversation_id": f"c{i:03d}", "session_date": "2026-01-05", "turns": [{"role": "user", "content": "hi"}]}
        )
        for i in range(1, n + 1)
    ]


class FakeProvider:
    """Builds (one step), waits for its connection (a yield, like a socket connect), sends,
    then waits for the answer until released."""

    name = "openai"
    model = "gpt-4o-mini"

    def __init__(self, *, fail_on: str | None = None) -> None:
        self.events: list[str] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.thresholds: list[tuple[int, int, int]] = []
        self.fail_on = fail_on
        self.closed = False

    async def complete(self, conversation: Conversation) -> ProviderAnswer:
        cid = conversation.conversation_id
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        self.thresholds.append(gc.get_threshold())
        self.events.append(f"build {cid}")
        await asyncio.sleep(0)  # the connection opens
        self.events.append(f"send {cid}")
        if cid == self.fail_on:
            self.in_flight -= 1
            response = httpx.Response(401, request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions"))
            raise openai.AuthenticationError("the key is wrong", response=response, body=None)
        await asyncio.sleep(0.001)  # the answer comes back
        self.in_flight -= 1
        return ANSWER

    async def aclose(self) -> None:
        self.closed = True


def run(provider: FakeProvider, n: int, concurrency: int, budget: Budget | None = None) -> dict[str, CallResult]:
    return asyncio.run(
        call_all(
            provider,
            conversations(n),
            concurrency=concurrency,
            policy=RetryPolicy(max_retries=0),
            redactor=Redactor([]),
            budget=budget or Budget("gpt-4o-mini", None, None),
        )
    )


def test_every_conversation_once_and_never_more_than_the_bound_in_flight() -> None:
    provider = FakeProvider()
    results = run(provider, 10, concurrency=3)
    assert sorted(results) == [f"c{i:03d}" for i in range(1, 11)]
    assert provider.events.count("send c005") == 1 and len(provider.events) == 20
    assert provider.most_in_flight == 3
    assert provider.closed


def test_each_first_request_is_sent_before_the_next_is_built() -> None:
    # Started all at once, the three builds would come first and the three sends after them,
    # as one burst; started one loop iteration apart, each request goes out once built.
    provider = FakeProvider()
    run(provider, 3, concurrency=3)
    assert provider.events == ["build c001", "send c001", "build c002", "send c002", "build c003", "send c003"]


def test_no_full_collection_while_requests_are_in_flight() -> None:
    before = gc.get_threshold()
    provider = FakeProvider()
    run(provider, 4, concurrency=2)
    assert provider.thresholds == [(before[0], before[1], NO_FULL_COLLECTION)] * 4
    assert gc.get_threshold() == before


def test_a_call_that_cannot_succeed_stops_the_rest_and_restores_the_collector() -> None:
    before = gc.get_threshold()
    provider = FakeProvider(fail_on="c002")
    with pytest.raises(
        ProviderError, match=r"will not get better by retrying: 401 AuthenticationError \(the key is wrong\)"
    ):
        run(provider, 8, concurrency=2)
    assert "build c008" not in provider.events
    assert provider.closed
    assert gc.get_threshold() == before


def test_the_budget_skips_what_was_not_started() -> None:
    provider = FakeProvider()
    results = run(provider, 5, concurrency=1, budget=Budget("gpt-4o-mini", 30, None))  # 15 tokens per answer
    assert [cid for cid, r in results.items() if r.skipped] == ["c003", "c004", "c005"]
    assert provider.events.count("build c003") == 0
