"""Providers: calls to OpenAI and vLLM through the ``openai`` SDK, and nothing else.

A provider client answers one conversation per call (``ProviderClient``); ``call_all``
calls it for many with bounded concurrency, retries and a budget. This package knows
nothing of runs, cassettes or MLflow: the evaluation package turns answers into those.
"""

from ._base import ProviderAnswer, ProviderClient, Redactor
from ._calls import Budget, CallResult, call_all
from ._factory import VLLM_NO_KEY, make_client
from ._openai import ChatCompletionsClient, answer_from_completion, response_format
from ._pricing import PRICES_PER_MTOK, cost_usd, usage_tokens
from ._progress import Progress
from ._retry import RetryPolicy, TransportFailure, call_with_retries, retry_after_seconds

__all__ = [
    "PRICES_PER_MTOK",
    "VLLM_NO_KEY",
    "Budget",
    "CallResult",
    "ChatCompletionsClient",
    "Progress",
    "ProviderAnswer",
    "ProviderClient",
    "Redactor",
    "RetryPolicy",
    "TransportFailure",
    "answer_from_completion",
    "call_all",
    "call_with_retries",
    "cost_usd",
    "make_client",
    "response_format",
    "retry_after_seconds",
    "usage_tokens",
]
