"""A provider answer becomes predictions or a typed failure; nothing is repaired."""

from __future__ import annotations

import json

from extraction_eval.scoring import FailureReason, parse_response
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
