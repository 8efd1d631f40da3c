"""Build the client for a provider from the environment (read here, at call time)."""

from __future__ import annotations

from .._exceptions import ConfigurationError
from .._settings import BASE_URL_VAR, OPENAI_BASE_URL_VAR, OPENAI_KEY_VAR, VLLM_KEY_VAR, env_value
from ..vocab import Mode, Provider
from ._base import Redactor
from ._openai import ChatCompletionsClient

#: The key sent to a vLLM server when IBEX_WORKER_EXTRACTION_API_KEY is unset.
VLLM_NO_KEY = "EMPTY"


def make_client(
    provider: Provider, model: str, mode: Mode, *, timeout_s: float
) -> tuple[ChatCompletionsClient, Redactor]:
    """The SDK client for the provider, and a redactor that knows its key (``mode`` names the
    command in the error when a setting is missing)."""
    if provider is Provider.OPENAI:
        key = env_value(OPENAI_KEY_VAR)
        if key is None:
            raise ConfigurationError(
                f"--mode {mode.value} calls OpenAI and needs {OPENAI_KEY_VAR}; set it (never "
                "commit it) or use --mode cassette to replay for free."
            )
        base_url = env_value(OPENAI_BASE_URL_VAR)
    else:
        base_url = env_value(BASE_URL_VAR)
        if base_url is None:
            raise ConfigurationError(
                f"the vllm provider needs {BASE_URL_VAR}, e.g. "
                f"{BASE_URL_VAR}=http://127.0.0.1:8000/v1 (see docs/runbooks.md)."
            )
        key = env_value(VLLM_KEY_VAR)
    # A vLLM server without --api-key takes any key; the SDK needs one. The placeholder is not
    # a secret, so only a configured key is redacted.
    client = ChatCompletionsClient(
        provider.value, model, api_key=key or VLLM_NO_KEY, base_url=base_url, timeout_s=timeout_s
    )
    return client, Redactor([key])
