"""Realistic answer sets: answers written blind to the gold rows, stored as cassettes.

An answer set lives in ``<gold>/answers/<name>/``:

- ``answers.jsonl``: what the writers wrote, one row per conversation,
  ``{"conversation_id", "writer", "memories": [...]}`` (``memories`` as the prompt's JSON
  object holds them); the source of truth, with who wrote what;
- ``openai_cassettes.jsonl`` and ``cassette_manifest.json``: the same answers as cassettes
  of kind ``hand_written_blind`` (model ``hand-written``), written by
  ``extraction-eval cassettes answers``, so a run replays them through the same parse,
  validation and scoring path as a recorded model;
- ``matches.jsonl``: the reviewers' adjudicated match decisions (``evaluation/_reviewing.py``).

Each response is the writer's JSON as written (``{"memories": [...]}``): an answer that breaks
the schema scores as a failed conversation, as a model's would.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .._exceptions import GoldDataError
from .._jsonio import iter_jsonl
from ..gold import CASSETTES_FILE, MANIFEST_FILE, CassetteManifest, load_gold, load_manifest
from ..gold._load import answer_set_dir
from ..vocab import CassetteKind, Provider
from ._store import (
    build_manifest,
    existing_cassettes,
    keep_unchanged,
    new_cassette,
    now_iso,
    write_cassettes,
    write_manifest,
)

ANSWERS_FILE = "answers.jsonl"
#: The model name of hand-written cassettes: never a real model's, so no report can mistake them.
HAND_WRITTEN_MODEL = "hand-written"


@dataclass(frozen=True)
class WrittenAnswer:
    """One row of ``answers.jsonl``."""

    conversation_id: str
    writer: str
    memories: tuple[Mapping[str, Any], ...]

    def response(self) -> str:
        """The answer as the model's raw message content: ``{"memories": [...]}``."""
        return json.dumps({"memories": list(self.memories)}, ensure_ascii=False, separators=(",", ":"))


def read_answers(path: Path, conversation_ids: Sequence[str]) -> dict[str, WrittenAnswer]:
    """``answers.jsonl``, checked: one row per conversation of the gold folder, each with a writer."""
    fix = "every conversation of the gold folder needs exactly one row {conversation_id, writer, memories}"
    if not path.is_file():
        raise GoldDataError(f"{path}: file not found; an answer set's source is its answers.jsonl ({fix}).")
    known = set(conversation_ids)
    out: dict[str, WrittenAnswer] = {}
    for row in iter_jsonl(path):
        value = row.value
        where = f"{path}:{row.line}"
        if not isinstance(value, dict) or set(value) != {"conversation_id", "writer", "memories"}:
            keys = sorted(value) if isinstance(value, dict) else type(value).__name__
            raise GoldDataError(f"{where}: keys must be conversation_id, writer, memories, not {keys!r}; {fix}.")
        cid, writer, memories = value["conversation_id"], value["writer"], value["memories"]
        if cid not in known:
            raise GoldDataError(f"{where}: field 'conversation_id': {cid!r} is not a conversation of the gold folder.")
        if cid in out:
            raise GoldDataError(f"{where}: field 'conversation_id': {cid!r} is answered twice; keep one row.")
        if not isinstance(writer, str) or not writer:
            raise GoldDataError(f"{where}: field 'writer' must name who wrote the answer (e.g. 'w1').")
        if not isinstance(memories, list) or not all(isinstance(m, dict) for m in memories):
            raise GoldDataError(f"{where}: field 'memories' must be a list of memory objects.")
        out[cid] = WrittenAnswer(cid, writer, tuple(memories))
    missing = [c for c in conversation_ids if c not in out]
    if missing:
        raise GoldDataError(f"{path}: {len(missing)} conversation(s) have no answer, first {missing[:5]!r}; {fix}.")
    return out


@dataclass(frozen=True)
class AnswerSetResult:
    cassettes_written: int
    cassettes_kept: int
    manifest_written: bool
    manifest: CassetteManifest
    writers: Mapping[str, int]


def write_answer_cassettes(gold_dir: Path, name: str) -> AnswerSetResult:
    """Write an answer set's cassettes and manifest from its ``answers.jsonl``.

    Unchanged rows are kept byte for byte, so re-running is idempotent."""
    gold = load_gold(gold_dir, require_manifest=False)
    folder = answer_set_dir(gold_dir, name)
    order = [c.conversation_id for c in gold.conversations]
    answers = read_answers(folder / ANSWERS_FILE, order)
    manifest_path = folder / MANIFEST_FILE
    previous = load_manifest(manifest_path) if manifest_path.exists() else None
    existing = existing_cassettes(folder / CASSETTES_FILE)
    stamp = now_iso()
    fresh = {
        c.conversation_id: new_cassette(
            c,
            HAND_WRITTEN_MODEL,
            CassetteKind.HAND_WRITTEN_BLIND,
            recorded_at=stamp,
            response=answers[c.conversation_id].response(),
            finish_reason="stop",
        )
        for c in gold.conversations
    }
    entries, keep = keep_unchanged(fresh, existing, stamp)
    write_cassettes(folder / CASSETTES_FILE, order, entries, keep_raw=keep)
    manifest = build_manifest(
        replace(gold, answer_set=name),  # the cassette file's hash is the answer set's
        provider=Provider.OPENAI.value,
        model=HAND_WRITTEN_MODEL,
        kind=CassetteKind.HAND_WRITTEN_BLIND,
        cassettes=list(entries.values()),
        previous=previous,
        version=gold.version,
    )
    written = write_manifest(manifest_path, manifest, previous)
    writers: dict[str, int] = {}
    for answer in answers.values():
        writers[answer.writer] = writers.get(answer.writer, 0) + 1
    return AnswerSetResult(
        cassettes_written=len(entries) - len(keep),
        cassettes_kept=len(keep),
        manifest_written=written,
        manifest=manifest if written or previous is None else previous,
        writers=dict(sorted(writers.items())),
    )
