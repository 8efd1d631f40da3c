"""The stub provider over real HTTP on 127.0.0.1: the SDK round trip, the requests it refuses,
scripted failures and latency, attempt counting and the ``python -m`` entry point."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from extraction_eval.contract import (
    SAMPLING,
    BatchExtractionResult,
    batch_extraction_schema,
    full_messages,
    system_prompt,
)
from extraction_eval.gold import Conversation
from extraction_eval.stub_provider import StubProviderServer

from .conftest import KEY, MODEL, assert_close_cuts_the_request, expected, request_body, write_jsonl


def sdk_chat(
    server: StubProviderServer,
    messages: list[dict[str, str]],
    *,
    timeout: float = 5.0,
    max_retries: int = 0,
    **overrides: Any,
) -> Any:
    """One real ``AsyncOpenAI().chat.completions.create`` call; returns the raw response."""

    async def call() -> Any:
        async with openai.AsyncOpenAI(
            api_key=KEY, base_url=server.base_url, max_retries=max_retries, timeout=timeout
        ) as client:
            return await client.chat.completions.with_raw_response.create(**request_body(messages, **overrides))

    return asyncio.run(call())


def http_post(
    server: StubProviderServer,
    body: Any,
    *,
    path: str = "/v1/chat/completions",
    key: str | None = KEY,
    timeout: float = 5.0,
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    url = f"http://127.0.0.1:{server.port}{path}"
    return httpx.post(url, json=body, headers=headers, timeout=timeout)


def serve(gold_dir: Path, script: dict[str, Any] | None = None, **kw: Any) -> StubProviderServer:
    return StubProviderServer(gold_dir, kw.pop("answers", None), script, **kw)


def one_conversation(behavior: dict[str, Any], cid: str = "c001") -> dict[str, Any]:
    return {"conversations": {cid: behavior}}


def test_the_public_names_are_pinned_and_resolve() -> None:
    import extraction_eval.stub_provider as stub_provider

    assert stub_provider.__all__ == [
        "Behavior",
        "FakeCall",
        "FakeProvider",
        "RecordedRequest",
        "StubProviderServer",
        "StubScript",
        "load_answer_set",
        "serve",
        "strict_schema_errors",
    ]
    assert all(getattr(stub_provider, name) is not None for name in stub_provider.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = stub_provider.Nope  # type: ignore[attr-defined]


# --- the ok answer through the SDK -----------------------------------------------------------


def test_ok_answer_round_trips_through_the_sdk(gold_dir: Path, conversations: dict[str, Conversation]) -> None:
    messages = full_messages(conversations["c001"])
    with serve(gold_dir) as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        raw = sdk_chat(server, messages)
        completion = raw.parse()
        assert raw.status_code == 200
        assert raw.headers["x-request-id"] == "req_stub_000001"
        choice = completion.choices[0]
        assert completion.model == MODEL
        assert completion.system_fingerprint == "fp_stub_1"
        assert completion.id == "chatcmpl-stub-000001"
        assert choice.finish_reason == "stop"
        assert choice.message.role == "assistant"
        assert choice.message.refusal is None
        parsed = BatchExtractionResult.model_validate_json(choice.message.content)
        assert parsed.model_dump(mode="json") == {"memories": expected("c001")}
        prompt_chars = len(system_prompt()) + len(messages[1]["content"])
        assert completion.usage.prompt_tokens == prompt_chars // 4
        assert completion.usage.completion_tokens == len(choice.message.content) // 4
        assert completion.usage.total_tokens == (completion.usage.prompt_tokens + completion.usage.completion_tokens)
        assert server.attempts("c001") == 1
        assert server.attempts("c002") == 0
        (record,) = server.requests
        assert (record.method, record.path, record.conversation_id) == (
            "POST",
            "/v1/chat/completions",
            "c001",
        )
        assert record.headers["authorization"] == f"Bearer {KEY}"
        assert record.body["seed"] == SAMPLING["seed"]
        assert record.body["messages"] == messages


def test_negative_conversation_answers_an_empty_list_on_the_short_path(
    gold_dir: Path, conversations: dict[str, Conversation]
) -> None:
    with serve(gold_dir) as server:
        response = http_post(server, request_body(full_messages(conversations["c003"])), path="/chat/completions")
    assert response.status_code == 200
    assert json.loads(response.json()["choices"][0]["message"]["content"]) == {"memories": []}


def test_answer_set_from_jsonl_replaces_the_gold(
    gold_dir: Path, conversations: dict[str, Conversation], tmp_path: Path
) -> None:
    mine = [
        {
            "content": "User likes chess.",
            "categories": ["preference"],
            "temporal_kind": "durable",
            "supersedes": None,
        }
    ]
    path = write_jsonl(tmp_path / "answers.jsonl", [{"conversation_id": "c002", "memories": mine}])
    with serve(gold_dir, answers=path) as server:
        c002 = http_post(server, request_body(full_messages(conversations["c002"]))).json()
        c001 = http_post(server, request_body(full_messages(conversations["c001"]))).json()
    assert json.loads(c002["choices"][0]["message"]["content"]) == {"memories": mine}
    assert json.loads(c001["choices"][0]["message"]["content"]) == {"memories": []}


# --- requests the stub refuses ---------------------------------------------------------------


def test_unknown_conversation_is_400(gold_dir: Path) -> None:
    with serve(gold_dir) as server:
        messages = [{"role": "system", "content": "x"}, {"role": "user", "content": "hello"}]
        with pytest.raises(openai.BadRequestError) as caught:
            sdk_chat(server, messages)
        assert server.requests[0].conversation_id is None
    assert caught.value.status_code == 400
    assert caught.value.code == "unknown_conversation"
    assert caught.value.body["param"] == "messages"  # type: ignore[index]


def test_missing_bearer_key_is_401(gold_dir: Path, conversations: dict[str, Conversation]) -> None:
    with serve(gold_dir) as server:
        response = http_post(server, request_body(full_messages(conversations["c001"])), key=None)
        models = httpx.get(f"{server.base_url}/models")
    assert response.status_code == 401
    assert models.status_code == 401
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["message"].startswith("You didn't provide an API key.")


def test_models_lists_the_accepted_names(gold_dir: Path) -> None:
    with serve(gold_dir, models=("gpt-4o-mini", "stub-a")) as server:
        headers = {"Authorization": f"Bearer {KEY}"}
        response = httpx.get(f"{server.base_url}/models", headers=headers)
    assert response.status_code == 200
    assert [m["id"] for m in response.json()["data"]] == ["gpt-4o-mini", "stub-a"]


def test_strict_schema_violation_is_400_like_openai(gold_dir: Path, conversations: dict[str, Conversation]) -> None:
    schema = batch_extraction_schema()
    del schema["$defs"]["ExtractedMemory"]["additionalProperties"]
    bad_format = {
        "type": "json_schema",
        "json_schema": {"name": "BatchExtractionResult", "strict": True, "schema": schema},
    }
    loose_format = copy.deepcopy(bad_format)
    loose_format["json_schema"]["strict"] = False
    messages = full_messages(conversations["c001"])
    with serve(gold_dir) as server:
        with pytest.raises(openai.BadRequestError) as caught:
            sdk_chat(server, messages, response_format=bad_format)
        loose = sdk_chat(server, messages, response_format=loose_format)
        assert server.attempts("c001") == 2
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["message"] == (
        "Invalid schema for response_format 'BatchExtractionResult': In "
        "context='#/$defs/ExtractedMemory', 'additionalProperties' is required to be supplied "
        "and to be false."
    )
    assert (body["type"], body["param"], body["code"]) == (
        "invalid_request_error",
        "response_format",
        None,
    )
    assert loose.status_code == 200


# --- scripted failures -----------------------------------------------------------------------


def test_429_carries_retry_after_then_answers(gold_dir: Path, conversations: dict[str, Conversation]) -> None:
    script = one_conversation({"fail_first": [429], "retry_after_s": 0.25})
    body = request_body(full_messages(conversations["c001"]))
    with serve(gold_dir, script) as server:
        first = http_post(server, body)
        second = http_post(server, body)
        assert server.attempts("c001") == 2
    assert first.status_code == 429
    assert first.headers["retry-after"] == "0.25"
    assert first.json()["error"]["code"] == "rate_limit_exceeded"
    assert second.status_code == 200


def test_sdk_sees_429_and_500_then_succeeds(gold_dir: Path, conversations: dict[str, Conversation]) -> None:
    script = one_conversation({"fail_first": [429, 500]})
    messages = full_messages(conversations["c001"])
    with serve(gold_dir, script) as server:
        with pytest.raises(openai.RateLimitError):
            sdk_chat(server, messages)
        with pytest.raises(openai.InternalServerError) as caught:
            sdk_chat(server, messages)
        assert sdk_chat(server, messages).status_code == 200
        assert server.attempts("c001") == 3
    assert caught.value.status_code == 500
    assert caught.value.body["type"] == "server_error"  # type: ignore[index]


def test_sdk_retries_honour_retry_after(gold_dir: Path, conversations: dict[str, Conversation]) -> None:
    script = one_conversation({"fail_first": [429, 429], "retry_after_s": 0.05})
    with serve(gold_dir, script) as server:
        raw = sdk_chat(server, full_messages(conversations["c001"]), max_retries=2)
        assert server.attempts("c001") == 3
    assert raw.status_code == 200


def test_drop_closes_without_a_response(gold_dir: Path, conversations: dict[str, Conversation]) -> None:
    body = request_body(full_messages(conversations["c001"]))
    with serve(gold_dir, one_conversation({"fail_first": ["drop", "drop"]})) as server:
        with pytest.raises(httpx.RemoteProtocolError):
            http_post(server, body)
        with pytest.raises(openai.APIConnectionError):
            sdk_chat(server, body["messages"])
        assert http_post(server, body).status_code == 200
        assert server.attempts("c001") == 3


def test_hang_times_the_client_out_then_closes(gold_dir: Path, conversations: dict[str, Conversation]) -> None:
    script = one_conversation({"fail_first": ["hang", "hang"], "hang_s": 1.5})
    body = request_body(full_messages(conversations["c001"]))
    with serve(gold_dir, script) as server:
        # A timeout, not the connection closing at the hang's end (that is a connection error).
        with pytest.raises(openai.APITimeoutError):
            sdk_chat(server, body["messages"], timeout=0.1)
        start = time.monotonic()
        with pytest.raises(httpx.RemoteProtocolError):
            http_post(server, body, timeout=5.0)
        assert 1.45 < time.monotonic() - start < 6.0
        assert http_post(server, body).status_code == 200


def test_close_cuts_a_hanging_request(gold_dir: Path, conversations: dict[str, Conversation]) -> None:
    body = request_body(full_messages(conversations["c001"]))
    server = serve(gold_dir, one_conversation({"fail_first": ["hang"], "hang_s": 30})).start()
    assert_close_cuts_the_request(server, body)


def test_latency_delays_the_answer(gold_dir: Path, conversations: dict[str, Conversation]) -> None:
    body = request_body(full_messages(conversations["c002"]))
    with serve(gold_dir, {"default": {"latency_ms": 200}}) as server:
        start = time.monotonic()
        assert http_post(server, body).status_code == 200
        assert time.monotonic() - start >= 0.2


def test_latency_counts_from_the_request_arrival(
    gold_dir: Path, conversations: dict[str, Conversation], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stub's own parsing and checks are part of the scripted latency, not added to it:
    a request that arrived 150 ms ago, with 200 ms scripted, waits only what is left."""
    from extraction_eval.stub_provider import _handler

    slept: list[float] = []

    async def record_sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(_handler.asyncio, "sleep", record_sleep)
    stub = StubProviderServer(gold_dir, script={"default": {"latency_ms": 200}})
    body = request_body(full_messages(conversations["c002"]))

    async def answer(age_s: float) -> Any:
        arrived = asyncio.get_running_loop().time() - age_s
        return await _handler.scripted(stub, "c002", 1, body, KEY, "000001", received_at=arrived)

    assert asyncio.run(answer(0.150)).status == 200
    assert asyncio.run(answer(0.500)).status == 200  # already late: no wait at all
    assert 0.0 < slept[0] <= 0.050  # what is left of 200 ms after 150 (less if the loop ran late)
    assert slept[1] == 0.0


