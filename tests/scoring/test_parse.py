"""A provider answer becomes predictions or a typed failure; nothing is repaired."""

from __future__ import annotations

import json

from extraction_eval.scoring import FailureReason, Memory, Outcome, parse_response
from extraction_eval.scoring._parse import MAX_RESPONSE_CHARS, pathological
from extraction_eval.vocab import Category, TemporalKind

GOOD = json.dumps(
    {
        "memories": [
            {
                "content": "User is vegan.",
                "categories": ["factual", "behavioral"],
                "temporal_kind": "durable",
                "supersedes": None,
            }
        ]
    }
)


def test_valid_answer_parses() -> None:
    outcome = parse_response(GOOD, finish_reason="stop")
    assert outcome.failure is None
    (memory,) = outcome.predictions
    assert memory.categories == {Category.FACTUAL, Category.BEHAVIORAL}
    assert memory.temporal_kind is TemporalKind.DURABLE


def test_empty_list_is_a_valid_answer() -> None:
    outcome = parse_response('{"memories": []}')
    assert outcome.failure is None and outcome.predictions == ()


def test_each_failure_is_typed() -> None:
    cases = {
        FailureReason.REFUSAL: parse_response(None, refusal="I can't help with that."),
        FailureReason.LENGTH: parse_response('{"memories": [{"con', finish_reason="length"),
        FailureReason.CONTENT_FILTER: parse_response(None, finish_reason="content_filter"),
        FailureReason.EMPTY_RESPONSE: parse_response(None, finish_reason="stop"),
        FailureReason.INVALID_JSON: parse_response("Sure! Here are the memories: ..."),
        FailureReason.SCHEMA_INVALID: parse_response('{"memories": [{"content": "x"}]}'),
    }
    for reason, outcome in cases.items():
        assert outcome.failure is not None and outcome.failure.reason is reason
        assert outcome.predictions == ()


def test_schema_rules_extra_fields_duplicates_and_unknown_values_fail() -> None:
    base = {"content": "User is vegan.", "categories": ["factual"], "temporal_kind": "durable", "supersedes": None}
    for bad in (
        {**base, "confidence": 0.9},
        {**base, "categories": ["factual", "factual"]},
        {**base, "categories": []},
        {**base, "categories": ["factual", "procedural", "preference", "behavioral"]},
        {**base, "temporal_kind": "forever"},
        {k: v for k, v in base.items() if k != "supersedes"},
    ):
        outcome = parse_response(json.dumps({"memories": [bad]}))
        assert outcome.failure is not None and outcome.failure.reason is FailureReason.SCHEMA_INVALID, bad


# What a failed conversation keeps is its reason and its `error` text (per_conversation.jsonl,
# docs/data-format.md): each branch's whole Failure is pinned, the texts written out by hand.


def test_each_failure_keeps_the_error_a_reviewer_reads() -> None:
    long_refusal = "No. " * 60  # 240 characters: the error keeps the first 200
    prose = "Sure! Here are the memories I found in this conversation, as you asked me to: none."
    assert len(prose) > 80
    cases = {
        "refusal": (
            parse_response(None, refusal=long_refusal),
            FailureReason.REFUSAL,
            "provider refused: " + repr("No. " * 50),
        ),
        "length": (
            parse_response('{"memories": [', finish_reason="length"),
            FailureReason.LENGTH,
            "finish_reason 'length': output cut off",
        ),
        "content_filter": (
            parse_response("", finish_reason="content_filter"),
            FailureReason.CONTENT_FILTER,
            "finish_reason 'content_filter'",
        ),
        "empty": (parse_response("  \n "), FailureReason.EMPTY_RESPONSE, "the response has no content"),
        "not JSON": (
            parse_response(prose),
            FailureReason.INVALID_JSON,
            "not JSON (Expecting value at column 1): " + repr(prose[:80]),
        ),
    }
    for name, (outcome, reason, error) in cases.items():
        assert outcome.predictions == (), name
        assert outcome.failure is not None, name
        assert (outcome.failure.reason, outcome.failure.detail) == (reason, error), name


