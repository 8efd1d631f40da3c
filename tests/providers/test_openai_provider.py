"""The SDK-backed provider client: the URL it posts to, and the key it sends and redacts."""

from __future__ import annotations

import asyncio

import pytest

from extraction_eval.gold import Conversation
from extraction_eval.providers import VLLM_NO_KEY, ChatCompletionsClient, make_client
from extraction_eval.vocab import Mode, Provider


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        (None, "https://api.openai.com/v1/chat/completions"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/chat/completions"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1/chat/completions"),
        (
            "https://gateway.example/openai/deployments/x",
            "https://gateway.example/openai/deployments/x/chat/completions",
        ),
    ],
)
def test_the_chat_completions_url_is_the_sdks(base_url: str | None, expected: str) -> None:
    client = ChatCompletionsClient("openai", "gpt-4o-mini", api_key="sk-canary", base_url=base_url, timeout_s=5)
    assert client._url == expected
    assert client._url == str(client._client._prepare_url("/chat/completions"))


def test_the_vllm_placeholder_key_is_sent_but_not_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IBEX_WORKER_EXTRACTION_BASE_URL", "http://127.0.0.1:8000/v1")
    client, redactor = make_client(Provider.VLLM, "Qwen/Qwen2.5-14B-Instruct", Mode.VLLM, timeout_s=5)
    assert client._client.api_key == VLLM_NO_KEY == "EMPTY"
    assert redactor.text("the fridge is EMPTY") == "the fridge is EMPTY"


def test_a_configured_vllm_key_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IBEX_WORKER_EXTRACTION_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("IBEX_WORKER_EXTRACTION_API_KEY", "vllm-canary-4242")
    client, redactor = make_client(Provider.VLLM, "Qwen/Qwen2.5-14B-Instruct", Mode.VLLM, timeout_s=5)
    assert client._client.api_key == "vllm-canary-4242"
    assert redactor.text("key vllm-canary-4242, fridge EMPTY") == "key [REDACTED], fridge EMPTY"


def test_the_sdk_platform_is_detected_once_at_construction() -> None:
    # The SDK would otherwise detect it on the first request, in a worker thread per concurrent
    # first request. If an SDK upgrade renames the private attribute, this fails loudly.
    client = ChatCompletionsClient("openai", "gpt-4o-mini", api_key="sk-canary", base_url=None, timeout_s=5)
    assert client._client._platform is not None


def test_a_body_that_is_not_json_is_a_typed_failure_not_a_traceback() -> None:
    """A proxy's login page at the base URL: a 200 the client cannot read is this conversation's
    typed failure (issue 12, point 4: the run goes on), and it names the fix."""
    from aiohttp import web

    conversation = Conversation.model_validate(
        {"conversation_id": "c1", "session_date": "2026-01-05", "turns": [{"role": "user", "content": "hi"}]}
    )

    async def login_page(request: web.Request) -> web.Response:
        return web.Response(text="<html>sign in</html>", content_type="text/html")

    async def call() -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", login_page)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        client = ChatCompletionsClient(
            "openai", "gpt-4o-mini", api_key="sk-canary", base_url=f"http://127.0.0.1:{port}/v1", timeout_s=5
        )
        try:
            answer = await client.complete(conversation)
        finally:
            await client.aclose()
            await runner.cleanup()
        assert answer.content is None and answer.malformed is not None
        return answer.malformed

    message = asyncio.run(call())
    assert message.startswith("openai answered 200 to http://127.0.0.1:")
    assert message.endswith(
        "/v1/chat/completions with a body that is not JSON (content-type 'text/html; charset=utf-8'): "
        "'<html>sign in</html>'; check that the base URL is an OpenAI-compatible /v1 endpoint."
    )
