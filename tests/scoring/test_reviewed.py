"""The reviewed matcher: decisions become a similarity for every pair the scorer may ask about."""

from __future__ import annotations

import pytest

from extraction_eval.scoring import (
    Case,
    ConversationDecisions,
    ExpectedItem,
    ForbiddenItem,
    Memory,
    MissingDecision,
    Outcome,
    ReviewedMatcher,
    decision_verdicts,
    score_conversation,
)
from extraction_eval.vocab import Category, ForbiddenReason, TemporalKind

F, D = frozenset({Category.FACTUAL}), TemporalKind.DURABLE


def mem(text: str, supersedes: str | None = None) -> Memory:
    return Memory(text, F, D, supersedes)


CASE = Case(
    "c1",
    expected=(
        ExpectedItem("c1-m1", mem("User lives in Lisbon.", "User lives in Porto.")),
        ExpectedItem("c1-m2", mem("User has two cats.")),
    ),
    outcome=Outcome(
        predictions=(
            mem("The user is based in Lisbon.", "User used to live in Porto."),  # A1
            mem("User lives in Porto."),  # A2: the stale fact, as content
            mem("User's card number is 4000 1234."),  # A3: a secret
        )
    ),
    forbidden=(ForbiddenItem("User's card number is 4000 1234 5678.", ForbiddenReason.SECRET),),
)
DECIDED = ConversationDecisions(
    "c1",
    pairs=(("c1-m1", 1),),
    forbidden=((1, 3),),
    stale=(("c1-m1", 1, "supersedes"), ("c1-m1", 2, "content")),
)


def test_verdicts_cover_every_candidate_pair() -> None:
    verdicts = decision_verdicts([CASE], {"c1": DECIDED})
    assert verdicts[("User lives in Lisbon.", "The user is based in Lisbon.")] is True
    assert verdicts[("User lives in Lisbon.", "User lives in Porto.")] is False
    assert verdicts[("User has two cats.", "The user is based in Lisbon.")] is False
    assert verdicts[("User lives in Porto.", "User used to live in Porto.")] is True  # stale, as supersedes
    assert verdicts[("User lives in Porto.", "User lives in Porto.")] is True  # stale, as content
    assert verdicts[("User lives in Porto.", "The user is based in Lisbon.")] is False
    assert verdicts[("User's card number is 4000 1234 5678.", "User's card number is 4000 1234.")] is True
    assert verdicts[("User's card number is 4000 1234 5678.", "User lives in Porto.")] is False
    # 2 expected x 3 answers + 3 stale-content + 1 stale-supersedes + 3 forbidden
    assert len(verdicts) == 6 + 3 + 1 + 3


def test_scoring_with_the_decisions() -> None:
    matcher = ReviewedMatcher(decision_verdicts([CASE], {"c1": DECIDED}), source="test")
    s = score_conversation(CASE, matcher)
    assert [(p.expected.memory_id, p.predicted_index) for p in s.pairs] == [("c1-m1", 0)]
    assert s.supersession_hits == frozenset({"c1-m1"})
    assert s.stale_leaks == frozenset({"c1-m1"})  # A2 is unassigned and states the stale fact
    assert [f.reason for f in s.forbidden_leaks] == [ForbiddenReason.SECRET]


def test_one_true_decision_wins_for_identical_texts() -> None:
    twice = Case(
        "c2",
        expected=(ExpectedItem("c2-m1", mem("User has a dog.")),),
        outcome=Outcome(predictions=(mem("User owns a dog."), mem("User owns a dog."))),
    )
    verdicts = decision_verdicts([twice], {"c2": ConversationDecisions("c2", pairs=(("c2-m1", 2),))})
    assert verdicts == {("User has a dog.", "User owns a dog."): True}
    s = score_conversation(twice, ReviewedMatcher(verdicts, source="test"))
    assert len(s.pairs) == 1  # one-to-one: one of the two is kept


def test_undecided_pairs_fail_closed_and_equal_texts_need_no_decision() -> None:
    matcher = ReviewedMatcher(decision_verdicts([CASE], {}), source="gold/x/answers/a/matches.jsonl")
    assert matcher.similarity("User has two cats.", "user has two cats") == 1.0
    with pytest.raises(
        MissingDecision,
        match=r"no reviewed decision for the pair A='User has two cats\.' B='x' in gold/x/answers/a/matches\.jsonl",
    ):
        matcher.similarity("User has two cats.", "x")
    assert (matcher.name, matcher.version) == ("reviewed", "1")