def test_json_python_cannot_convert_is_invalid_json_with_the_parsers_reason() -> None:
    # An integer of 5,000 digits is valid JSON that Python refuses to convert (its limit is
    # 4,300 digits): a typed invalid_json, its error the first 120 characters of Python's reason.
    response = '{"memories": ' + "7" * 5000 + "}"
    outcome = parse_response(response)
    reason = (
        "Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits; "
        "use sys.set_int_max_str_digits() to increase the limit"
    )
    assert len(reason) > 120
    assert outcome.failure is not None and outcome.predictions == ()
    assert outcome.failure.reason is FailureReason.INVALID_JSON
    assert outcome.failure.detail == f"not usable JSON ({reason[:120]}): " + repr('{"memories": ' + "7" * 67)


def test_a_schema_error_names_where_the_first_problem_is_and_how_many_there_are() -> None:
    nested = parse_response('{"memories": [{"content": 1}]}')
    assert nested.failure is not None and nested.failure.reason is FailureReason.SCHEMA_INVALID
    # content is no string, and categories, temporal_kind and supersedes are missing: 4 errors
    assert nested.failure.detail == (
        "breaks BatchExtractionResult: memories.0.content: Input should be a valid string (4 error(s))"
    )
    root = parse_response("[]")
    assert root.failure is not None and root.failure.reason is FailureReason.SCHEMA_INVALID
    assert root.failure.detail == (
        "breaks BatchExtractionResult: (root): Input should be a valid dictionary or instance of "
        "BatchExtractionResult (1 error(s))"
    )


def test_every_field_of_a_memory_is_kept() -> None:
    answer = {
        "memories": [
            {
                "content": "User moved to Lyon in March.",
                "categories": ["factual"],
                "temporal_kind": "current",
                "supersedes": "User lives in Paris.",
            }
        ]
    }
    outcome = parse_response(json.dumps(answer), finish_reason="stop")
    assert outcome == Outcome(
        predictions=(
            Memory(
                content="User moved to Lyon in March.",
                categories=frozenset({Category.FACTUAL}),
                temporal_kind=TemporalKind.CURRENT,
                supersedes="User lives in Paris.",
            ),
        )
    )


def test_the_size_limit_is_one_million_characters_inclusive() -> None:
    # docs/reliability.md: "an answer over 1,000,000 characters is too_large", never parsed.
    at_limit = '{"memories": []}'.ljust(MAX_RESPONSE_CHARS)
    assert len(at_limit) == 1_000_000
    assert pathological(at_limit) is None
    assert parse_response(at_limit) == Outcome()
    over = at_limit + " "
    expected = Outcome.failed(FailureReason.TOO_LARGE, "the answer has 1,000,001 characters (limit 1,000,000)")
    assert pathological(over) == expected
    assert parse_response(over) == expected


def test_the_depth_limit_is_64_levels_inclusive() -> None:
    # docs/reliability.md: "one nested deeper than 64 levels ... is too_nested", before json.loads.
    def nested(depth: int) -> str:  # {"memories": [[...]]}: the object is level 1
        return '{"memories": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"

    assert pathological(nested(64)) is None
    at_limit = parse_response(nested(64))
    assert at_limit.failure is not None and at_limit.failure.reason is FailureReason.SCHEMA_INVALID
    expected = Outcome.failed(FailureReason.TOO_NESTED, "the answer nests deeper than 64 levels")
    assert pathological(nested(65)) == expected
    assert parse_response(nested(65)) == expected


def test_content_that_is_not_text_is_a_malformed_response() -> None:
    # docs/reliability.md: "content that is not text ... is malformed_response"; the error
    # names its type and the first 80 characters of it.
    content = list(range(40))
    outcome = parse_response(content)  # type: ignore[arg-type]
    assert outcome == Outcome.failed(
        FailureReason.MALFORMED_RESPONSE, "content is list, not text: " + repr(str(content)[:80])
    )
    assert len(str(content)) > 80
    assert pathological(None) is None
