"""The judge matcher as scoring sees it: a lookup of recorded judgments (docs/matcher.md, "The judge
matcher"); the pairs the scorer may ask about; the judge model a matcher id names. The recording
and the replay over HTTP are tests/evaluation/test_judge.py."""

from __future__ import annotations

import pytest

from extraction_eval._exceptions import CassetteError, ExtractionEvalError
from extraction_eval.scoring import JudgeMatcher, MissingJudgment, candidate_pairs
from extraction_eval.scoring._judge import judge_model_of
from extraction_eval.scoring._matcher import matcher_id
from extraction_eval.scoring._types import Case, ExpectedItem, ForbiddenItem, Memory, Outcome
from extraction_eval.vocab import Category, ForbiddenReason, TemporalKind

LISBON, REWORDED, PORTO, TEA = (
    "User lives in Lisbon.",
    "The user is living in Lisbon now.",
    "User lives in Porto.",
    "User likes tea.",
)


def _judge(verdicts: dict[tuple[str, str], bool | None]) -> JudgeMatcher:
    return JudgeMatcher(
        verdicts=verdicts, judge_model="gpt-4o-mini", record_command="extraction-eval run --mode record"
    )


def test_the_recorded_verdict_decides_similarity_1_for_same_else_0() -> None:
    judge = _judge({(LISBON, REWORDED): True, (LISBON, PORTO): False, (LISBON, TEA): None})
    assert judge.explain(LISBON, REWORDED) == (1.0, "judge gpt-4o-mini: same fact")
    assert judge.explain(LISBON, PORTO) == (0.0, "judge gpt-4o-mini: different fact")
    # refused or malformed: no judgment, counted as a different fact
    assert judge.explain(LISBON, TEA) == (0.0, "judge gpt-4o-mini: no usable answer (counted as a different fact)")
    # similarity is explain's number; threshold 0.5 accepts "same" only
    assert [judge.similarity(LISBON, b) for b in (REWORDED, PORTO, TEA)] == [1.0, 0.0, 0.0]
    assert judge.threshold == 0.5
    assert matcher_id(judge) == "judge@1:gpt-4o-mini"


def test_texts_equal_after_normalisation_are_the_same_fact_without_asking() -> None:
    # no verdict recorded, and a recorded "different" is not read either
    for judge in (_judge({}), _judge({(LISBON, "user lives in LISBON"): False})):
        assert judge.explain(LISBON, "user lives in LISBON") == (1.0, "equal after normalisation (not asked)")
        assert judge.similarity(LISBON, "user lives in LISBON") == 1.0


def test_a_pair_with_no_recorded_judgment_fails_closed_naming_it_and_the_command_that_records_it() -> None:
    # the verdict of (B, A) is not the verdict of (A, B): the judge was asked about an ordered pair
    judge = _judge({(REWORDED, LISBON): True})
    message = (
        f"no recorded judgment of judge model 'gpt-4o-mini' for the pair A={LISBON!r} B={REWORDED!r}; "
        "record the judgments with `extraction-eval run --mode record` (it needs the API key; docs/runbooks.md)."
    )
    for ask in (judge.explain, judge.similarity):
        with pytest.raises(MissingJudgment) as raised:
            ask(LISBON, REWORDED)
        assert str(raised.value) == message
        assert isinstance(raised.value, CassetteError) and isinstance(raised.value, ExtractionEvalError)


@pytest.mark.parametrize(
    ("matcher_name", "model"),
    [
        ("judge@1:gpt-4o-mini", "gpt-4o-mini"),
        ("judge", None),  # the settings' judge model
        ("judge@1", None),
        ("judge@1:", None),
        # an OpenAI fine-tuned model's id holds colons, a Vertex AI model's id an @
        ("judge@1:ft:gpt-4o-mini:acme::abc123", "ft:gpt-4o-mini:acme::abc123"),
        ("judge@1:claude-3-5-sonnet@20240620", "claude-3-5-sonnet@20240620"),
    ],
)
def test_the_judge_model_a_matcher_id_names(matcher_name: str, model: str | None) -> None:
    assert judge_model_of(matcher_name) == model
    if model is not None:  # a judged run's matcher id gives back its judge model
        judge = JudgeMatcher(verdicts={}, judge_model=model, record_command="rec")
        assert judge_model_of(matcher_id(judge)) == model


def _memory(content: str, supersedes: str | None = None) -> Memory:
    return Memory(content, frozenset({Category.FACTUAL}), TemporalKind.CURRENT, supersedes=supersedes)


def test_candidate_pairs_every_pair_the_scorer_may_ask_about_once_in_a_stable_order() -> None:
    moved, lived, secret, cat, dog = (
        "User moved to Lisbon.",
        "User lived in Porto.",
        "User's password is hunter2.",
        "User has a cat.",
        "User has a dog.",
    )
    first = Case(
        "c1",
        (ExpectedItem("m1", _memory(LISBON, supersedes=PORTO)), ExpectedItem("m2", _memory(TEA))),
        # the second prediction states m2's text (equal after normalisation: never asked)
        Outcome(predictions=(_memory(moved, supersedes=lived), _memory("user likes TEA"))),
        (ForbiddenItem(secret, ForbiddenReason.SECRET),),
    )
    second = Case(
        "c2",
        (ExpectedItem("m2", _memory(TEA)), ExpectedItem("m3", _memory(cat))),
        Outcome(predictions=(_memory(moved), _memory(dog))),
        None,  # no forbidden file
    )
    assert candidate_pairs([first, second]) == [
        # c1: each expected text against each prediction
        (LISBON, moved),
        (LISBON, "user likes TEA"),
        # m1's superseded text against each prediction and each prediction's supersedes
        (PORTO, moved),
        (PORTO, "user likes TEA"),
        (PORTO, lived),
        (TEA, moved),  # (TEA, "user likes TEA") is left out
        # the forbidden text against each prediction
        (secret, moved),
        (secret, "user likes TEA"),
        # c2: (TEA, moved) again is not repeated
        (TEA, dog),
        (cat, moved),
        (cat, dog),
    ]
