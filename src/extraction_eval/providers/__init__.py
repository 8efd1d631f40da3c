"""Providers: live calls to OpenAI and vLLM through the ``openai`` SDK."""

from ._base import Provider, ProviderAnswer, Redactor
from ._calls import Budget, CallResult, call_all
from ._collect import collect_live
from ._factory import check_record_settings, make_provider
from ._openai import ChatCompletionsProvider, response_format
from ._retry import RetryPolicy, TransportFailure, call_with_retries, retry_after_seconds

__all__ = [
    "Budget",
    "CallResult",
    "ChatCompletionsProvider",
    "Provider",
    "ProviderAnswer",
    "Redactor",
    "RetryPolicy",
    "TransportFailure",
    "call_all",
    "call_with_retries",
    "check_record_settings",
    "collect_live",
    "make_provider",
    "response_format",
    "retry_after_seconds",
]
