"""Writing cassette files and manifests atomically, keeping unchanged rows byte-identical."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._jsonio import atomic_write_bytes, dumps_line, sha256_file, write_json
from ..contract import prompt_sha256, request_sha256, schema_sha256
from ..gold import (
    CASSETTES_FILE,
    Cassette,
    CassetteManifest,
    Conversation,
    GoldSet,
    LabelReview,
    ManifestCounts,
    choose_subsets,
    load_cassettes,
)
from ..vocab import CassetteKind


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def new_cassette(
    conversation: Conversation,
    model: str,
    kind: CassetteKind,
    *,
    recorded_at: str,
    response: str | None,
    finish_reason: str | None,
    refusal: str | None = None,
    system_fingerprint: str | None = None,
    usage: Mapping[str, Any] | None = None,
) -> Cassette:
    """One answer as a cassette, stamped with the current contract's hashes."""
    return Cassette(
        conversation_id=conversation.conversation_id,
        request_sha256=request_sha256(conversation, model),
        prompt_sha256=prompt_sha256(),
        schema_sha256=schema_sha256(),
        model=model,
        cassette_kind=kind,
        recorded_at=recorded_at,
        response=response,
        finish_reason=finish_reason,
        refusal=refusal,
        system_fingerprint=system_fingerprint,
        usage=None if usage is None else dict(usage),
    )


def existing_cassettes(path: Path) -> dict[str, tuple[bytes, Cassette]]:
    """A cassette file's rows by conversation id, each with its bytes (none when there is no file)."""
    return {c.conversation_id: (row.raw, c) for row, c in load_cassettes(path)} if path.exists() else {}


def keep_unchanged(
    fresh: Mapping[str, Cassette], existing: Mapping[str, tuple[bytes, Cassette]], stamp: str
) -> tuple[dict[str, Cassette], dict[str, bytes]]:
    """(entries, bytes to keep): an existing row whose content would not change (only its
    ``recorded_at`` stamp would) is kept byte for byte, so rewriting a file is idempotent."""
    entries: dict[str, Cassette] = {}
    keep: dict[str, bytes] = {}
    for cid, cassette in fresh.items():
        old = existing.get(cid)
        if old is not None and old[1].model_copy(update={"recorded_at": stamp}) == cassette:
            keep[cid], entries[cid] = old
        else:
            entries[cid] = cassette
    return entries, keep


def cassette_line(cassette: Cassette) -> bytes:
    return dumps_line(cassette.model_dump(mode="json")).encode("utf-8")


def write_cassettes(
    path: Path,
    order: Sequence[str],
    entries: Mapping[str, Cassette],
    keep_raw: Mapping[str, bytes] | None = None,
) -> None:
    """Write one line per conversation in gold order; ``keep_raw`` lines are kept as bytes."""
    keep_raw = keep_raw or {}
    lines = []
    for cid in order:
        if cid in keep_raw:
            lines.append(keep_raw[cid])
        elif cid in entries:
            lines.append(cassette_line(entries[cid]))
    atomic_write_bytes(path, b"".join(line + b"\n" for line in lines))


def build_manifest(
    gold: GoldSet,
    *,
    provider: str,
    model: str,
    kind: CassetteKind,
    cassettes: Sequence[Cassette],
    previous: CassetteManifest | None,
    version: str,
    label_review: LabelReview | None = None,
) -> CassetteManifest:
    """A manifest for the files as they are on disk now (hashes read from the bytes)."""
    stats = gold.stats()
    return CassetteManifest(
        gold_version=version,
        provider=provider,
        model=model,
        cassette_kind=kind,
        prompt_sha256=prompt_sha256(),
        schema_sha256=schema_sha256(),
        files={name: sha256_file(gold.file_path(name)) for name in (*gold.input_files, CASSETTES_FILE)},
        counts=ManifestCounts(
            conversations=stats["conversations"],
            expected_memories=stats["expected_memories"],
            cassettes=len(cassettes),
            multi_label=stats["multi_label"],
            supersession=stats["supersession"],
            negative_conversations=stats["negative_conversations"],
            forbidden_memories=stats.get("forbidden_memories"),
        ),
        subsets=choose_subsets(gold.conversations, gold.by_conversation, gold.forbidden_by_conversation),
        label_review=label_review
        if label_review is not None
        else (previous.label_review if previous is not None else None),
        generated_at=now_iso(),
    )


def write_manifest(path: Path, manifest: CassetteManifest, previous: CassetteManifest | None) -> bool:
    """Write unless only ``generated_at`` would change. Returns whether it wrote."""
    if previous is not None:
        same = previous.model_dump(exclude={"generated_at"}) == manifest.model_dump(exclude={"generated_at"})
        if same and path.exists():
            return False
    write_json(path, manifest.model_dump(mode="json"))
    return True
