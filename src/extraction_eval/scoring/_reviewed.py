"""The reviewed matcher: people's match decisions on a realistic answer set, replayed (pure).

Two reviewers decided, conversation by conversation and blind to every matcher, which answer
memory states which gold row (one-to-one, the same fact whatever its category or temporal
kind), which answer memories keep a forbidden row, and which state a superseded (stale) fact,
as content or as their ``supersedes`` text; disagreements were adjudicated
(docs/answer-sets.md). Here those decisions become what a matcher is: a similarity for
every pair of texts the scorer may ask about in the reviewed conversations (1.0 decided the
same, 0.0 not). Texts equal after normalisation are the same fact without a decision (the
contract's rule 1). A pair outside the reviewed answers fails closed: ``MissingDecision``
names it. Scoring a reviewed answer set with this matcher reproduces the reviewers' counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .._exceptions import CassetteError
from ._matcher import normalize
from ._types import Case

REVIEWED_NAME = "reviewed"
REVIEWED_VERSION = "1"

STALE_FIELDS = ("content", "supersedes")


class MissingDecision(CassetteError):
    """A pair the reviewed matcher was asked about has no recorded decision."""


@dataclass(frozen=True)
class ConversationDecisions:
    """One conversation's adjudicated decisions. Answers are numbered ``A1..An`` in the order the
    answer lists them, forbidden rows ``F1..Fn`` in the gold file's order."""

    conversation_id: str
    #: (gold memory_id, answer number): the same fact, one-to-one.
    pairs: tuple[tuple[str, int], ...] = ()
    #: (forbidden row number, answer number): the answer memory keeps the forbidden content.
    forbidden: tuple[tuple[int, int], ...] = ()
    #: (gold memory_id, answer number, "content" | "supersedes"): the answer states the row's stale fact.
    stale: tuple[tuple[str, int, str], ...] = ()


def decision_verdicts(
    cases: Iterable[Case], decisions: Mapping[str, ConversationDecisions]
) -> dict[tuple[str, str], bool]:
    """Every (A, B) the scorer may ask about in ``cases`` (``candidate_pairs``), decided.

    A pair is the same fact when any decision says so: two identical answer texts where one was
    paired are the same fact, and the scorer's one-to-one assignment keeps one of them, as the
    reviewers did. A case with no decisions contributes nothing, so asking about it fails closed.
    """
    verdicts: dict[tuple[str, str], bool] = {}

    def put(a: str, b: str, same: bool) -> None:
        verdicts[(a, b)] = verdicts.get((a, b), False) or same

    for case in cases:
        decided = decisions.get(case.conversation_id)
        if decided is None:
            continue
        predictions = case.outcome.predictions
        pairs = set(decided.pairs)
        stale = set(decided.stale)
        forbidden = set(decided.forbidden)
        for number, prediction in enumerate(predictions, 1):
            for item in case.expected:
                put(item.memory.content, prediction.content, (item.memory_id, number) in pairs)
                stale_text = item.memory.supersedes
                if stale_text is None:
                    continue
                put(stale_text, prediction.content, (item.memory_id, number, "content") in stale)
                if prediction.supersedes is not None:
                    put(stale_text, prediction.supersedes, (item.memory_id, number, "supersedes") in stale)
            for f_number, banned in enumerate(case.forbidden or (), 1):
                put(banned.content, prediction.content, (f_number, number) in forbidden)
    return verdicts


@dataclass(frozen=True)
class ReviewedMatcher:
    """``reviewed@1``: similarity 1.0 where the reviewers decided the same fact, else 0.0."""

    verdicts: Mapping[tuple[str, str], bool] = field(repr=False)
    #: Where the decisions came from (named in a missing pair's error).
    source: str
    name: str = REVIEWED_NAME
    version: str = REVIEWED_VERSION
    threshold: float = 0.5

    def similarity(self, a: str, b: str) -> float:
        return self.explain(a, b)[0]

    def explain(self, a: str, b: str) -> tuple[float, str]:
        if normalize(a) == normalize(b):
            return 1.0, "equal after normalisation"
        try:
            same = self.verdicts[(a, b)]
        except KeyError:
            raise MissingDecision(
                f"no reviewed decision for the pair A={a!r} B={b!r} in {self.source}: --matcher reviewed "
                "scores only the answer set the reviewers matched (run it with --answers SET); use another "
                "matcher for other answers, or have the pair reviewed (docs/answer-sets.md)."
            ) from None
        return (1.0, "reviewers: same fact") if same else (0.0, "reviewers: not the same fact")
