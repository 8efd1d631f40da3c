"""The judge's contract: its versioned prompt (a package file) and hash, the request it sends
for a pair of texts, and how its answer is read. Pure: no network (``providers`` calls)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from .._jsonio import sha256_hex

JUDGE_PROMPT_FILE = "judge_prompt.md"
#: The judge matcher's version: a new prompt is a new version (and a new hash in every key).
JUDGE_VERSION = "1"
JUDGE_SCHEMA_NAME = "SameFactJudgment"
JUDGE_SAMPLING: dict[str, Any] = {"temperature": 0.0, "top_p": 1.0, "max_completion_tokens": 16, "seed": 20260901}
_A, _B = "Text A:\n", "\n\nText B:\n"


@cache
def _prompt_bytes() -> bytes:
    return resources.files(__package__).joinpath(JUDGE_PROMPT_FILE).read_bytes()


def judge_prompt() -> str:
    return _prompt_bytes().decode("utf-8")


def judge_prompt_sha256() -> str:
    """sha256 of the UTF-8 bytes of the judge prompt: part of every judgment's key."""
    return sha256_hex(_prompt_bytes())


def judge_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"same_fact": {"type": "boolean"}},
        "required": ["same_fact"],
        "additionalProperties": False,
    }


def judge_messages(a: str, b: str) -> list[dict[str, str]]:
    """The judge's request for texts A and B: the prompt, then both texts."""
    return [{"role": "system", "content": judge_prompt()}, {"role": "user", "content": f"{_A}{a}{_B}{b}"}]


def judge_pair(messages: Any) -> tuple[str, str] | None:
    """(A, B) from a judge request's messages, or None when they are not one (the stub reads it)."""
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return None
    text = messages[-1].get("content")
    if not isinstance(text, str) or not text.startswith(_A) or _B not in text:
        return None
    a, b = text[len(_A) :].split(_B, 1)
    return a, b


def read_judgment(
    content: str | None, finish_reason: str | None, refusal: str | None
) -> tuple[bool | None, dict[str, str] | None]:
    """``(same_fact, None)``, or ``(None, {"reason", "detail"})`` when the answer is not a judgment
    (refused, cut off, filtered, not JSON, not ``{"same_fact": bool}``): never repaired."""
    if refusal:
        return None, {"reason": "refusal", "detail": refusal[:300]}
    if finish_reason in ("length", "content_filter"):
        return None, {"reason": finish_reason, "detail": f"finish_reason {finish_reason}"}
    if not content:
        return None, {"reason": "empty_response", "detail": "no content"}
    try:
        value = json.loads(content)
    except json.JSONDecodeError as exc:
        return None, {"reason": "invalid_json", "detail": f"not JSON ({exc.msg}): {content[:120]!r}"}
    if not isinstance(value, dict) or set(value) != {"same_fact"} or not isinstance(value["same_fact"], bool):
        return None, {"reason": "schema_invalid", "detail": f"not {{'same_fact': true|false}}: {content[:120]!r}"}
    return value["same_fact"], None
