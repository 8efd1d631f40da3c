"""The prompt, the schema and the request hash, computed exactly as the contract says."""

from __future__ import annotations

import hashlib
import json
from importlib import resources

from extraction_eval.contract import (
    SAMPLING,
    BatchExtractionResult,
    batch_extraction_schema,
    prompt_sha256,
    render_conversation,
    request_messages,
    request_sha256,
    schema_sha256,
    system_prompt,
)
from extraction_eval.gold import Conversation, Turn


def conversation(**changes: object) -> Conversation:
    base = {
        "conversation_id": "c1",
        "session_date": "2026-03-04",
        "turns": (Turn(role="user", content="i moved to lisbon"), Turn(role="assistant", content="Nice!")),
    }
    return Conversation(**{**base, **changes})


def test_prompt_hash_is_sha256_of_the_utf8_bytes() -> None:
    raw = resources.files("extraction_eval.contract").joinpath("batch_extraction_system_prompt.md").read_bytes()
    assert prompt_sha256() == hashlib.sha256(raw).hexdigest()
    assert system_prompt().encode("utf-8") == raw


def test_prompt_defines_what_a_shipped_prompt_must() -> None:
    text = system_prompt()
    for word in (
        "factual",
        "procedural",
        "preference",
        "behavioral",
        "episodic",
        "durable",
        "current",
        "past",
        "future",
        "supersedes",
        "YYYY-MM-DD",
    ):
        assert f"`{word}`" in text or word in text, word
    assert "empty list" in text  # nothing worth remembering is a valid answer


def test_schema_hash_is_sha256_of_canonical_json() -> None:
    schema = BatchExtractionResult.model_json_schema()
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert schema_sha256() == hashlib.sha256(canonical).hexdigest()


def test_schema_is_strict() -> None:
    schema = batch_extraction_schema()
    memory = schema["$defs"]["ExtractedMemory"]
    assert schema["additionalProperties"] is False and memory["additionalProperties"] is False
    assert sorted(memory["required"]) == sorted(memory["properties"])
    assert schema["required"] == ["memories"]
    # OpenAI strict mode rejects $ref with sibling keywords
    assert memory["properties"]["temporal_kind"] == {"$ref": "#/$defs/TemporalKind"}


def test_request_hash_covers_model_sampling_and_rendered_messages_not_the_system_prompt() -> None:
    conv = conversation()
    payload = {"model": "gpt-4o-mini", "sampling": dict(SAMPLING), "messages": request_messages(conv)}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert request_sha256(conv, "gpt-4o-mini") == hashlib.sha256(canonical).hexdigest()
    assert all(m["role"] != "system" for m in request_messages(conv))
    assert request_sha256(conv, "gpt-4o") != request_sha256(conv, "gpt-4o-mini")
    assert request_sha256(conversation(session_date="2026-03-05"), "gpt-4o-mini") != request_sha256(conv, "gpt-4o-mini")


def test_rendering_names_the_weekday_and_each_role() -> None:
    text = render_conversation(conversation())
    assert text.startswith("Session date: 2026-03-04 (Wednesday)")
    assert '<turn role="user">\ni moved to lisbon\n</turn>' in text
    assert '<turn role="assistant">\nNice!\n</turn>' in text
