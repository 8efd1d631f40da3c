"""What a call cost: tokens from a usage block, dollars from a price table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: USD per 1M tokens (input, output); docs/providers.md says where they come from.
PRICES_PER_MTOK: Mapping[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
}


def usage_tokens(usage: Mapping[str, Any] | None) -> tuple[int | None, int | None]:
    """(input, output) tokens of an OpenAI-style usage block; None where it does not say."""
    if not usage:
        return None, None
    prompt = usage.get("prompt_tokens", usage.get("input_tokens"))
    completion = usage.get("completion_tokens", usage.get("output_tokens"))
    return _count(prompt), _count(completion)


#: No real count comes near it; a larger one (``10**400``) is not a count, and never reaches arithmetic.
MAX_TOKEN_COUNT = 10**9


def _count(value: Any) -> int | None:
    """A token count, or None for anything that is not one (a string, a float, a bool, a number
    beyond MAX_TOKEN_COUNT)."""
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKEN_COUNT
    return value if ok else None


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """The estimated cost in USD, or None for a model with no known price."""
    price = PRICES_PER_MTOK.get(model)
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000
