"""Shared data and fixtures of the stub provider's tests: a three-conversation gold folder."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extraction_eval.contract import SAMPLING, batch_extraction_schema
from extraction_eval.gold import Conversation, load_gold

KEY = "sk-stub-test-0123456789"
MODEL = "gpt-4o-mini"

CONVERSATIONS = [
    {
        "conversation_id": "c001",
        "session_date": "2026-03-02",
        "turns": [
            {"role": "user", "content": "I moved to Lisbon last month and I only drink oat milk."},
            {"role": "assistant", "content": "Nice! How is Lisbon treating you?"},
        ],
    },
    {
        "conversation_id": "c002",
        "session_date": "2026-03-03",
        "turns": [{"role": "user", "content": "I'm running the Berlin marathon in September."}],
    },
    {
        "conversation_id": "c003",
        "session_date": "2026-03-04",
        "turns": [{"role": "user", "content": "What's the capital of Peru?"}],
    },
]
MEMORIES = [
    {
        "memory_id": "m001",
        "conversation_id": "c001",
        "content": "User lives in Lisbon.",
        "categories": ["factual"],
        "temporal_kind": "current",
        "supersedes": None,
    },
    {
        "memory_id": "m002",
        "conversation_id": "c001",
        "content": "User only drinks oat milk.",
        "categories": ["preference", "behavioral"],
        "temporal_kind": "durable",
        "supersedes": None,
    },
    {
        "memory_id": "m003",
        "conversation_id": "c002",
        "content": "User is running the Berlin marathon in September 2026.",
        "categories": ["episodic"],
        "temporal_kind": "future",
        "supersedes": None,
    },
]


def expected(cid: str) -> list[dict[str, Any]]:
    keys = ("content", "categories", "temporal_kind", "supersedes")
    return [{k: m[k] for k in keys} for m in MEMORIES if m["conversation_id"] == cid]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def gold_dir(tmp_path: Path) -> Path:
    gold = tmp_path / "gold"
    gold.mkdir()
    write_jsonl(gold / "conversations.jsonl", CONVERSATIONS)
    write_jsonl(gold / "expected_memories.jsonl", MEMORIES)
    return gold


@pytest.fixture
def conversations(gold_dir: Path) -> dict[str, Conversation]:
    return {c.conversation_id: c for c in load_gold(gold_dir, require_manifest=False).conversations}


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    yield
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        alive = [t.name for t in threading.enumerate() if t.name.startswith("stub-provider")]
        if not alive:
            return
        time.sleep(0.02)
    pytest.fail(f"stub provider threads still alive after the test: {alive!r}")


def request_body(messages: list[dict[str, str]], **overrides: Any) -> dict[str, Any]:
    return {
        "model": MODEL,
        "messages": messages,
        **SAMPLING,
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "BatchExtractionResult",
                "strict": True,
                "schema": batch_extraction_schema(),
            },
        },
        **overrides,
    }


def assert_close_cuts_the_request(server: Any, body: dict[str, Any], conversation_id: str = "c001") -> None:
    """Send ``body`` from another thread; once the stub has it, close() must end it at once."""
    import httpx

    outcome: list[BaseException] = []

    def client() -> None:
        try:
            httpx.post(
                f"{server.base_url}/chat/completions",
                json=body,
                headers={"Authorization": f"Bearer {KEY}"},
                timeout=10.0,
            )
        except httpx.HTTPError as exc:
            outcome.append(exc)

    caller = threading.Thread(target=client)
    caller.start()
    while server.attempts(conversation_id) == 0:
        time.sleep(0.01)
    start = time.monotonic()
    server.close()
    caller.join(15.0)
    assert time.monotonic() - start < 10.0  # the scripted latency or hang is 30 s
    assert [type(e) for e in outcome] == [httpx.RemoteProtocolError]
