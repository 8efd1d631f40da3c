"""Consistency of a gold folder with its manifest and with the pinned table."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from .._exceptions import CassetteError, ContractDriftError, GoldDataError
from .._jsonio import sha256_file
from ..vocab import CassetteKind, Subset
from ._load import ANSWERS_DIR, CASSETTES_FILE, GoldSet, load_cassettes
from ._models import Cassette, CassetteManifest
from ._pinned import PINNED_GOLD
from ._subsets import choose_subsets, smoke_coverage, smoke_requirements


class ProblemKind(StrEnum):
    """Which error a problem raises: ``DRIFT`` a hash mismatch (the contract gate's),
    ``REPLAY`` what cassette replay would refuse, ``DATA`` the rest."""

    DRIFT = "drift"
    DATA = "data"
    REPLAY = "replay"


@dataclass(frozen=True)
class Problem:
    """One disagreement."""

    kind: ProblemKind
    message: str


def raise_problems(problems: Sequence[Problem]) -> None:
    """Hash drift raises ContractDriftError, other data problems GoldDataError, replay ones CassetteError.

    Every problem found is in the message, whichever class carries it.
    """
    drift = [p.message for p in problems if p.kind is ProblemKind.DRIFT]
    data = [p.message for p in problems if p.kind is ProblemKind.DATA]
    replay = [p.message for p in problems if p.kind is ProblemKind.REPLAY]
    if drift:
        raise ContractDriftError("contract gate: gold files drifted:\n" + "\n".join(drift + data + replay))
    if data:
        raise GoldDataError("\n".join(data + replay))
    if replay:
        raise CassetteError("\n".join(replay))


def rewrite_cassettes_command(gold_dir: Path, kinds: Iterable[CassetteKind | None]) -> str:
    """The command that rewrites a folder's cassettes and manifest without losing a recording.

    ``kinds`` are the manifest's and the cassettes' kinds. Oracle-aligned cassettes are
    regenerated for free. A folder with live recordings (its manifest says so, or a
    recording is under way) is re-recorded, which keeps every finished recording:
    ``cassettes oracle`` would replace them.
    """
    if CassetteKind.HAND_WRITTEN_BLIND in set(kinds) and gold_dir.parent.name == ANSWERS_DIR:
        return (
            f"`extraction-eval cassettes answers --gold {gold_dir.parent.parent} --set {gold_dir.name}` (from the "
            "answer set's answers.jsonl; `cassettes oracle` would not touch it)"
        )
    if CassetteKind.LIVE_RECORDED in set(kinds):
        return (
            f"`EXTRACTION_EVAL_MODE=record extraction-eval run --mode record --gold {gold_dir}` (it keeps the "
            "finished live recordings; `cassettes oracle` would replace them)"
        )
    return f"`extraction-eval cassettes oracle --gold {gold_dir}`"


def _rewrite_command(gold: GoldSet, manifest: CassetteManifest, cassettes: Sequence[Cassette]) -> str:
    return rewrite_cassettes_command(gold.cassette_dir, [manifest.cassette_kind, *(c.cassette_kind for c in cassettes)])


def check_pinned(gold: GoldSet) -> list[Problem]:
    pins = PINNED_GOLD.get(gold.version)
    if pins is None:
        return []
    problems = []
    for name, pinned in pins.items():
        if not (gold.path / name).is_file():
            problems.append(
                Problem(
                    ProblemKind.DRIFT,
                    f"{gold.path / name}: file not found, but gold {gold.version!r} is pinned to its sha256 "
                    f"{pinned} (extraction_eval/gold/_pinned.py); restore it with `git checkout -- "
                    f"{gold.path / name}`.",
                )
            )
            continue
        actual = sha256_file(gold.path / name)
        if actual != pinned:
            problems.append(
                Problem(
                    ProblemKind.DRIFT,
                    f"{gold.path / name}: sha256 is {actual} but gold {gold.version!r} is pinned "
                    f"to {pinned} (extraction_eval/gold/_pinned.py). Frozen inputs never "
                    "change: restore the file with `git checkout -- "
                    f"{gold.path / name}`, or put the change in a new version folder.",
                )
            )
    return problems


def check_file_hashes(
    gold: GoldSet,
    manifest: CassetteManifest,
    names: Sequence[str] | None = None,
    cassettes: Sequence[Cassette] = (),
) -> list[Problem]:
    """Each file's sha256 against the manifest's; ``names`` defaults to the folder's inputs and cassettes."""
    if names is None:
        names = (*gold.input_files, CASSETTES_FILE)
    rewrite = _rewrite_command(gold, manifest, cassettes)
    problems = []
    for name in names:
        path = gold.file_path(name)
        recorded = manifest.files.get(name)
        if not path.is_file():
            records = "" if recorded is None else f", but the manifest records its sha256 {recorded}"
            problems.append(
                Problem(
                    ProblemKind.DATA,
                    f"{path}: file not found{records}; restore it with `git checkout -- {path}`, or "
                    f"write it again with {rewrite}.",
                )
            )
            continue
        if recorded is None:
            problems.append(
                Problem(
                    ProblemKind.DATA,
                    f"{gold.cassette_dir / 'cassette_manifest.json'}: field 'files' has no sha256 for "
                    f"{name!r}; regenerate the manifest with {rewrite}.",
                )
            )
            continue
        actual = sha256_file(path)
        if actual != recorded:
            fix = (
                f"re-generate the cassettes and the manifest with {rewrite}"
                if name == CASSETTES_FILE
                else f"restore the file with `git checkout -- {path}`, or re-generate the "
                f"manifest with {rewrite} if the change is intended"
            )
            problems.append(
                Problem(
                    ProblemKind.DRIFT,
                    f"{path}: sha256 is {actual} but the manifest records {recorded}; {fix}.",
                )
            )
    return problems


def check_counts(gold: GoldSet, manifest: CassetteManifest, cassettes: Sequence[Cassette]) -> list[Problem]:
    rewrite = _rewrite_command(gold, manifest, cassettes)
    stats = gold.stats()
    actual = {
        "conversations": stats["conversations"],
        "expected_memories": stats["expected_memories"],
        "cassettes": len(cassettes),
        "multi_label": stats["multi_label"],
        "supersession": stats["supersession"],
        "negative_conversations": stats["negative_conversations"],
        "forbidden_memories": stats.get("forbidden_memories"),
    }
    where = gold.path / "cassette_manifest.json"
    return [
        Problem(
            ProblemKind.DATA,
            f"{where}: field 'counts.{key}' is {getattr(manifest.counts, key)} but the files "
            f"hold {'no such file' if value is None else value}; regenerate the manifest with {rewrite}.",
        )
        for key, value in actual.items()
        if getattr(manifest.counts, key) != value
    ]


def check_subsets(gold: GoldSet, manifest: CassetteManifest, cassettes: Sequence[Cassette] = ()) -> list[Problem]:
    where = gold.path / "cassette_manifest.json"
    rewrite = _rewrite_command(gold, manifest, cassettes)
    known = {c.conversation_id for c in gold.conversations}
    problems = []
    for subset in (Subset.SMOKE, Subset.FAST):
        ids = getattr(manifest.subsets, subset.value)
        if not ids:
            problems.append(
                Problem(ProblemKind.DATA, f"{where}: subset {subset.value!r} is empty; regenerate it with {rewrite}.")
            )
        unknown = [cid for cid in ids if cid not in known]
        if unknown:
            problems.append(
                Problem(
                    ProblemKind.DATA,
                    f"{where}: subset {subset.value!r} names conversations that do not exist: "
                    f"{unknown!r}; regenerate the manifest with {rewrite}.",
                )
            )
        if len(set(ids)) != len(ids):
            problems.append(
                Problem(
                    ProblemKind.DATA, f"{where}: subset {subset.value!r} repeats ids; regenerate it with {rewrite}."
                )
            )
    forbidden = gold.forbidden_by_conversation
    missing = smoke_requirements(forbidden) - smoke_coverage(manifest.subsets.smoke, gold.by_conversation, forbidden)
    if missing:
        problems.append(
            Problem(
                ProblemKind.DATA,
                f"{where}: subset 'smoke' does not cover {sorted(missing)!r}; add a conversation "
                "that does (docs/gold-set.md says what smoke must cover).",
            )
        )
    if problems:
        return problems
    chosen = choose_subsets(gold.conversations, gold.by_conversation, forbidden)
    for subset in (Subset.SMOKE, Subset.FAST):
        kept, rule = set(getattr(manifest.subsets, subset.value)), set(getattr(chosen, subset.value))
        if kept != rule:
            problems.append(
                Problem(
                    ProblemKind.DATA,
                    f"{where}: field 'subsets.{subset.value}' is not the subset the documented rule "
                    f"chooses from these files (not chosen: {sorted(kept - rule)!r}; missing: "
                    f"{sorted(rule - kept)!r}); regenerate the manifest with {rewrite}. The rule: "
                    "docs/gold-set.md#subsets.",
                )
            )
    return problems


def check_gold(gold: GoldSet, manifest: CassetteManifest, cassettes: Sequence[Cassette]) -> list[Problem]:
    """Every check ``gold validate`` runs after the rows themselves parsed."""
    return [
        *check_pinned(gold),
        *check_file_hashes(gold, manifest, cassettes=cassettes),
        *check_counts(gold, manifest, cassettes),
        *check_subsets(gold, manifest, cassettes),
    ]


def read_cassettes(gold: GoldSet, manifest: CassetteManifest) -> list[Cassette]:
    """The folder's cassettes; a missing file is an error naming the path and the fix."""
    path = gold.file_path(CASSETTES_FILE)
    if not path.is_file():
        raise GoldDataError("\n".join(p.message for p in check_file_hashes(gold, manifest, (CASSETTES_FILE,))))
    return [c for _, c in load_cassettes(path)]
