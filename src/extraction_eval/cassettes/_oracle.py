"""Oracle-aligned cassettes: each response is its conversation's expected memories.

They make the scorer, replay and gate testable for free. A perfect score on them
proves the plumbing, not the model; every report built on them says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..contract import BatchExtractionResult, ExtractedMemory
from ..gold import (
    CASSETTES_FILE,
    MANIFEST_FILE,
    CassetteManifest,
    ExpectedMemory,
    load_gold,
    load_manifest,
)
from ..gold._load import gold_version
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

ORACLE_MODEL = "gpt-4o-mini"


def oracle_result(memories: Sequence[ExpectedMemory]) -> BatchExtractionResult:
    """The expected memories as the answer a perfect extractor gives."""
    return BatchExtractionResult(
        memories=[
            ExtractedMemory(
                content=m.content,
                categories=list(m.categories),
                temporal_kind=m.temporal_kind,
                supersedes=m.supersedes,
            )
            for m in memories
        ]
    )


def oracle_response(memories: Sequence[ExpectedMemory]) -> str:
    """The expected memories as a ``BatchExtractionResult`` JSON string."""
    return oracle_result(memories).model_dump_json()


@dataclass(frozen=True)
class OracleResult:
    cassettes_written: int
    cassettes_kept: int
    manifest_written: bool
    manifest: CassetteManifest


def write_oracle_cassettes(gold_dir: Path, *, model: str = ORACLE_MODEL) -> OracleResult:
    """Write oracle-aligned cassettes and the manifest for a gold folder.

    An existing row whose content would not change is kept byte for byte, so
    re-running is idempotent and a diff shows only what moved.
    """
    manifest_path = gold_dir / MANIFEST_FILE
    previous = load_manifest(manifest_path) if manifest_path.exists() else None
    gold = load_gold(gold_dir, require_manifest=False)
    version = gold_version(gold_dir, previous)
    cassette_path = gold_dir / CASSETTES_FILE
    existing = existing_cassettes(cassette_path)

    stamp = now_iso()
    fresh = {
        c.conversation_id: new_cassette(
            c,
            model,
            CassetteKind.ORACLE_ALIGNED,
            recorded_at=stamp,
            response=oracle_response(gold.by_conversation[c.conversation_id]),
            finish_reason="stop",
        )
        for c in gold.conversations
    }
    entries, keep = keep_unchanged(fresh, existing, stamp)
    order = [c.conversation_id for c in gold.conversations]
    write_cassettes(cassette_path, order, entries, keep_raw=keep)
    manifest = build_manifest(
        gold,
        provider=Provider.OPENAI.value,
        model=model,
        kind=CassetteKind.ORACLE_ALIGNED,
        cassettes=list(entries.values()),
        previous=previous,
        version=version,
    )
    written = write_manifest(manifest_path, manifest, previous)
    return OracleResult(
        cassettes_written=len(entries) - len(keep),
        cassettes_kept=len(keep),
        manifest_written=written,
        manifest=manifest if written or previous is None else previous,
    )
