"""Read a gold folder, row by row, with errors that name the file, line, field and fix."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .._exceptions import GoldDataError
from .._jsonio import JsonlRow, iter_jsonl, read_json
from ..vocab import CATEGORIES, FORBIDDEN_REASONS, TEMPORAL_KINDS, Subset
from ._models import Cassette, CassetteManifest, Conversation, Erratum, ExpectedMemory, ForbiddenMemory

CONVERSATIONS_FILE = "conversations.jsonl"
EXPECTED_FILE = "expected_memories.jsonl"
FORBIDDEN_FILE = "forbidden_memories.jsonl"
#: A later version's corrections of the version it corrects (gold v3 on; gates/_shared.py reads it).
ERRATA_FILE = "errata.jsonl"
CASSETTES_FILE = "openai_cassettes.jsonl"
MANIFEST_FILE = "cassette_manifest.json"
BASELINE_FILE = "baseline_results.json"
JSONL_FILES = (CONVERSATIONS_FILE, EXPECTED_FILE, CASSETTES_FILE)

_M = TypeVar("_M", bound=BaseModel)

_FIXES: Mapping[str, str] = {
    "categories": f"use 1 to 3 distinct values of {[c.value for c in CATEGORIES]!r}",
    "temporal_kind": f"use one of {[k.value for k in TEMPORAL_KINDS]!r}",
    "role": "use 'user' or 'assistant'",
    "session_date": "write the date as YYYY-MM-DD",
    "supersedes": "use null, or the stale fact in canonical style ('User ...')",
    "cassette_kind": "use 'oracle_aligned_expected_json' or 'live_openai_recorded'",
    "reason": f"use one of {[r.value for r in FORBIDDEN_REASONS]!r}",
}


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(row)"


def _article(noun: str) -> str:
    return "an" if noun[:1] in "aeiou" else "a"


def format_validation_error(where: str, exc: ValidationError, *, what: str) -> str:
    """One message per pydantic error: location, field, the bad value, the fix."""
    lines = []
    errors = exc.errors()
    locs = [tuple(err["loc"]) for err in errors]
    for err in errors:
        loc = tuple(err["loc"])
        if err["type"] == "too_short" and any(other[: len(loc)] == loc and other != loc for other in locs):
            continue  # a list emptied by its own bad item's error: the item's message says it all
        name = _field_path(loc)
        top = next((p for p in loc if isinstance(p, str)), "")
        if err["type"] == "missing":
            fix = f"add the field {top!r} (every field of {_article(what)} {what} is required)"
            lines.append(f"{where}: field {name!r} is missing; {fix}.")
            continue
        if err["type"] in ("extra_forbidden", "unexpected_keyword_argument"):  # a model's / a dataclass's (Turn)
            lines.append(
                f"{where}: field {name!r} is not part of {_article(what)} {what}; remove it or fix its spelling."
            )
            continue
        fix = _FIXES.get(top, "see docs/data-format.md")
        value = err.get("input")
        lines.append(f"{where}: field {name!r}: {err['msg']} (got {value!r}); {fix}.")
    return "\n".join(lines)


def parse_row(row: JsonlRow, model: type[_M], *, what: str) -> _M:
    try:
        return model.model_validate(row.value)
    except ValidationError as exc:
        raise GoldDataError(format_validation_error(f"{row.path}:{row.line}", exc, what=what)) from None


def validate_document(value: Any, model: type[_M], *, where: str, what: str) -> _M:
    """A parsed JSON document as ``model``; GoldDataError naming ``where``, each field and its fix."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise GoldDataError(format_validation_error(where, exc, what=what)) from None


def parse_document(path: Path, model: type[_M], *, what: str) -> _M:
    return validate_document(read_json(path), model, where=str(path), what=what)


def _unique(rows: list[tuple[JsonlRow, _M]], key: str, path: Path) -> None:
    seen: dict[str, int] = {}
    for row, item in rows:
        value = getattr(item, key)
        if value in seen:
            raise GoldDataError(
                f"{path}:{row.line}: field {key!r}: duplicate id {value!r} (first on line "
                f"{seen[value]}); ids must be unique, rename or remove one of them."
            )
        seen[value] = row.line


