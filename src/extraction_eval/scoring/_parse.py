"""Turn a provider's raw answer into predictions or a typed failure (never repaired)."""

from __future__ import annotations

import json

from pydantic import ValidationError

from .._json import MAX_JSON_DEPTH, json_depth
from ..contract import BatchExtractionResult
from ._types import FailureReason, Memory, Outcome

#: The largest answer the harness parses or records (characters); a real one is a few thousand.
MAX_RESPONSE_CHARS = 1_000_000


def pathological(response: str | None) -> Outcome | None:
    """The typed failure of an answer too large or too deeply nested to parse or keep; else None."""
    if response is None:
        return None
    if not isinstance(response, str):
        return Outcome.failed(
            FailureReason.MALFORMED_RESPONSE, f"content is {type(response).__name__}, not text: {str(response)[:80]!r}"
        )
    if len(response) > MAX_RESPONSE_CHARS:
        return Outcome.failed(
            FailureReason.TOO_LARGE, f"the answer has {len(response):,} characters (limit {MAX_RESPONSE_CHARS:,})"
        )
    if json_depth(response) > MAX_JSON_DEPTH:
        return Outcome.failed(FailureReason.TOO_NESTED, f"the answer nests deeper than {MAX_JSON_DEPTH} levels")
    return None


def parse_response(response: str | None, *, finish_reason: str | None = None, refusal: str | None = None) -> Outcome:
    """The same path for a live answer and a replayed cassette.

    A refusal, a ``length`` or ``content_filter`` finish, an empty answer, text that
    is not JSON or JSON that breaks the schema is a failed conversation.
    """
    if refusal:
        return Outcome.failed(FailureReason.REFUSAL, f"provider refused: {str(refusal)[:200]!r}")
    if finish_reason == "length":
        return Outcome.failed(FailureReason.LENGTH, "finish_reason 'length': output cut off")
    if finish_reason == "content_filter":
        return Outcome.failed(FailureReason.CONTENT_FILTER, "finish_reason 'content_filter'")
    if (bad := pathological(response)) is not None:
        return bad
    if response is None or not response.strip():
        return Outcome.failed(FailureReason.EMPTY_RESPONSE, "the response has no content")
    try:
        data = json.loads(response)
    except RecursionError:  # pragma: no cover - pathological() measured the depth first
        return Outcome.failed(FailureReason.TOO_NESTED, "the answer nests too deeply to parse")
    except json.JSONDecodeError as exc:
        return Outcome.failed(
            FailureReason.INVALID_JSON,
            f"not JSON ({exc.msg} at column {exc.colno}): {response[:80]!r}",
        )
    except ValueError as exc:  # e.g. an integer longer than Python converts
        return Outcome.failed(FailureReason.INVALID_JSON, f"not usable JSON ({str(exc)[:120]}): {response[:80]!r}")
    try:
        result = BatchExtractionResult.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        return Outcome.failed(
            FailureReason.SCHEMA_INVALID,
            f"breaks BatchExtractionResult: {where}: {first['msg']} ({exc.error_count()} error(s))",
        )
    return Outcome(
        predictions=tuple(
            Memory(
                content=m.content,
                categories=frozenset(m.categories),
                temporal_kind=m.temporal_kind,
                supersedes=m.supersedes,
            )
            for m in result.memories
        )
    )
