"""Providers: live calls to OpenAI and vLLM (issue 4)."""

from __future__ import annotations

from typing import Any


def collect_live(*args: Any, **kwargs: Any) -> Any:
    from .._exceptions import ConfigurationError

    raise ConfigurationError("live providers are not built yet")
