"""The in-process fake provider: every scripted behaviour at the provider seam, without a
socket, and a check that it answers what the real provider gets from the stub server."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import openai
import pytest
from pydantic import ValidationError

from extraction_eval.contract import BatchExtractionResult, render_conversation, system_prompt
from extraction_eval.gold import Conversation
from extraction_eval.providers import Budget, ChatCompletionsClient, ProviderAnswer, Redactor, RetryPolicy, call_all
from extraction_eval.stub_provider import FakeProvider, StubProviderServer, StubScript

from .conftest import KEY, MODEL, expected

ANSWERS = {cid: expected(cid) for cid in ("c001", "c002")}


def fake(script: dict[str, Any] | None = None, **kw: Any) -> FakeProvider:
    return FakeProvider(ANSWERS, script, api_key=KEY, **kw)


def complete(provider: FakeProvider, conversation: Conversation) -> ProviderAnswer:
    return asyncio.run(provider.complete(conversation))


def answer_of(conversation: Conversation, kind: str) -> ProviderAnswer:
    return complete(fake({"default": {"answer": kind}}), conversation)


# --- answers ---------------------------------------------------------------------------------


def test_ok_answers_the_answer_set_with_usage_counted_in_characters(conversations: dict[str, Conversation]) -> None:
    provider = fake()
    answer = complete(provider, conversations["c001"])
    assert answer.content == json.dumps({"memories": expected("c001")}, ensure_ascii=False)
    assert (answer.finish_reason, answer.refusal, answer.system_fingerprint) == ("stop", None, "fp_stub_1")
    # what the real provider sends: the system prompt and the rendered conversation
    prompt_tokens = (len(system_prompt()) + len(render_conversation(conversations["c001"]))) // 4
    completion_tokens = len(answer.content) // 4
    assert answer.usage == {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    assert complete(provider, conversations["c003"]).content == '{"memories": []}'  # not in the answer set
    assert (provider.name, provider.model) == ("openai", "gpt-4o-mini")
    assert [(c.conversation_id, c.attempt) for c in provider.calls] == [("c001", 1), ("c003", 1)]


def test_invalid_json_answer(conversations: dict[str, Conversation]) -> None:
    answer = answer_of(conversations["c001"], "invalid_json")
    assert answer.finish_reason == "stop"
    assert answer.content == "Sure! Here are the memories I found: {memories: ["
    with pytest.raises(json.JSONDecodeError):
        json.loads(answer.content)


def test_schema_invalid_answer(conversations: dict[str, Conversation]) -> None:
    data = json.loads(answer_of(conversations["c001"], "schema_invalid").content or "")
    assert data == {"memories": [{"content": "User lives in Lisbon.", "categories": ["factual"], "supersedes": None}]}
    with pytest.raises(ValidationError, match="temporal_kind"):
        BatchExtractionResult.model_validate(data)


def test_refusal_answer(conversations: dict[str, Conversation]) -> None:
    answer = answer_of(conversations["c001"], "refusal")
    assert (answer.content, answer.refusal, answer.finish_reason) == (None, "I can't help with that.", "stop")
    assert answer.usage is not None and answer.usage["completion_tokens"] == len("I can't help with that.") // 4


def test_length_answer(conversations: dict[str, Conversation]) -> None:
    answer = answer_of(conversations["c001"], "length")
    full = json.dumps({"memories": expected("c001")}, ensure_ascii=False)
    assert answer.finish_reason == "length"
    assert answer.content == full[: len(full) // 2]


def test_content_filter_answer(conversations: dict[str, Conversation]) -> None:
    answer = answer_of(conversations["c001"], "content_filter")
    assert (answer.content, answer.refusal, answer.finish_reason) == (None, None, "content_filter")


def test_echo_key_answer(conversations: dict[str, Conversation]) -> None:
    memories = json.loads(answer_of(conversations["c001"], "echo_key").content or "")["memories"]
    assert memories[0]["content"] == f"User's API key is {KEY}."
    BatchExtractionResult.model_validate({"memories": memories})


# --- failures --------------------------------------------------------------------------------


def test_scripted_statuses_raise_the_sdks_errors_then_it_answers(conversations: dict[str, Conversation]) -> None:
    provider = fake({"default": {"fail_first": [429, 500, 503, 400, 401, 418], "retry_after_s": 0.25}})
    raised = []
    for _ in range(6):
        with pytest.raises(openai.APIStatusError) as caught:
            complete(provider, conversations["c001"])
        raised.append((type(caught.value), caught.value.status_code))
    assert raised == [
        (openai.RateLimitError, 429),
        (openai.InternalServerError, 500),
        (openai.InternalServerError, 503),
        (openai.BadRequestError, 400),
        (openai.AuthenticationError, 401),
        (openai.APIStatusError, 418),
    ]
    assert complete(provider, conversations["c001"]).finish_reason == "stop"
    assert provider.attempts("c001") == 7


def test_a_429_carries_retry_after_and_openais_error_body(conversations: dict[str, Conversation]) -> None:
    with pytest.raises(openai.RateLimitError) as caught:
        complete(fake({"default": {"fail_first": [429], "retry_after_s": 0.25}}), conversations["c001"])
    assert caught.value.response.headers["retry-after"] == "0.25"
    assert caught.value.body == {
        "message": "Rate limit reached for requests (stub provider). Please try again later.",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
    assert caught.value.message == (
        "Error code: 429 - Rate limit reached for requests (stub provider). Please try again later."
    )


def test_drop_and_a_short_hang_are_what_the_sdks_aiohttp_transport_raises(
    conversations: dict[str, Conversation],
) -> None:
    """A connection closed without a response is a timeout to the SDK's aiohttp transport
    (the agreement test below checks it against the server), at once for a drop and at the
    hang's end for a hang shorter than the client's timeout."""
    provider = fake({"default": {"fail_first": ["drop", "hang"], "hang_s": 0.3}}, timeout_s=5.0)
    elapsed = []
    for _ in range(2):
        start = time.monotonic()
        with pytest.raises(openai.APITimeoutError, match="Request timed out."):
            complete(provider, conversations["c001"])
        elapsed.append(time.monotonic() - start)
    assert elapsed[0] < 0.3 <= elapsed[1] < 5.0
    assert complete(provider, conversations["c001"]).finish_reason == "stop"


@pytest.mark.parametrize("behavior", [{"fail_first": ["hang"], "hang_s": 30}, {"latency_ms": 30_000}])
def test_what_outlasts_the_timeout_is_a_timeout_at_the_timeout(
    conversations: dict[str, Conversation], behavior: dict[str, Any]
) -> None:
    start = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        complete(fake({"default": behavior}, timeout_s=0.1), conversations["c001"])
    assert 0.1 <= time.monotonic() - start < 10.0  # 30 s were scripted


def test_latency_is_slept_and_measured(conversations: dict[str, Conversation]) -> None:
    assert complete(fake({"default": {"latency_ms": 50}}), conversations["c002"]).latency_s >= 0.05


def test_fail_first_is_counted_per_conversation_until_reset(conversations: dict[str, Conversation]) -> None:
    provider = fake({"default": {"fail_first": [500]}, "conversations": {"c001": {"fail_first": [503, 429]}}})

    def status(cid: str) -> int:
        try:
            complete(provider, conversations[cid])
        except openai.APIStatusError as exc:
            return exc.status_code
        return 200

    assert [status(c) for c in ("c001", "c001", "c002", "c001", "c002")] == [503, 429, 500, 200, 200]
    assert (provider.attempts("c001"), provider.attempts("c002"), provider.attempts("c003")) == (3, 2, 0)
    assert [c.attempt for c in provider.calls] == [1, 2, 1, 3, 2]
    provider.reset()
    assert (provider.attempts("c001"), provider.calls) == (0, [])
    assert status("c001") == 503


# --- at the provider seam --------------------------------------------------------------------


def test_call_all_retries_through_the_fake_and_closes_it(conversations: dict[str, Conversation]) -> None:
    provider = fake(
        {
            "default": {"retry_after_s": 0.01},
            "conversations": {"c001": {"fail_first": [429, 500]}, "c002": {"fail_first": ["drop"] * 3}},
        }
    )
    results = asyncio.run(
        call_all(
            provider,
            list(conversations.values()),
            concurrency=2,
            policy=RetryPolicy(max_retries=2, base_delay_s=0.01),
            redactor=Redactor([KEY]),
            budget=Budget(MODEL, None, None),
        )
    )
    assert (results["c001"].retries, results["c001"].answer is not None) == (2, True)
    # three drops: a timeout to the SDK's aiohttp transport, as in a live run
    assert results["c002"].transport_error == "timeout after 3 attempt(s)"
    assert (results["c003"].retries, results["c003"].transport_error) == (0, None)
    assert [provider.attempts(c) for c in ("c001", "c002", "c003")] == [3, 3, 1]
    assert provider.closed


# --- the fake and the server agree ----------------------------------------------------------

#: (behaviour, client timeout): every answer kind and failure, through the real provider.
AGREEMENT = [
    ({}, 5.0),
    *(({"answer": kind}, 5.0) for kind in ("invalid_json", "schema_invalid", "refusal", "length")),
    *(({"answer": kind}, 5.0) for kind in ("content_filter", "echo_key")),
    ({"latency_ms": 30}, 5.0),
    ({"fail_first": [429], "retry_after_s": 0.25}, 5.0),
    *(({"fail_first": [status]}, 5.0) for status in (500, 503, 400, 401, 418)),
    ({"fail_first": ["drop"]}, 5.0),
    ({"fail_first": ["hang"], "hang_s": 0.1}, 5.0),
    ({"fail_first": ["hang"], "hang_s": 30}, 0.2),
    ({"latency_ms": 30_000}, 0.2),
]


async def outcome(provider: Any, conversation: Conversation) -> tuple[Any, ...]:
    """What a caller of ``complete`` sees, without the measured latency."""
    try:
        answer = await provider.complete(conversation)
    except openai.APIStatusError as exc:
        retry_after = exc.response.headers.get("retry-after")
        return type(exc), exc.status_code, exc.message, exc.body, retry_after
    except openai.APIConnectionError as exc:
        return type(exc), exc.message
    finally:
        await provider.aclose()
    return "answer", dataclasses.replace(answer, latency_s=0.0)


def test_the_fake_answers_what_the_server_answers(gold_dir: Path, conversations: dict[str, Conversation]) -> None:
    conversation = conversations["c001"]

    async def both(server: StubProviderServer) -> list[tuple[Any, Any]]:
        pairs = []
        for behavior, timeout_s in AGREEMENT:
            server.script = StubScript.from_dict({"default": behavior})
            server.reset()
            real = ChatCompletionsClient("openai", MODEL, api_key=KEY, base_url=server.base_url, timeout_s=timeout_s)
            in_process = FakeProvider(ANSWERS, server.script, api_key=KEY, timeout_s=timeout_s)
            pairs.append((await outcome(real, conversation), await outcome(in_process, conversation)))
        return pairs

    with StubProviderServer(gold_dir, ANSWERS) as server:
        pairs = asyncio.run(both(server))
    for (behavior, _), (over_http, in_process) in zip(AGREEMENT, pairs, strict=True):
        assert in_process == over_http, behavior
    kinds = [p[0][0] for p in pairs]
    assert kinds.count("answer") == 8 and kinds.count(openai.APITimeoutError) == 4  # drop, both hangs, latency
