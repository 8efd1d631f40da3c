"""The SDK-backed provider sends to the same URL the SDK would build from its base URL."""

from __future__ import annotations

import pytest

from extraction_eval.providers._openai import ChatCompletionsProvider


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
    provider = ChatCompletionsProvider("openai", "gpt-4o-mini", api_key="sk-canary", base_url=base_url, timeout_s=5)
    assert provider._url == expected
    assert provider._url == str(provider._client._prepare_url("/chat/completions"))