def load_conversations(path: Path) -> list[tuple[JsonlRow, Conversation]]:
    rows = [(row, parse_row(row, Conversation, what="conversation")) for row in iter_jsonl(path)]
    if not rows:
        raise GoldDataError(
            f"{path}: no conversations (the file is empty). A gold folder needs at least one; restore "
            f"the file with `git checkout -- {path}` or point --gold at the right folder."
        )
    _unique(rows, "conversation_id", path)
    return rows


def load_expected(path: Path, conversation_ids: Mapping[str, Any]) -> list[tuple[JsonlRow, ExpectedMemory]]:
    rows = [(row, parse_row(row, ExpectedMemory, what="expected memory")) for row in iter_jsonl(path)]
    _unique(rows, "memory_id", path)
    for row, memory in rows:
        if memory.conversation_id not in conversation_ids:
            raise GoldDataError(
                f"{path}:{row.line}: field 'conversation_id': {memory.conversation_id!r} is not "
                f"a conversation in {CONVERSATIONS_FILE}; fix the id or add the conversation."
            )
    return rows


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def load_forbidden(
    path: Path, conversation_ids: Mapping[str, Any], expected: Sequence[ExpectedMemory] = ()
) -> list[tuple[JsonlRow, ForbiddenMemory]]:
    """Rows of ``forbidden_memories.jsonl``: each names a known conversation, none is repeated,
    and none is also an expected memory of its conversation (a row cannot be both)."""
    rows = [(row, parse_row(row, ForbiddenMemory, what="forbidden memory")) for row in iter_jsonl(path)]
    wanted = {(m.conversation_id, _folded(m.content)): m.memory_id for m in expected}
    seen: dict[tuple[str, str], int] = {}
    for row, item in rows:
        if item.conversation_id not in conversation_ids:
            raise GoldDataError(
                f"{path}:{row.line}: field 'conversation_id': {item.conversation_id!r} is not "
                f"a conversation in {CONVERSATIONS_FILE}; fix the id or add the conversation."
            )
        key = (item.conversation_id, _folded(item.content))
        if key in seen:
            raise GoldDataError(
                f"{path}:{row.line}: field 'content': {item.content!r} repeats line {seen[key]} for "
                f"conversation {item.conversation_id!r}; remove one of them."
            )
        seen[key] = row.line
        if key in wanted:
            raise GoldDataError(
                f"{path}:{row.line}: field 'content': {item.content!r} is also expected memory "
                f"{wanted[key]!r} in {EXPECTED_FILE}; a text is either expected or forbidden, so "
                "remove it from one of the two files."
            )
    return rows


def load_errata(
    path: Path, conversation_ids: Mapping[str, Any], memories: Sequence[ExpectedMemory]
) -> list[tuple[JsonlRow, Erratum]]:
    """Rows of ``errata.jsonl``, each naming a conversation of this version; an expected row's
    erratum names a row this version has (edited or added) or no longer has (removed), a forbidden
    row's erratum names none."""
    rows = [(row, parse_row(row, Erratum, what="erratum")) for row in iter_jsonl(path)]
    here = {m.memory_id for m in memories}
    for row, e in rows:
        where = f"{path}:{row.line}"
        if e.conversation_id not in conversation_ids:
            raise GoldDataError(
                f"{where}: field 'conversation_id': {e.conversation_id!r} is not a conversation in "
                f"{CONVERSATIONS_FILE}; an erratum corrects a conversation both versions carry."
            )
        if e.kind == "forbidden" and e.memory_id is not None:
            raise GoldDataError(f"{where}: field 'memory_id': a forbidden row has no id; write null.")
        if e.kind == "expected":
            present = e.memory_id in here
            wanted = e.action != "remove"
            if e.memory_id is None or present != wanted:
                state = "is not" if wanted else "is still"
                raise GoldDataError(
                    f"{where}: field 'memory_id': {e.memory_id!r} {state} a row of {EXPECTED_FILE} after this "
                    f"erratum ({e.action}); rebuild the folder with scripts/gold_v3_assemble.py rather than "
                    "editing either file."
                )
    return rows


