"""What the stub answers and refuses, without a server: strict-schema checks, behaviour
scripts and answer-set files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extraction_eval._exceptions import ConfigurationError, GoldDataError
from extraction_eval.contract import batch_extraction_schema
from extraction_eval.stub_provider import Behavior, StubScript, load_answer_set, strict_schema_errors

from .conftest import write_jsonl

# --- strict schema -------------------------------------------------------------------------


def test_project_schema_is_strict_compatible() -> None:
    assert strict_schema_errors(batch_extraction_schema()) == []


def _drop_additional(s: dict[str, Any]) -> None:
    del s["$defs"]["ExtractedMemory"]["additionalProperties"]


def _optional_field(s: dict[str, Any]) -> None:
    s["$defs"]["ExtractedMemory"]["required"].remove("supersedes")


def _ref_sibling(s: dict[str, Any]) -> None:
    s["$defs"]["ExtractedMemory"]["properties"]["temporal_kind"]["description"] = "x"


def _keyword(path: tuple[str, ...], key: str, value: Any) -> Any:
    def mutate(s: dict[str, Any]) -> None:
        node = s
        for part in path:
            node = node[part]
        node[key] = value

    return mutate


CONTENT = ("$defs", "ExtractedMemory", "properties", "content")
CATEGORIES = ("$defs", "ExtractedMemory", "properties", "categories")


@pytest.mark.parametrize(
    ("mutate", "path", "needle"),
    [
        (_drop_additional, "#/$defs/ExtractedMemory", "'additionalProperties' is required"),
        (_optional_field, "#/$defs/ExtractedMemory", "Missing ['supersedes']"),
        (_ref_sibling, "#/$defs/ExtractedMemory/properties/temporal_kind", "'$ref' cannot have"),
        (
            _keyword(CONTENT, "default", "User"),
            "#/$defs/ExtractedMemory/properties/content",
            "'default' is not permitted",
        ),
        (
            _keyword(CATEGORIES, "uniqueItems", True),
            "#/$defs/ExtractedMemory/properties/categories",
            "'uniqueItems' is not permitted",
        ),
        (
            _keyword((), "patternProperties", {"^x": {"type": "string"}}),
            "#",
            "'patternProperties' is not permitted",
        ),
        (
            _keyword(CONTENT, "if", {"type": "string"}),
            "#/$defs/ExtractedMemory/properties/content",
            "'if' is not permitted",
        ),
        (
            _keyword(CONTENT, "not", {"type": "null"}),
            "#/$defs/ExtractedMemory/properties/content",
            "'not' is not permitted",
        ),
        (
            _keyword(("$defs", "ExtractedMemory"), "dependentRequired", {"content": ["supersedes"]}),
            "#/$defs/ExtractedMemory",
            "'dependentRequired' is not permitted",
        ),
        (
            _keyword(CONTENT, "type", "date"),
            "#/$defs/ExtractedMemory/properties/content",
            "type 'date' is not supported",
        ),
        (
            _keyword(("properties", "memories", "items"), "$ref", "#/$defs/Missing"),
            "#/properties/memories/items",
            "can't be resolved",
        ),
    ],
)
def test_strict_schema_rejections_name_the_path(mutate: Any, path: str, needle: str) -> None:
    schema = batch_extraction_schema()
    mutate(schema)
    errors = strict_schema_errors(schema)
    assert any(f"In context={path!r}" in e and needle in e for e in errors), errors


def test_strict_schema_root_must_be_an_object() -> None:
    errors = strict_schema_errors({"anyOf": [{"type": "string"}, {"type": "null"}]})
    assert errors == ["In context='#', the root schema must be of type 'object' and not use 'anyOf'."]


# --- answer sets -----------------------------------------------------------------------------


def test_answer_set_rows_are_read_by_conversation(tmp_path: Path) -> None:
    mine = [
        {"content": "User likes chess.", "categories": ["preference"], "temporal_kind": "durable", "supersedes": None}
    ]
    path = write_jsonl(tmp_path / "answers.jsonl", [{"conversation_id": "c002", "memories": mine}])
    assert load_answer_set(path) == {"c002": mine}


def test_answer_set_with_a_duplicate_conversation_is_refused(tmp_path: Path) -> None:
    row = {"conversation_id": "c001", "memories": []}
    path = write_jsonl(tmp_path / "answers.jsonl", [row, row])
    with pytest.raises(GoldDataError, match=r"answers.jsonl:2: conversation 'c001' appears twice"):
        load_answer_set(path)


# --- behaviour scripts -------------------------------------------------------------------


def test_script_merges_conversation_over_default(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps(
            {
                "default": {"latency_ms": 5, "answer": "refusal"},
                "conversations": {"c001": {"answer": "ok"}},
            }
        )
    )
    script = StubScript.load(path)
    assert script.behavior_for("c001") == Behavior(latency_ms=5, answer="ok")
    assert script.behavior_for("c009") == Behavior(latency_ms=5, answer="refusal")
    assert Behavior(fail_first=(429, "hang")).failure_for(2) == "hang"
    assert Behavior(fail_first=(429, "hang")).failure_for(3) is None


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({"default": {"anser": "ok"}}, "unknown behaviour key(s) ['anser']"),
        ({"default": {"answer": "maybe"}}, "answer 'maybe' is unknown"),
        ({"default": {"fail_first": ["explode"]}}, "fail_first entry 'explode' is unknown"),
        ({"defaults": {}}, "unknown top-level key(s) ['defaults']"),
    ],
)
def test_bad_script_is_refused(raw: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        StubScript.from_dict(raw)
    assert needle in str(caught.value)
