"""``responses.jsonl``: every answer of a run, raw, so ``rescore`` can score it again with no call.

One row per conversation per sample (docs/data-format.md): ``{"conversation_id", "sample",
"response", "finish_reason", "refusal", "system_fingerprint", "usage", "recorded_at",
"transport_failure": {"reason", "detail"} or null}``. The response is the provider's text
exactly as it came back (redacted as the cassette is); reading the file back gives the same
``Answer`` and so, through ``Answer.outcome``, the same parse.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._exceptions import ConfigurationError
from .._jsonio import atomic_write_lines, dumps_line
from ..providers import usage_tokens
from ..scoring import Failure, FailureReason
from ._answers import Answer

RESPONSES_FILE = "responses.jsonl"
_FIELDS = (
    "conversation_id",
    "sample",
    "response",
    "finish_reason",
    "refusal",
    "system_fingerprint",
    "usage",
    "recorded_at",
    "transport_failure",
)


def response_row(answer: Answer, sample: int = 0) -> dict[str, Any]:
    """One answer as a row of responses.jsonl."""
    failure = answer.failure
    return {
        "conversation_id": answer.conversation_id,
        "sample": sample,
        "response": answer.response,
        "finish_reason": answer.finish_reason,
        "refusal": answer.refusal,
        "system_fingerprint": answer.system_fingerprint,
        "usage": None if answer.usage is None else dict(answer.usage),
        "recorded_at": answer.recorded_at,
        "transport_failure": None if failure is None else {"reason": failure.reason.value, "detail": failure.detail},
    }


def write_responses(output_dir: Path, answers: Sequence[Answer], samples: Sequence[int] = ()) -> Path:
    """responses.jsonl in ``output_dir``, in the order given (the gold order, sample by sample).

    ``samples`` gives each answer's sample index on a ``--repeat`` run (empty: every row is
    sample 0)."""
    path = output_dir / RESPONSES_FILE
    indexes = samples or (0,) * len(answers)
    rows = (dumps_line(response_row(a, s)) + "\n" for a, s in zip(answers, indexes, strict=True))
    atomic_write_lines(path, rows)
    return path


def _bad(source: str, number: int, field: str, why: str) -> ConfigurationError:
    return ConfigurationError(
        f"{source} line {number}: field {field!r} {why}; this file is written by `extraction-eval run` "
        "and is not edited by hand: rerun the run, or rescore another run."
    )


def _answer(row: Mapping[str, Any], source: str, number: int) -> Answer:
    for name in _FIELDS:
        if name not in row:
            raise _bad(source, number, name, "is missing")
    for name in ("response", "finish_reason", "refusal", "system_fingerprint", "recorded_at"):
        if row[name] is not None and not isinstance(row[name], str):
            raise _bad(source, number, name, "must be a string or null")
    usage = row["usage"]
    if usage is not None and not isinstance(usage, dict):
        raise _bad(source, number, "usage", "must be an object or null")
    failure = None
    raw_failure = row["transport_failure"]
    if raw_failure is not None:
        try:
            failure = Failure(FailureReason(raw_failure["reason"]), str(raw_failure["detail"]))
        except (KeyError, TypeError, ValueError):
            reasons = [r.value for r in FailureReason]
            why = f"must be null or {{'reason': one of {reasons}, 'detail': text}}"
            raise _bad(source, number, "transport_failure", why) from None
    tokens_in, tokens_out = usage_tokens(usage)
    return Answer(
        conversation_id=str(row["conversation_id"]),
        response=row["response"],
        finish_reason=row["finish_reason"],
        refusal=row["refusal"],
        failure=failure,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        system_fingerprint=row["system_fingerprint"],
        recorded_at=row["recorded_at"],
        usage=usage,
    )


def parse_responses(text: str, source: str) -> dict[str, Answer]:
    """The answers of sample 0, by conversation id; ``source`` names the file in errors."""
    answers: dict[str, Answer] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ConfigurationError(f"{source} line {number}: not JSON ({exc}).") from None
        if not isinstance(row, dict):
            raise ConfigurationError(f"{source} line {number}: a row must be a JSON object.")
        if row.get("sample", 0) != 0:
            raise _bad(source, number, "sample", f"is {row.get('sample')!r}: rescore reads single-sample runs only")
        answer = _answer(row, source, number)
        if answer.conversation_id in answers:
            raise _bad(source, number, "conversation_id", f"repeats {answer.conversation_id!r}")
        answers[answer.conversation_id] = answer
    if not answers:
        raise ConfigurationError(f"{source}: no responses in it; rescore needs the run's answers.")
    return answers
