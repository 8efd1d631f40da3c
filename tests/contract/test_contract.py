"""The prompt, the schema and the request hash, computed exactly as the contract says."""

from __future__ import annotations

import hashlib
import json
import re
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
from extraction_eval.vocab import Category, TemporalKind


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


def prompt_sections() -> dict[str, str]:
    """The system prompt's ``# Heading`` sections, heading -> body."""
    parts = re.split(r"^# (.+)\n", system_prompt(), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def bullets(body: str) -> list[str]:
    """The backticked names that open a section's bullets: "- `name`: ..."."""
    return re.findall(r"^- `(\w+)`: ", body, flags=re.M)


def test_prompt_defines_what_a_shipped_prompt_must() -> None:
    sections = prompt_sections()
    assert list(sections) == [
        "Input",
        "What to extract",
        "Categories",
        "Temporal kinds",
        "Dates",
        "Updates and corrections",
        "How to write a memory",
        "Output",
    ]
    # the five categories and four temporal kinds, each defined by a bullet, in vocabulary order
    categories = ["factual", "procedural", "preference", "behavioral", "episodic"]
    kinds = ["durable", "current", "past", "future"]
    assert categories == [c.value for c in Category] and kinds == [k.value for k in TemporalKind]
    assert bullets(sections["Categories"]) == categories
    assert bullets(sections["Temporal kinds"]) == kinds
    # what is not worth remembering, and that nothing at all is a valid answer
    worth = sections["What to extract"]
    for sentence in (
        "Extract only what the user reveals about themselves: their facts, methods, preferences, habits and "
        "events. Do not extract:\n",
        "- anything the assistant says, suggests or explains, unless the user explicitly confirms it as true of "
        "themselves;\n",
        "- general knowledge, trivia, or answers to questions;\n",
        '- hypotheticals ("if I moved to Japan..."), jokes, sarcasm and role play;\n',
        "- facts about other people that say nothing lasting about the user;\n",
        "- one-off requests (translate this, summarise that, compute this number);\n",
        '- greetings, thanks, small talk and passing moods ("I\'m tired today").\n',
        "If nothing in the conversation is worth remembering, return an empty list. Returning nothing is correct "
        "and common.",
    ):
        assert sentence in worth, sentence
    # the supersession rule
    updates = sections["Updates and corrections"]
    for sentence in (
        "When the user corrects something they said earlier in the conversation, or reports that a fact about "
        "them has changed, extract only the new fact and put the old fact in `supersedes`, written in the same "
        'style as a memory (for example, content "User lives in Lisbon." with supersedes "User lives in Porto.").',
        "Never extract the old fact as a memory of its own.",
        "Use `supersedes: null` for every other memory.",
    ):
        assert sentence in updates, sentence
    assert "in `YYYY-MM-DD` form" in sections["Dates"]
    # the output format names exactly the schema's keys
    schema = batch_extraction_schema()
    memory_keys = ["content", "categories", "temporal_kind", "supersedes"]
    assert list(schema["properties"]) == ["memories"]
    assert list(schema["$defs"]["ExtractedMemory"]["properties"]) == memory_keys
    output = sections["Output"]
    assert output.startswith(
        "\nReturn a JSON object with one key, `memories`: a list of objects with exactly these keys:\n"
    )
    assert bullets(output) == memory_keys


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