def load_cassettes(path: Path) -> list[tuple[JsonlRow, Cassette]]:
    rows = [(row, parse_row(row, Cassette, what="cassette")) for row in iter_jsonl(path)]
    _unique(rows, "conversation_id", path)
    return rows


def load_manifest(path: Path) -> CassetteManifest:
    return parse_document(path, CassetteManifest, what="cassette manifest")


@dataclass(frozen=True)
class GoldSet:
    """A gold folder's conversations and expected memories, checked row by row."""

    path: Path
    version: str
    conversations: tuple[Conversation, ...]
    memories: tuple[ExpectedMemory, ...]
    manifest: CassetteManifest | None = field(default=None, compare=False)
    #: The rows of ``forbidden_memories.jsonl``; None when the folder has no such file (v1).
    forbidden: tuple[ForbiddenMemory, ...] | None = None
    #: A realistic answer set replayed instead of the oracle cassettes (``answers/<name>/``), or None.
    answer_set: str | None = None

    @property
    def cassette_dir(self) -> Path:
        """Where the replayed cassettes and their manifest live: the gold folder, or its answer set's."""
        return self.path if self.answer_set is None else answer_set_dir(self.path, self.answer_set)

    def file_path(self, name: str) -> Path:
        """A hashed file of the run: the cassettes from ``cassette_dir``, the inputs from the gold folder."""
        return (self.cassette_dir if name == CASSETTES_FILE else self.path) / name

    @property
    def input_files(self) -> tuple[str, ...]:
        """The folder's hashed input files: conversations, expected memories, and the
        forbidden memories when the folder has them."""
        extra = () if self.forbidden is None else (FORBIDDEN_FILE,)
        return (CONVERSATIONS_FILE, EXPECTED_FILE, *extra)

    @cached_property
    def forbidden_by_conversation(self) -> Mapping[str, tuple[ForbiddenMemory, ...]] | None:
        """Every conversation's forbidden rows (empty for most), or None without a forbidden file."""
        if self.forbidden is None:
            return None
        grouped: dict[str, list[ForbiddenMemory]] = {c.conversation_id: [] for c in self.conversations}
        for row in self.forbidden:
            grouped[row.conversation_id].append(row)
        return {cid: tuple(items) for cid, items in grouped.items()}

    @cached_property
    def by_conversation(self) -> Mapping[str, tuple[ExpectedMemory, ...]]:
        grouped: dict[str, list[ExpectedMemory]] = {c.conversation_id: [] for c in self.conversations}
        for memory in self.memories:
            grouped[memory.conversation_id].append(memory)
        return {cid: tuple(items) for cid, items in grouped.items()}

    @cached_property
    def negative_ids(self) -> tuple[str, ...]:
        return tuple(cid for cid, items in self.by_conversation.items() if not items)

    def subset_conversations(self, subset: Subset) -> tuple[Conversation, ...]:
        """The conversations of a subset, in gold order."""
        if subset is Subset.FULL:
            return self.conversations
        if self.manifest is None:
            raise GoldDataError(
                f"{self.path / MANIFEST_FILE}: no manifest, so no {subset.value!r} subset; run "
                f"`extraction-eval cassettes oracle --gold {self.path}` to write one."
            )
        wanted = set(getattr(self.manifest.subsets, subset.value))
        return tuple(c for c in self.conversations if c.conversation_id in wanted)

    def stats(self) -> dict[str, int]:
        """Counts by category, temporal kind, multi-label, supersession and negatives."""
        out: dict[str, int] = {
            "conversations": len(self.conversations),
            "expected_memories": len(self.memories),
            "negative_conversations": len(self.negative_ids),
            "multi_label": sum(1 for m in self.memories if m.is_multi_label),
            "supersession": sum(1 for m in self.memories if m.supersedes is not None),
        }
        per_category = Counter(c for m in self.memories for c in m.categories)
        for category in CATEGORIES:
            out[f"category/{category.value}"] = per_category[category]
        per_kind = Counter(m.temporal_kind for m in self.memories)
        for kind in TEMPORAL_KINDS:
            out[f"temporal/{kind.value}"] = per_kind[kind]
        turns = [len(c.turns) for c in self.conversations]
        out["turns/min"] = min(turns, default=0)
        out["turns/max"] = max(turns, default=0)
        if self.forbidden is not None:
            out["forbidden_memories"] = len(self.forbidden)
            per_reason = Counter(r.reason for r in self.forbidden)
            for reason in FORBIDDEN_REASONS:
                out[f"forbidden/{reason.value}"] = per_reason[reason]
        return out


