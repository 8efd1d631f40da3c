"""Recording live cassettes: what is still to record, each answer stored as it arrives, and the
manifest once every conversation has a finished recording.

A finished cassette (live, for this model, under the current request, prompt and schema
hashes) is kept byte-identical; a stale one stays in the file until its new answer
replaces it, so an interrupted recording loses nothing and a rerun records only what is
missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..contract import prompt_sha256, request_sha256, schema_sha256
from ..gold import CASSETTES_FILE, MANIFEST_FILE, Cassette, Conversation, GoldSet
from ..vocab import CassetteKind, Provider
from ._store import build_manifest, existing_cassettes, new_cassette, now_iso, write_cassettes, write_manifest


@dataclass(frozen=True)
class RecordingSummary:
    """How a recording ended: counts, whether it is complete, what happened to the manifest."""

    recorded: int
    kept: int
    complete: bool
    manifest_note: str


class CassetteRecording:
    """One ``--mode record`` pass over a gold folder's cassette file."""

    def __init__(self, gold: GoldSet, provider: Provider, model: str):
        self._gold = gold
        self._provider = provider
        self._model = model
        self._path = gold.path / CASSETTES_FILE
        existing = existing_cassettes(self._path)
        current = {c.conversation_id: request_sha256(c, model) for c in gold.conversations}

        def finished(c: Cassette) -> bool:
            return (
                c.cassette_kind is CassetteKind.LIVE_RECORDED
                and c.model == model
                and c.request_sha256 == current.get(c.conversation_id)
                and c.prompt_sha256 == prompt_sha256()
                and c.schema_sha256 == schema_sha256()
            )

        self._keep = {cid: raw for cid, (raw, c) in existing.items() if finished(c)}
        self._stale = {cid: raw for cid, (raw, c) in existing.items() if cid not in self._keep and cid in current}
        self.kept: Mapping[str, Cassette] = {cid: existing[cid][1] for cid in self._keep}
        self._order = [c.conversation_id for c in gold.conversations]
        self._by_id = {c.conversation_id: c for c in gold.conversations}
        self.new: dict[str, Cassette] = {}

    @property
    def todo(self) -> list[Conversation]:
        """The conversations without a finished recording, in gold order."""
        return [c for c in self._gold.conversations if c.conversation_id not in self._keep]

    def store(
        self,
        conversation_id: str,
        *,
        response: str | None,
        finish_reason: str | None,
        refusal: str | None,
        system_fingerprint: str | None,
        usage: Mapping[str, Any] | None,
    ) -> Cassette:
        """Write one new answer to the cassette file now (atomically), keeping every other row."""
        cassette = new_cassette(
            self._by_id[conversation_id],
            self._model,
            CassetteKind.LIVE_RECORDED,
            recorded_at=now_iso(),
            response=response,
            finish_reason=finish_reason,
            refusal=refusal,
            system_fingerprint=system_fingerprint,
            usage=usage,
        )
        self.new[conversation_id] = cassette
        raw = {k: v for k, v in self._stale.items() if k not in self.new} | self._keep
        write_cassettes(self._path, self._order, self.new, keep_raw=raw)
        return cassette

    def finish(self) -> RecordingSummary:
        """Refresh the manifest when every conversation has a finished recording."""
        gold = self._gold
        complete = all(cid in self._keep or cid in self.new for cid in self._order)
        if not complete:
            missing = [cid for cid in self._order if cid not in self._keep and cid not in self.new]
            note = (
                f"recording incomplete: {len(missing)} conversation(s) have no live cassette "
                f"({missing[:10]!r}); {MANIFEST_FILE} was left as it was. Rerun `run --mode record` "
                "to record only what is missing."
            )
            return RecordingSummary(len(self.new), len(self._keep), False, note)
        manifest = build_manifest(
            gold,
            provider=self._provider.value,
            model=self._model,
            kind=CassetteKind.LIVE_RECORDED,
            cassettes=[self.kept.get(cid) or self.new[cid] for cid in self._order],
            previous=gold.manifest,
            version=gold.version,
        )
        written = write_manifest(gold.path / MANIFEST_FILE, manifest, gold.manifest)
        note = (
            f"{MANIFEST_FILE} {'refreshed' if written else 'already up to date'}: cassette_kind "
            f"{CassetteKind.LIVE_RECORDED.value}, prompt {manifest.prompt_sha256[:12]}…, schema "
            f"{manifest.schema_sha256[:12]}…. Re-run `run --mode cassette`, then `baseline promote` "
            "that run for review."
        )
        return RecordingSummary(len(self.new), len(self._keep), True, note)
