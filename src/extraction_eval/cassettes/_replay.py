"""Replay: answer each conversation from its cassette, after checking the request hash.

Nothing is replayed silently. A missing cassette, a request hash mismatch or a
cassette for a conversation the gold set does not have stops the run; the error
names the conversation and, like vcrpy, shows for the closest recordings which
part of the request matched and which did not.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._exceptions import CassetteError
from ..contract import prompt_sha256, request_sha256, schema_sha256
from ..gold import Cassette, Conversation, rewrite_cassettes_command
from ..vocab import CassetteKind

_CHECK = {True: "ok", False: "DIFFERS"}


@dataclass(frozen=True)
class ReplayPlan:
    """The cassettes a replay will use, and the ones it will not."""

    cassettes: Mapping[str, Cassette]
    unused: tuple[str, ...]


def _explain(
    conversation: Conversation,
    model: str,
    cassette: Cassette,
    expected_hash: str,
    hash_owner: Mapping[str, str],
) -> list[str]:
    """What matches and what differs between a request and one recording."""
    lines = [f"  recording {cassette.conversation_id!r} (recorded_at {cassette.recorded_at}):"]
    lines.append(f"    conversation_id  {_CHECK[cassette.conversation_id == conversation.conversation_id]}")
    lines.append(
        f"    model            {_CHECK[cassette.model == model]}"
        + ("" if cassette.model == model else f" (recorded {cassette.model!r}, requested {model!r})")
    )
    same_request = cassette.request_sha256 == expected_hash
    detail = ""
    if not same_request:
        if cassette.model != model and request_sha256(conversation, cassette.model) == cassette.request_sha256:
            detail = " (only the model name differs)"
        elif cassette.request_sha256 in hash_owner:
            other = hash_owner[cassette.request_sha256]
            detail = f" (it is the request of conversation {other!r}" + (
                ", the one it is filed under)"
                if other == cassette.conversation_id
                else ": cassettes swapped or ids renamed)"
            )
        else:
            detail = (
                " (rendered messages or sampling differ: the conversation's turns or "
                "session_date, the renderer, or SAMPLING changed since recording)"
            )
    lines.append(f"    request_sha256   {_CHECK[same_request]}{detail}")
    lines.append(f"    prompt_sha256    {_CHECK[cassette.prompt_sha256 == prompt_sha256()]}")
    lines.append(f"    schema_sha256    {_CHECK[cassette.schema_sha256 == schema_sha256()]}")
    return lines


def _closest(conversation_id: str, candidates: Sequence[str]) -> list[str]:
    return difflib.get_close_matches(conversation_id, candidates, n=2, cutoff=0.5)


def plan_replay(
    path: Path,
    cassettes: Sequence[Cassette],
    all_conversations: Sequence[Conversation],
    selected: Sequence[Conversation],
    model: str,
    *,
    kind: CassetteKind | None = None,
) -> ReplayPlan:
    """Check every selected conversation has a cassette for exactly its request.

    ``cassettes`` are the file's rows in order (the n-th is on line n: JSONL allows no empty
    line); every one must belong to a gold conversation. ``kind`` is the manifest's cassette
    kind: it picks the fix (regenerate or re-record).
    """
    by_id = {c.conversation_id: c for c in cassettes}
    line = {c.conversation_id: n for n, c in enumerate(cassettes, start=1)}
    gold = {c.conversation_id: c for c in all_conversations}
    hashes = {cid: request_sha256(c, model) for cid, c in gold.items()}
    owner = {h: cid for cid, h in hashes.items()}
    rewrite = rewrite_cassettes_command(path.parent, [kind, *(c.cassette_kind for c in cassettes)])
    fix = f"Fix the ids or the files, or rewrite the cassettes with {rewrite}; no override lifts this."

    problems: list[str] = []
    for conversation in selected:
        cid = conversation.conversation_id
        cassette = by_id.get(cid)
        if cassette is None:
            lines = [f"conversation {cid!r}: no cassette recorded."]
            for near in _closest(cid, list(by_id)):
                lines += _explain(conversation, model, by_id[near], hashes[cid], owner)
            same = [c for c in cassettes if c.request_sha256 == hashes[cid]]
            for twin in same:
                lines.append(f"  the recording filed as {twin.conversation_id!r} has this request.")
            problems.append("\n".join(lines))
            continue
        if cassette.request_sha256 != hashes[cid]:
            lines = [
                f"conversation {cid!r}: request hash mismatch (recorded "
                f"{cassette.request_sha256[:12]}…, now {hashes[cid][:12]}…; line {line[cid]})."
            ]
            lines += _explain(conversation, model, cassette, hashes[cid], owner)
            problems.append("\n".join(lines))
    unknown = [c for c in cassettes if c.conversation_id not in gold]
    for cassette in unknown:
        cid = cassette.conversation_id
        match = owner.get(cassette.request_sha256)
        closest = [match] if match else _closest(cid, list(gold))
        lines = [f"line {line[cid]}: cassette {cid!r}: the gold set has no conversation {cid!r} (closest {closest!r})."]
        for other in closest:
            lines += _explain(gold[other], model, cassette, hashes[other], owner)
        if match:
            lines.append(
                f"  the cassette filed as {cid!r} has the request of gold conversation {match!r}: "
                f"file it as {match!r}, or remove it."
            )
        else:
            lines.append("  no gold conversation has its request: remove it, or fix its conversation id.")
        problems.append("\n".join(lines))
    if problems:
        what = (
            [f"{len(problems) - len(unknown)} conversation(s) cannot be replayed"]
            if len(problems) > len(unknown)
            else []
        )
        if unknown:
            ids = [c.conversation_id for c in unknown]
            what.append(f"cassettes for conversations the gold set does not have: {ids!r}")
        shown = problems[:5]
        more = f"\n... and {len(problems) - 5} more." if len(problems) > 5 else ""
        raise CassetteError(f"{path}: " + "; ".join(what) + ":\n" + "\n".join(shown) + more + f"\n{fix}")
    selected_ids = {c.conversation_id for c in selected}
    return ReplayPlan(
        cassettes={cid: by_id[cid] for cid in selected_ids},
        unused=tuple(c.conversation_id for c in cassettes if c.conversation_id not in selected_ids),
    )
