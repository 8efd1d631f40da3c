"""The matcher calibration pairs (``gold/matcher-calibration/``), read and checked.

Each file is checked row by row (pydantic, ``extra="forbid"``), against the gold v1
row it paraphrases (same text, categories and temporal kind), against its pinned
sha256, and against the split rule of the folder's README: gold v1's positive
conversations grouped by the first category of their first row, each group sorted
by the sha256 of the conversation id, alternately assigned tuning, held-out,
tuning, ... (starting again in each group).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .._exceptions import GoldDataError
from .._jsonio import iter_jsonl, sha256_file
from ..vocab import CATEGORIES, TEMPORAL_KINDS, Category, TemporalKind
from ._load import format_validation_error
from ._models import ExpectedMemory
from ._pinned import PINNED_CALIBRATION

DEFAULT_PAIRS = Path("gold/matcher-calibration")


class Half(StrEnum):
    """The two halves of the calibration set; tune on one, report on the other."""

    TUNING = "tuning"
    HELDOUT = "heldout"

    @property
    def file_name(self) -> str:
        return f"{self.value}.jsonl"


class PairKind(StrEnum):
    """How a candidate differs from its gold text (13 same-fact and 13 different-fact kinds)."""

    USER_PREFIX = "user_prefix"
    SYNONYM = "synonym"
    NUMBER_FORMAT = "number_format"
    UNIT_FORMAT = "unit_format"
    DATE_FORMAT = "date_format"
    SPELLING = "spelling"
    REORDERED = "reordered"
    MORE_DETAIL = "more_detail"
    LESS_DETAIL = "less_detail"
    VERBOSE = "verbose"
    TERSE = "terse"
    TENSE = "tense"
    NEGATION_PARAPHRASE = "negation_paraphrase"
    OTHER_OBJECT = "other_object"
    OTHER_NUMBER = "other_number"
    SWAPPED_NUMBERS = "swapped_numbers"
    OTHER_DAY = "other_day"
    OTHER_DATE = "other_date"
    OTHER_PLACE = "other_place"
    OTHER_PERSON = "other_person"
    POLARITY = "polarity"
    STEP_ORDER = "step_order"
    SUPERSEDED_VALUE = "superseded_value"
    RELATED_FACT = "related_fact"
    OTHER_ATTRIBUTE = "other_attribute"
    DROPPED_CORE = "dropped_core"


SAME_FACT_KINDS = frozenset(list(PairKind)[:13])


class CalibrationPair(BaseModel):
    """One line of ``tuning.jsonl`` / ``heldout.jsonl``: a gold text, a candidate, a label."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pair_id: str = Field(pattern=r"^(tuning|heldout)-\d{4}$", description="'<half>-NNNN', numbered in file order.")
    memory_id: str = Field(min_length=1, description="The gold v1 row the pair is about.")
    conversation_id: str = Field(min_length=1, description="That row's conversation.")
    gold: str = Field(min_length=1, description="The gold row's content, copied exactly.")
    candidate: str = Field(min_length=1, description="A text an extractor could write.")
    same_fact: bool = Field(description="Would a careful reviewer give full recall credit for the gold row?")
    kind: PairKind = Field(description="How the candidate differs from the gold text.")
    categories: tuple[Category, ...] = Field(min_length=1, max_length=3, description="The gold row's categories.")
    temporal_kind: TemporalKind = Field(description="The gold row's temporal kind.")
    note: str = Field(min_length=1, description="Why the label.")

    @field_validator("candidate", "gold", "note")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


_FIXES: Mapping[str, str] = {
    "pair_id": "number pairs '<half>-0001', '<half>-0002', ... in file order",
    "kind": f"use one of {[k.value for k in PairKind]!r}",
    "categories": f"copy the gold row's categories (1 to 3 of {[c.value for c in CATEGORIES]!r})",
    "temporal_kind": f"copy the gold row's temporal kind (one of {[k.value for k in TEMPORAL_KINDS]!r})",
    "same_fact": "use true or false",
}


def _format(where: str, exc: ValidationError) -> str:
    lines = format_validation_error(where, exc, what="calibration pair").splitlines()
    out = []
    for line in lines:
        field = line.split("field '", 1)[1].split("'", 1)[0].split(".")[0].split("[")[0] if "field '" in line else ""
        if field in _FIXES and line.endswith("; see docs/data-format.md."):
            line = line.removesuffix("see docs/data-format.md.") + _FIXES[field] + "."
        out.append(line)
    return "\n".join(out)