ANSWERS_DIR = "answers"
_ANSWER_SET_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def answer_set_dir(gold_dir: Path, name: str) -> Path:
    """``<gold>/answers/<name>/``: a realistic answer set's cassettes, manifest and match decisions."""
    return Path(gold_dir) / ANSWERS_DIR / name


def answer_set_names(gold_dir: Path) -> list[str]:
    """The answer sets a gold folder carries (folders of ``answers/`` with a manifest)."""
    root = Path(gold_dir) / ANSWERS_DIR
    return sorted(p.name for p in root.iterdir() if (p / MANIFEST_FILE).is_file()) if root.is_dir() else []


def gold_version(path: Path, manifest: CassetteManifest | None) -> str:
    """The folder's name unless the manifest names a version."""
    return manifest.gold_version if manifest is not None else Path(path).resolve().name


def load_gold(path: Path, *, require_manifest: bool = True, answers: str | None = None) -> GoldSet:
    """Conversations and expected memories of a gold folder (and its forbidden memories and
    manifest, if present). With ``answers``, the cassettes and manifest are that answer set's
    (``<gold>/answers/<name>/``), and the manifest is required."""
    path = Path(path)
    if answers is not None:
        if not _ANSWER_SET_NAME.fullmatch(answers):
            raise GoldDataError(
                f"--answers {answers!r} is not an answer set name: use lower-case letters, digits, '-' and '_' "
                "(the folder's name under <gold>/answers/)."
            )
        folder = answer_set_dir(path, answers)
        if not (folder / MANIFEST_FILE).is_file():
            known = answer_set_names(path) if path.is_dir() else []
            raise GoldDataError(
                f"--answers {answers!r}: {folder / MANIFEST_FILE} not found; "
                + (f"answer sets of {path}: {known!r}." if known else f"{path} carries no answer set.")
                + f" Build one with `extraction-eval cassettes answers --gold {path} --set NAME` (docs/answer-sets.md)."
            )
    if not path.is_dir():
        raise GoldDataError(
            f"{str(path)!r} is not a gold folder (not a directory). Pass --gold with a folder "
            f"holding {CONVERSATIONS_FILE} and {EXPECTED_FILE}, e.g. --gold gold/v1."
        )
    conversation_rows = load_conversations(path / CONVERSATIONS_FILE)
    conversations = tuple(c for _, c in conversation_rows)
    ids = {c.conversation_id: c for c in conversations}
    memories = tuple(m for _, m in load_expected(path / EXPECTED_FILE, ids))
    forbidden_path = path / FORBIDDEN_FILE
    forbidden = tuple(r for _, r in load_forbidden(forbidden_path, ids, memories)) if forbidden_path.exists() else None
    if (path / ERRATA_FILE).exists():
        load_errata(path / ERRATA_FILE, ids, memories)
    manifest_path = (path if answers is None else answer_set_dir(path, answers)) / MANIFEST_FILE
    manifest: CassetteManifest | None = None
    if manifest_path.exists():
        manifest = load_manifest(manifest_path)
    elif require_manifest:
        raise GoldDataError(
            f"{manifest_path}: file not found; write it with `extraction-eval cassettes oracle --gold {path}`."
        )
    return GoldSet(
        path=path,
        version=gold_version(path, manifest),
        conversations=conversations,
        memories=memories,
        manifest=manifest,
        forbidden=forbidden,
        answer_set=answers,
    )
