"""The two halves of a gold version's answer sets: tuning and held-out, split by conversation.

``<gold>/answers/halves.json``: ``{"gold_version", "seed", "rule", "tuning": [ids], "heldout": [ids]}``.
The split is a pure function of the conversation ids and the seed (``split_halves``), written
once and pinned by sha256 in ``_pinned.ANSWER_HALVES``: a matcher may be designed on the tuning
half only; every look at the held-out half is recorded in docs/matcher.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from .._exceptions import GoldDataError
from .._jsonio import read_json, sha256_file
from ._load import ANSWERS_DIR, GoldSet
from ._pinned import ANSWER_HALVES

HALVES_FILE = "halves.json"
HALVES_SEED = 20261205
RULE = (
    "conversations sorted by sha256('<seed>:<conversation_id>'); the first ceil(n/2) are the tuning half, "
    "the rest the held-out half"
)


class Half(StrEnum):
    TUNING = "tuning"
    HELDOUT = "heldout"
    ALL = "all"


def split_halves(conversation_ids: Sequence[str], seed: int = HALVES_SEED) -> tuple[list[str], list[str]]:
    """(tuning, held-out), each in the given order."""
    ranked = sorted(conversation_ids, key=lambda cid: hashlib.sha256(f"{seed}:{cid}".encode()).hexdigest())
    cut = (len(ranked) + 1) // 2
    tuning = set(ranked[:cut])
    return [c for c in conversation_ids if c in tuning], [c for c in conversation_ids if c not in tuning]


RULE_INHERITED = (
    "the conversations of the version it inherits keep their half there; the new conversations are sorted by "
    "sha256('<seed>:<conversation_id>') and the first ceil(n/2) of them are tuning, the rest held-out"
)


def halves_document(
    gold: GoldSet, seed: int = HALVES_SEED, inherited: Halves | None = None, inherits: str | None = None
) -> dict[str, object]:
    """The split of ``gold``'s conversations. A version built on an earlier one (gold v3 on v2)
    ``inherits`` its halves: a conversation held out in v2 stays held out in v3, so a matcher tuned on
    v3's tuning half never saw v2's held-out half; only the new conversations are split by the rule."""
    ids = [c.conversation_id for c in gold.conversations]
    if inherited is None:
        tuning, heldout = split_halves(ids, seed)
        return {"gold_version": gold.version, "seed": seed, "rule": RULE, "tuning": tuning, "heldout": heldout}
    known = set(inherited.tuning) | set(inherited.heldout)
    new_tuning, _ = split_halves([c for c in ids if c not in known], seed)
    chosen = (set(inherited.tuning) & set(ids)) | set(new_tuning)
    return {
        "gold_version": gold.version,
        "seed": seed,
        "rule": RULE_INHERITED,
        "inherits": inherits,
        "tuning": [c for c in ids if c in chosen],
        "heldout": [c for c in ids if c not in chosen],
    }


@dataclass(frozen=True)
class Halves:
    tuning: tuple[str, ...]
    heldout: tuple[str, ...]

    def ids(self, half: Half) -> tuple[str, ...]:
        if half is Half.TUNING:
            return self.tuning
        if half is Half.HELDOUT:
            return self.heldout
        return self.tuning + self.heldout


def _pinned_file(path: Path, version: str) -> Mapping[str, object]:
    pinned = ANSWER_HALVES.get(version)
    actual = sha256_file(path)
    if pinned is not None and actual != pinned:
        raise GoldDataError(
            f"{path}: sha256 is {actual} but gold {version!r}'s halves are pinned to {pinned} "
            "(extraction_eval/gold/_pinned.py); the split never changes: restore it with `git checkout -- "
            f"{path}`."
        )
    doc = read_json(path)
    if not isinstance(doc, Mapping):
        raise GoldDataError(f"{path}: not a halves document; restore it from git.")
    return doc


def load_halves(gold: GoldSet) -> Halves:
    """The pinned halves of ``gold``'s answer sets; a file that differs from its pin or from the
    split's rule is refused. A version that ``inherits`` an earlier one's halves is checked against
    that version's pinned file (``<gold>/../<earlier>/answers/halves.json``)."""
    path = Path(gold.path) / ANSWERS_DIR / HALVES_FILE
    if not path.is_file():
        raise GoldDataError(
            f"{path}: file not found; a gold version's answer sets are split into halves once "
            "(`python scripts/answer_halves.py --gold DIR`), then the file is pinned."
        )
    doc = _pinned_file(path, gold.version)
    inherited = None
    inherits = doc.get("inherits")
    if inherits is not None:
        earlier = Path(gold.path).resolve().parent / str(inherits) / ANSWERS_DIR / HALVES_FILE
        if not earlier.is_file():
            raise GoldDataError(f"{path}: inherits gold {inherits!r}'s halves, but {earlier} is not there.")
        base = _pinned_file(earlier, str(inherits))
        inherited = Halves(tuple(base["tuning"]), tuple(base["heldout"]))  # type: ignore[arg-type]
    seed = int(doc.get("seed", HALVES_SEED))  # type: ignore[call-overload]
    if doc != halves_document(gold, seed, inherited, None if inherits is None else str(inherits)):
        raise GoldDataError(
            f"{path}: not the split its rule gives for {gold.path}'s conversations; restore it from git."
        )
    return Halves(tuple(doc["tuning"]), tuple(doc["heldout"]))  # type: ignore[arg-type]