def split_rule(memories: Sequence[ExpectedMemory]) -> dict[str, Half]:
    """The README's split of gold conversations (those with rows) into the two halves."""
    first_category: dict[str, Category] = {}
    for memory in memories:
        first_category.setdefault(memory.conversation_id, memory.categories[0])
    groups: dict[Category, list[str]] = defaultdict(list)
    for conversation_id, category in first_category.items():
        groups[category].append(conversation_id)
    halves: dict[str, Half] = {}
    for ids in groups.values():
        ordered = sorted(ids, key=lambda c: hashlib.sha256(c.encode("utf-8")).hexdigest())
        for index, conversation_id in enumerate(ordered):
            halves[conversation_id] = Half.TUNING if index % 2 == 0 else Half.HELDOUT
    return halves


def load_pairs(
    folder: Path, half: Half, memories: Sequence[ExpectedMemory], *, check_pinned: bool = True
) -> tuple[CalibrationPair, ...]:
    """One half's pairs, each checked against its gold row, the split rule and the pinned hash."""
    path = Path(folder) / half.file_name
    if not path.is_file():
        raise GoldDataError(
            f"{path}: file not found. Pass --pairs with the calibration folder "
            f"(default {DEFAULT_PAIRS}), or restore it with `git checkout -- {path}`."
        )
    if check_pinned:
        actual = sha256_file(path)
        pinned = PINNED_CALIBRATION[half.file_name]
        if actual != pinned:
            raise GoldDataError(
                f"{path}: sha256 {actual} differs from the pinned {pinned} "
                "(extraction_eval.gold._pinned.PINNED_CALIBRATION). The calibration set is frozen: "
                f"restore it with `git checkout -- {path}`; a changed pair is a new version of the set, "
                "with new pinned hashes and a new line in docs/matcher.md."
            )
    rows = {m.memory_id: m for m in memories}
    halves = split_rule(memories)
    pairs: list[CalibrationPair] = []
    for row in iter_jsonl(path):
        where = f"{path}:{row.line}"
        try:
            pair = CalibrationPair.model_validate(row.value)
        except ValidationError as exc:
            raise GoldDataError(_format(where, exc)) from None
        expected_id = f"{half.value}-{len(pairs) + 1:04d}"
        if pair.pair_id != expected_id:
            raise GoldDataError(
                f"{where}: field 'pair_id' is {pair.pair_id!r}, expected {expected_id!r}; "
                f"{_FIXES['pair_id']} (this file is the {half.value} half)."
            )
        gold_row = rows.get(pair.memory_id)
        if gold_row is None:
            raise GoldDataError(
                f"{where}: field 'memory_id': {pair.memory_id!r} is not a gold v1 row; use the memory_id "
                "of the gold row the pair paraphrases."
            )
        for field, mine, theirs in (
            ("conversation_id", pair.conversation_id, gold_row.conversation_id),
            ("gold", pair.gold, gold_row.content),
            ("categories", [c.value for c in pair.categories], [c.value for c in gold_row.categories]),
            ("temporal_kind", pair.temporal_kind.value, gold_row.temporal_kind.value),
        ):
            if mine != theirs:
                raise GoldDataError(
                    f"{where}: field {field!r} is {mine!r} but gold row {pair.memory_id!r} has {theirs!r}; "
                    "copy it from the gold row exactly."
                )
        assigned = halves.get(pair.conversation_id)
        if assigned is not half:
            raise GoldDataError(
                f"{where}: conversation {pair.conversation_id!r} belongs to the "
                f"{assigned.value if assigned else 'no'} half by the split rule "
                "(gold/matcher-calibration/README.md), not to the "
                f"{half.value} half; a gold text must never be in both halves. Move the pair to its half's file."
            )
        if pair.same_fact is not (pair.kind in SAME_FACT_KINDS):
            expected_label = "true" if pair.kind in SAME_FACT_KINDS else "false"
            raise GoldDataError(
                f"{where}: field 'same_fact' is {str(pair.same_fact).lower()} but kind {pair.kind.value!r} "
                f"is a {'same' if expected_label == 'true' else 'different'}-fact kind; fix the label or the kind."
            )
        pairs.append(pair)
    if not pairs:
        raise GoldDataError(f"{path}: no pairs (the file is empty); restore it with `git checkout -- {path}`.")
    return tuple(pairs)
