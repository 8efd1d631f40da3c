"""The reviewed matcher's I/O: an answer set's ``matches.jsonl``, checked against the answers it decides.

One row per conversation of the answer set:
``{"conversation_id", "answer_sha256", "pairs": [[memory_id, "A<k>"]], "forbidden": [["F<j>", "A<k>"]],
"stale": [[memory_id, "A<k>", "content" | "supersedes"]], "decided": "agreed" | "adjudicated"}``.
``answer_sha256`` is the sha256 of the answer's raw response (the cassette's ``response``), so a
decision never applies to an answer it was not made on. Scoring sees only ``scoring.ReviewedMatcher``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from .._exceptions import ConfigurationError, GoldDataError
from .._jsonio import iter_jsonl, sha256_hex
from ..gold import Conversation, GoldSet
from ..scoring import Case
from ..scoring._reviewed import (
    REVIEWED_NAME,
    STALE_FIELDS,
    ConversationDecisions,
    MissingDecision,
    ReviewedMatcher,
    decision_verdicts,
)
from ._answers import Answer
from ._score import build_cases

MATCHES_FILE = "matches.jsonl"
_ANSWER = re.compile(r"A([1-9][0-9]*)")
_FORBIDDEN = re.compile(r"F([1-9][0-9]*)")


def is_reviewed(name: str | None) -> bool:
    return name is not None and name.split("@", 1)[0] == REVIEWED_NAME


def response_sha256(response: str | None) -> str:
    return sha256_hex((response or "").encode("utf-8"))


def _number(pattern: re.Pattern[str], value: object, where: str, what: str) -> int:
    match = pattern.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise GoldDataError(
            f"{where}: {what} {value!r} must look like {pattern.pattern[0]}1, {pattern.pattern[0]}2, ..."
        )
    return int(match.group(1))


def read_decisions(path: Path) -> dict[str, tuple[str, ConversationDecisions]]:
    """``matches.jsonl``: per conversation, the answer hash and its decisions (shape checked here,
    references against the answers in ``reviewed_matcher``)."""
    if not path.is_file():
        raise GoldDataError(
            f"{path}: file not found; --matcher reviewed replays an answer set's adjudicated match "
            "decisions (docs/answer-sets.md)."
        )
    out: dict[str, tuple[str, ConversationDecisions]] = {}
    for row in iter_jsonl(path):
        v = row.value
        where = f"{path}:{row.line}"
        keys = {"conversation_id", "answer_sha256", "pairs", "forbidden", "stale", "decided"}
        if not isinstance(v, dict) or set(v) != keys:
            raise GoldDataError(f"{where}: keys must be {sorted(keys)!r}.")
        cid = v["conversation_id"]
        if not isinstance(cid, str) or cid in out:
            raise GoldDataError(f"{where}: field 'conversation_id': {cid!r} is not a string or repeats an earlier row.")
        for name in ("pairs", "forbidden", "stale"):
            if not isinstance(v[name], list) or not all(isinstance(p, list) for p in v[name]):
                raise GoldDataError(f"{where}: field {name!r} must be a list of lists.")
        if not all(len(p) == 2 and isinstance(p[0], str) for p in v["pairs"]):
            raise GoldDataError(f"{where}: field 'pairs': each must be [memory_id, 'A<k>'].")
        if not all(len(p) == 3 and isinstance(p[0], str) and p[2] in STALE_FIELDS for p in v["stale"]):
            raise GoldDataError(f"{where}: field 'stale': each must be [memory_id, 'A<k>', 'content' | 'supersedes'].")
        if not all(len(p) == 2 for p in v["forbidden"]):
            raise GoldDataError(f"{where}: field 'forbidden': each must be ['F<j>', 'A<k>'].")
        decisions = ConversationDecisions(
            conversation_id=cid,
            pairs=tuple((p[0], _number(_ANSWER, p[1], where, "answer")) for p in v["pairs"]),
            forbidden=tuple(
                (_number(_FORBIDDEN, p[0], where, "forbidden row"), _number(_ANSWER, p[1], where, "answer"))
                for p in v["forbidden"]
            ),
            stale=tuple((p[0], _number(_ANSWER, p[1], where, "answer"), p[2]) for p in v["stale"]),
        )
        out[cid] = (str(v["answer_sha256"]), decisions)
    return out


def _check_references(case: Case, decisions: ConversationDecisions, where: str) -> None:
    n_answers = len(case.outcome.predictions)
    ids = {item.memory_id for item in case.expected}
    stale_ids = {item.memory_id for item in case.expected if item.memory.supersedes is not None}
    n_forbidden = len(case.forbidden or ())
    bad = [f"{m}/A{k}" for m, k in decisions.pairs if m not in ids or k > n_answers]
    bad += [f"F{j}/A{k}" for j, k in decisions.forbidden if j > n_forbidden or k > n_answers]
    bad += [f"{m}/A{k}/{f}" for m, k, f in decisions.stale if m not in stale_ids or k > n_answers]
    if bad:
        raise GoldDataError(f"{where}: decisions {bad!r} name rows or answers that conversation does not have.")
    for seen in ({m for m, _ in decisions.pairs}, {k for _, k in decisions.pairs}):
        if len(seen) != len(decisions.pairs):
            raise GoldDataError(f"{where}: field 'pairs' is not one-to-one: {list(decisions.pairs)!r}.")


def reviewed_matcher(
    gold: GoldSet, selected: Sequence[Conversation], answers: Mapping[str, Answer], path: Path | None = None
) -> ReviewedMatcher:
    """The decisions of ``gold``'s answer set over the ``answers`` being scored.

    Every answer must be the one the decisions were made on (its sha256), else the run stops:
    a decision made on another answer is never replayed."""
    if path is None:
        if gold.answer_set is None:
            raise ConfigurationError(
                "--matcher reviewed replays the reviewers' decisions on a realistic answer set: add "
                f"--answers SET (the sets of {gold.path}: docs/answer-sets.md)."
            )
        path = gold.cassette_dir / MATCHES_FILE
    recorded = read_decisions(path)
    cases = build_cases(gold, selected, answers)
    decided: dict[str, ConversationDecisions] = {}
    for case in cases:
        cid = case.conversation_id
        if cid not in recorded:
            continue  # its pairs fail closed when asked about
        sha, decisions = recorded[cid]
        actual = response_sha256(answers[cid].response)
        if sha != actual:
            raise MissingDecision(
                f"{path}: the decisions for {cid!r} were made on an answer with sha256 {sha[:12]}…, but the "
                f"answer scored here has {actual[:12]}…; decisions never carry over to another answer: have "
                "the new answer reviewed (docs/answer-sets.md) or use another matcher."
            )
        _check_references(case, decisions, f"{path} ({cid})")
        decided[cid] = decisions
    return ReviewedMatcher(verdicts=decision_verdicts(cases, decided), source=str(path))


def set_reviewed_matcher(gold_dir: Path, answer_set: str) -> ReviewedMatcher:
    """The decisions over the answer set's own cassettes (``diff`` explaining a reviewed run's rows)."""
    from ..gold import load_gold, read_cassettes
    from ._answers import answer_from_cassette

    gold = load_gold(gold_dir, answers=answer_set)
    assert gold.manifest is not None  # required for an answer set
    answers = {c.conversation_id: answer_from_cassette(c) for c in read_cassettes(gold, gold.manifest)}
    return reviewed_matcher(gold, gold.conversations, answers)


__all__ = [
    "MATCHES_FILE",
    "is_reviewed",
    "read_decisions",
    "response_sha256",
    "reviewed_matcher",
    "set_reviewed_matcher",
]
