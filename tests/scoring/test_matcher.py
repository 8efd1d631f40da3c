"""The default matcher: paraphrases match, other facts never do."""

from __future__ import annotations

import pytest

from extraction_eval.scoring import DEFAULT_MATCHER, Matcher, fact_keys, matcher_id, normalize


def sim(a: str, b: str) -> float:
    return DEFAULT_MATCHER.similarity(a, b)


def test_identity_and_protocol() -> None:
    assert isinstance(DEFAULT_MATCHER, Matcher)
    assert matcher_id(DEFAULT_MATCHER) == "keyed-dice@2"
    assert DEFAULT_MATCHER.threshold == 0.5


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("User lives in Lisbon.", "user lives in lisbon"),
        ("User’s name is Zoë.", "User's name is Zoë"),
        ("User  is   vegan!", "User is vegan."),
        ("ｕｓｅｒ is vegan.", "User is vegan."),  # NFKC folds full-width letters
    ],
)
def test_equal_after_normalisation_always_matches(a: str, b: str) -> None:
    assert normalize(a) == normalize(b)
    assert sim(a, b) == 1.0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("User's code review day is Tuesday.", "User's code review day is Thursday."),
        ("User lives in Lisbon.", "User lives in Porto."),
        ("User has a dentist appointment on 2026-05-08.", "User has a dentist appointment on 2026-05-09."),
        ("User runs 5 km every morning.", "User runs 10 km every morning."),
        ("User runs 5 km every morning.", "User runs every morning."),
        ("User's daughter is named Ines.", "User's daughter is named Sofia."),
        ("User has a flight to Paris in May.", "User has a flight to Paris in June."),
        ("User wakes up at 6:30.", "User wakes up at 7:30."),
        ("User likes coffee.", "User does not like coffee."),
        ("User eats meat.", "User no longer eats meat."),
        ("User smokes.", "User quit smoking."),
    ],
)
def test_different_facts_never_match(a: str, b: str) -> None:
    assert sim(a, b) == 0.0
    assert sim(b, a) == 0.0


@pytest.mark.parametrize(
    ("a", "b", "low"),
    [
        ("User is allergic to penicillin.", "User has a penicillin allergy.", 1.0),
        ("User lives in Lisbon.", "User currently lives in Lisbon.", 0.8),
        ("User has a dentist appointment on 2026-05-08.", "User has a dentist appointment on May 8, 2026.", 1.0),
        ("User runs 5 km every morning.", "User runs five km every morning.", 1.0),
        ("User prefers answers in bullet points.", "User likes answers formatted as bullet points.", 0.6),
        ("User's code review day is Tuesday.", "User has code review on Tuesdays.", 0.5),
    ],
)
def test_paraphrases_match(a: str, b: str, low: float) -> None:
    assert sim(a, b) >= low
    assert sim(a, b) >= DEFAULT_MATCHER.threshold


def test_fact_keys_read_dates_numbers_days_and_names() -> None:
    assert fact_keys("User flies to Tokyo on 2026-05-08 at 7:45 with 2 kids on Friday.") == {
        "name:tokyo",
        "date:2026-05-08",
        "num:7",
        "num:45",
        "num:2",
        "day:friday",
    }
    assert fact_keys("User's birthday is 8 May.") == {"date:-----05-08"}
    assert fact_keys("User may move soon.") == frozenset()  # lower-case 'may' is not a month


def test_similarity_is_symmetric_and_deterministic() -> None:
    pairs = [
        ("User bikes to work most days.", "User usually cycles to work."),
        ("User is learning Rust.", "User is currently learning the Rust language."),
    ]
    for a, b in pairs:
        assert sim(a, b) == sim(b, a)
        assert sim(a, b) == sim(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("User is on the platform team.", "User is on the payments team."),
        ("User plays jazz.", "User likes jazz."),
    ],
)
def test_a_one_word_substitution_is_not_a_paraphrase(a: str, b: str) -> None:
    assert sim(a, b) == 0.0


def test_no_two_distinct_gold_v1_facts_match_each_other() -> None:
    """The gold set's 130 facts and 10 stale facts are all different facts (within a conversation)."""
    import json
    from itertools import combinations

    from ..conftest import REPO

    rows = [json.loads(line) for line in (REPO / "gold" / "v1" / "expected_memories.jsonl").read_text().splitlines()]
    by_conversation: dict[str, list[str]] = {}
    for row in rows:
        texts = by_conversation.setdefault(row["conversation_id"], [])
        texts.append(row["content"])
        if row["supersedes"]:
            texts.append(row["supersedes"])
    pairs = [(a, b) for texts in by_conversation.values() for a, b in combinations(texts, 2)]
    assert len(pairs) >= 20
    assert [(a, b) for a, b in pairs if sim(a, b) >= DEFAULT_MATCHER.threshold] == []
    # across conversations too, only the same fact told twice matches itself
    everything = [t for texts in by_conversation.values() for t in texts]
    matching = {(a, b) for a, b in combinations(everything, 2) if sim(a, b) >= DEFAULT_MATCHER.threshold}
    assert matching == {("User keeps kosher.", "User keeps kosher.")}