# --- answer kinds ----------------------------------------------------------------------------
# Every kind's content is pinned on the in-process fake (test_fake.py), and the server answers
# the same through the real provider (test_fake.py::test_the_fake_answers_what_the_server_answers).


def test_echo_key_answer_also_echoes_the_key_in_a_header(
    gold_dir: Path, conversations: dict[str, Conversation]
) -> None:
    with serve(gold_dir, one_conversation({"answer": "echo_key"})) as server:
        raw = sdk_chat(server, full_messages(conversations["c001"]))
    assert raw.headers["x-echo-key"] == KEY
    memories = json.loads(raw.parse().choices[0].message.content)["memories"]
    assert memories[0]["content"] == f"User's API key is {KEY}."


# --- attempt counting ------------------------------------------------------------------------


def test_fail_first_is_counted_per_conversation(gold_dir: Path, conversations: dict[str, Conversation]) -> None:
    script = {
        "default": {"fail_first": [500]},
        "conversations": {"c001": {"fail_first": [503, 429]}},
    }
    c001 = request_body(full_messages(conversations["c001"]))
    c002 = request_body(full_messages(conversations["c002"]))
    with serve(gold_dir, script) as server:
        statuses = [http_post(server, c001).status_code for _ in range(2)]
        statuses.append(http_post(server, c002).status_code)
        statuses += [http_post(server, c001).status_code, http_post(server, c002).status_code]
        assert (server.attempts("c001"), server.attempts("c002"), server.attempts("c003")) == (
            3,
            2,
            0,
        )
        assert [r.attempt for r in server.requests] == [1, 2, 1, 3, 2]
        server.reset()
        assert server.attempts("c001") == 0
        assert http_post(server, c001).status_code == 503
    assert statuses == [503, 429, 500, 200, 200]


# --- python -m ------------------------------------------------------------------------------


def test_module_entry_point_serves_and_stops_on_sigterm(
    gold_dir: Path, conversations: dict[str, Conversation], tmp_path: Path
) -> None:
    port_file = tmp_path / "port"
    script = tmp_path / "script.json"
    script.write_text(json.dumps(one_conversation({"answer": "refusal"}, "c002")))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "extraction_eval.stub_provider",
            "--gold",
            str(gold_dir),
            "--script",
            str(script),
            "--port-file",
            str(port_file),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 15.0
        while not port_file.exists():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the stub never wrote its port file"
            time.sleep(0.05)
        port = int(port_file.read_text())
        headers = {"Authorization": f"Bearer {KEY}"}
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        ok = httpx.post(url, json=request_body(full_messages(conversations["c001"])), headers=headers)
        refused = httpx.post(url, json=request_body(full_messages(conversations["c002"])), headers=headers)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    assert stdout.decode().splitlines() == [f"listening on http://127.0.0.1:{port}/v1", "stopped"]
    assert json.loads(ok.json()["choices"][0]["message"]["content"]) == {"memories": expected("c001")}
    assert refused.json()["choices"][0]["message"]["refusal"] == "I can't help with that."
