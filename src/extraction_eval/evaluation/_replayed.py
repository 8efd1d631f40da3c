"""What a replay actually replayed: the cassette file's sha256, and whether the answers are
what the manifest says they are.

An ``oracle_aligned_expected_json`` manifest promises that every answer is the oracle's
conversion of the conversation's expected rows; a cassette edited by hand (or a manifest
regenerated over edited cassettes) breaks that promise, and the run must say so rather
than call its numbers oracle-aligned.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._jsonio import sha256_file
from ..cassettes import oracle_response
from ..gold import CASSETTES_FILE, GoldSet
from ..vocab import CassetteKind
from ._answers import Answer


@dataclass(frozen=True)
class ReplayedCassettes:
    """The replayed file and how it differs from the manifest's promise."""

    file_sha256: str
    manifest_sha256: str | None
    #: Conversations whose replayed answer is not the oracle's conversion of its expected
    #: rows (only checked for oracle-aligned manifests).
    not_oracle: tuple[str, ...]
    replayed: int

    @property
    def file_changed(self) -> bool:
        return self.file_sha256 != self.manifest_sha256

    @property
    def edited(self) -> bool:
        return self.file_changed or bool(self.not_oracle)

    def edits(self) -> str | None:
        """One clause naming what was edited, or None when the cassettes are as recorded."""
        if not self.edited:
            return None
        parts = []
        if self.file_changed:
            parts.append(
                f"{CASSETTES_FILE} has sha256 {self.file_sha256[:12]}…, the manifest records "
                f"{(self.manifest_sha256 or 'none')[:12]}…"
            )
        if self.not_oracle:
            shown = ", ".join(self.not_oracle[:5]) + (", …" if len(self.not_oracle) > 5 else "")
            parts.append(
                f"{len(self.not_oracle)} of {self.replayed} replayed answers are not the oracle's "
                f"conversion of the expected rows ({shown})"
            )
        return "; ".join(parts)


def _parsed(text: str | None) -> Any:
    try:
        return json.loads(text) if text is not None else None
    except ValueError:
        return None


def replayed_cassettes(gold: GoldSet, kind: CassetteKind, answers: Mapping[str, Answer]) -> ReplayedCassettes:
    """Hash the cassette file and, for an oracle-aligned manifest, compare each replayed
    answer (parsed JSON) with the oracle's answer for its expected rows."""
    path = gold.file_path(CASSETTES_FILE)
    recorded = gold.manifest.files.get(CASSETTES_FILE) if gold.manifest is not None else None
    not_oracle: list[str] = []
    if kind is CassetteKind.ORACLE_ALIGNED:
        for cid, answer in answers.items():
            expected = _parsed(oracle_response(gold.by_conversation.get(cid, ())))
            if answer.failure is not None or _parsed(answer.response) != expected:
                not_oracle.append(cid)
    return ReplayedCassettes(
        file_sha256=sha256_file(path),
        manifest_sha256=recorded,
        not_oracle=tuple(sorted(not_oracle)),
        replayed=len(answers),
    )
