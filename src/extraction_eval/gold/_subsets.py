"""Choosing the ``smoke`` and ``fast`` subsets: once, deterministically, from the data alone.

Order: conversations are visited by the sha256 of their id, so the choice does not
favour the start of the file and never changes while the ids do not.

- ``smoke`` walks that order and keeps a conversation when it covers something not
  yet covered: each category, each temporal kind, a multi-label memory, a
  supersession case, a negative conversation, and (in a set with forbidden memories)
  a forbidden row of each reason. A handful of conversations.
- ``fast`` is a stratified third: each conversation goes into one stratum (security,
  when it has forbidden rows; negative, supersession, multi-label, else the first
  category of its first memory); within a
  stratum, in hash order, every third conversation from the first is kept, so each
  stratum contributes ceil(n / 3).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from ..vocab import CATEGORIES, FORBIDDEN_REASONS, TEMPORAL_KINDS
from ._models import Conversation, ExpectedMemory, ForbiddenMemory, ManifestSubsets

#: Forbidden rows by conversation, or None for a set without forbidden memories.
ForbiddenMap = Mapping[str, Sequence[ForbiddenMemory]] | None


def _order(conversation_id: str) -> str:
    return hashlib.sha256(conversation_id.encode("utf-8")).hexdigest()


def _features(memories: Sequence[ExpectedMemory], forbidden: Sequence[ForbiddenMemory] = ()) -> set[str]:
    security = {f"security:{row.reason.value}" for row in forbidden}
    if not memories:
        return {"negative"} | security
    out: set[str] = security
    for memory in memories:
        out.update(f"category:{c.value}" for c in memory.categories)
        out.add(f"temporal:{memory.temporal_kind.value}")
        if memory.is_multi_label:
            out.add("multi_label")
        if memory.supersedes is not None:
            out.add("supersession")
    return out


SMOKE_REQUIREMENTS: frozenset[str] = frozenset(
    {f"category:{c.value}" for c in CATEGORIES}
    | {f"temporal:{k.value}" for k in TEMPORAL_KINDS}
    | {"multi_label", "supersession", "negative"}
)
SECURITY_REQUIREMENTS: frozenset[str] = frozenset(f"security:{r.value}" for r in FORBIDDEN_REASONS)


def smoke_requirements(forbidden: ForbiddenMap = None) -> frozenset[str]:
    """What smoke must cover: SMOKE_REQUIREMENTS, and each forbidden reason when the set has forbidden memories."""
    return SMOKE_REQUIREMENTS if forbidden is None else SMOKE_REQUIREMENTS | SECURITY_REQUIREMENTS


def _stratum(memories: Sequence[ExpectedMemory], forbidden: Sequence[ForbiddenMemory] = ()) -> str:
    if forbidden:
        return "security"
    if not memories:
        return "negative"
    if any(m.supersedes is not None for m in memories):
        return "supersession"
    if any(m.is_multi_label for m in memories):
        return "multi_label"
    return f"category:{memories[0].categories[0].value}"


def smoke_coverage(
    ids: Sequence[str], by_conversation: Mapping[str, Sequence[ExpectedMemory]], forbidden: ForbiddenMap = None
) -> set[str]:
    """Which smoke requirements the given conversations cover."""
    covered: set[str] = set()
    for cid in ids:
        covered |= _features(by_conversation.get(cid, ()), (forbidden or {}).get(cid, ()))
    return covered & smoke_requirements(forbidden)


def choose_subsets(
    conversations: Sequence[Conversation],
    by_conversation: Mapping[str, Sequence[ExpectedMemory]],
    forbidden: ForbiddenMap = None,
) -> ManifestSubsets:
    required = smoke_requirements(forbidden)
    banned = forbidden or {}
    ordered = sorted((c.conversation_id for c in conversations), key=_order)
    position = {c.conversation_id: i for i, c in enumerate(conversations)}

    smoke: list[str] = []
    covered: set[str] = set()
    for cid in ordered:
        new = (_features(by_conversation.get(cid, ()), banned.get(cid, ())) & required) - covered
        if new:
            smoke.append(cid)
            covered |= new
        if covered == required:
            break

    strata: dict[str, list[str]] = {}
    for cid in ordered:
        strata.setdefault(_stratum(by_conversation.get(cid, ()), banned.get(cid, ())), []).append(cid)
    fast = [cid for members in strata.values() for cid in members[::3]]

    return ManifestSubsets(
        smoke=tuple(sorted(smoke, key=position.__getitem__)),
        fast=tuple(sorted(fast, key=position.__getitem__)),
    )
