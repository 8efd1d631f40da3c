"""keyed-dice@3 (the default before fact-cover@1): paraphrases match, other facts never do."""

from __future__ import annotations

import re

import pytest

from extraction_eval.scoring import KeyedDiceMatcher, Matcher, fact_keys, matcher_id, normalize

# keyed-dice@3, the default before fact-cover@1 (tests/scoring/test_cover.py); still registered by name.
KEYED_DICE = KeyedDiceMatcher()


def sim(a: str, b: str) -> float:
    return KEYED_DICE.similarity(a, b)


def test_identity_and_protocol() -> None:
    assert isinstance(KEYED_DICE, Matcher)
    assert matcher_id(KEYED_DICE) == "keyed-dice@3"
    assert KEYED_DICE.threshold == 0.5


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
        # a word swapped while the rest is shared (version 2 matched these at 0.75 or 1.0)
        ("User prefers dark mode in the editor.", "User prefers light mode in the editor."),
        ("User runs 5 kilometres every morning.", "User runs 5 miles every morning."),
        ("User works as a nurse at the city hospital.", "User works as a teacher at the city hospital."),
        ("User plays the guitar in a band on weekends.", "User plays the piano in a band on weekends."),
        # the same words in another order around an order word
        ("User prefers tea over coffee.", "User prefers coffee over tea."),
        ("User likes tea more than coffee.", "User likes coffee more than tea."),
        ("User moved from Porto to Lisbon.", "User moved from Lisbon to Porto."),
        ("User switched from Java to Python.", "User switched from Python to Java."),
        (
            "User said Python replaced Java as their main language.",
            "User said Java replaced Python as their main language.",
        ),
    ],
)
def test_different_facts_never_match(a: str, b: str) -> None:
    assert sim(a, b) == 0.0
    assert sim(b, a) == 0.0


def test_a_reversal_around_replaced_is_refused_by_the_order_rule_alone() -> None:
    a = "User said Python replaced Java as their main language."
    b = "User said Java replaced Python as their main language."
    # Rules 2 to 5 let this pair through: the same keys (Python and Java are not the first word
    # of the sentence), no negation, and the same words, so Dice alone would give 1.0.
    assert fact_keys(a) == fact_keys(b) == {"name:python", "name:java"}
    assert sorted(normalize(a).split()) == sorted(normalize(b).split())
    assert not {"not", "no", "never"} & set(normalize(a).split())
    # Only rule 6 refuses it: python and java swap sides of "replaced".
    assert sim(a, b) == 0.0 and sim(b, a) == 0.0


# docs/matcher.md, "What it matches and what it refuses", in the table's order: (expected, predicted,
# similarity, verdict).
# Each score is worked by hand from the rules in docs/matcher.md: content tokens are the
# normalised words minus stop words (user, s, is, has, a, to, in, on, as, with, ...),
# negations, digits, month names, weekdays and number words; Dice = 2 * shared / (|a| + |b|).
DOCUMENTED_PAIRS = [
    # step 1: equal after normalisation
    ("User lives in Lisbon.", "user lives in lisbon", 1.0, True),
    # {allergic, penicillin} vs {penicillin, allergy}; allergic/allergy share "aller": 2*2/(2+2)
    ("User is allergic to penicillin.", "User has a penicillin allergy.", 1.0, True),
    # {lives, lisbon} vs {currently, lives, lisbon}: 2*2/(2+3) = 0.8
    ("User lives in Lisbon.", "User currently lives in Lisbon.", 0.8, True),
    # both keys {date:2026-05-08}; {dentist, appointment} on both sides: 2*2/(2+2)
    ("User has a dentist appointment on 2026-05-08.", "User has a dentist appointment on May 8, 2026.", 1.0, True),
    # both keys {num:5}; {runs, km, every, morning} on both sides: 2*4/(4+4)
    ("User runs 5 km every morning.", "User runs five km every morning.", 1.0, True),
    # prefers and likes are both "like": {like, answers, bullet, points} vs
    # {like, answers, formatted, bullet, points}: 2*4/(4+5) = 0.889
    ("User prefers answers in bullet points.", "User likes answers formatted as bullet points.", 8 / 9, True),
    # both keys {day:tuesday}; {code, review, day} vs {code, review}: 2*2/(3+2) = 0.8
    ("User's code review day is Tuesday.", "User has code review on Tuesdays.", 0.8, True),
    # sides of "to": {moved, porto} | {lisbon} vs {moved} | {lisbon, porto}; of "from": {moved} | {porto, lisbon}
    # vs {moved, lisbon} | {porto}. Only one word changes side each time, none swap: 2*3/(3+3)
    ("User moved from Porto to Lisbon.", "User moved to Lisbon from Porto.", 1.0, True),
    # day:tuesday vs day:thursday
    ("User's code review day is Tuesday.", "User's code review day is Thursday.", 0.0, False),
    # name:lisbon vs name:porto
    ("User lives in Lisbon.", "User lives in Porto.", 0.0, False),
    # {num:5} vs {}
    ("User runs 5 km every morning.", "User runs every morning.", 0.0, False),
    # {num:6, num:30} vs {num:7, num:30}
    ("User wakes up at 6:30.", "User wakes up at 7:30.", 0.0, False),
    # 0 negations vs 1 ("not")
    ("User likes coffee.", "User does not like coffee.", 0.0, False),
    # 0 negations vs 1 ("quit")
    ("User smokes.", "User quit smoking.", 0.0, False),
    # {platform, team} vs {payments, team}: 1 shared, one different word each side
    ("User is on the platform team.", "User is on the payments team.", 0.0, False),
    # {plays, jazz} vs {like, jazz}: 1 shared, one different word each side
    ("User plays jazz.", "User likes jazz.", 0.0, False),
    # {like, dark, mode, editor} vs {like, light, mode, editor}: 3 shared, exactly one swapped word each side
    ("User prefers dark mode in the editor.", "User prefers light mode in the editor.", 0.0, False),
    # the same words; tea and coffee swap sides of "over"
    ("User prefers tea over coffee.", "User prefers coffee over tea.", 0.0, False),
    # porto and lisbon swap sides of "to"
    ("User moved from Porto to Lisbon.", "User moved from Lisbon to Porto.", 0.0, False),
]

# docs/matcher.md, "Known limits", in the table's order: the costs of being conservative (and the
# holes left), pinned so they are seen to move.
DOCUMENTED_LIMITS = [
    # {bikes, work, most, days} vs {usually, cycles, work}: 1 shared ("work"), rule 5
    ("User bikes to work most days.", "User usually cycles to work.", 0.0, False),
    # enjoys and likes are both "like": {like, hiking} on both sides; and "loves" is "like" too, a
    # stronger word read as the same fact
    ("User enjoys hiking.", "User likes hiking.", 1.0, True),
    ("User loves jazz.", "User likes jazz.", 1.0, True),
    # 0 negations vs 1 ("not")
    ("User is a vegetarian.", "User does not eat meat.", 0.0, False),
    # name:zoë vs name:zoe
    ("User’s name is Zoë.", "User's name is Zoe.", 0.0, False),
    # "twenty-five" reads as num:20 ("twenty", then "five" is not the token's first word) vs num:25
    ("User is twenty-five years old.", "User is 25 years old.", 0.0, False),
    # both keys {num:2} (lower-case places are no name key), but {lives, lisbon, cats} vs
    # {lives, porto, cats} swap exactly one word each side: refused (version 2 matched them at 0.667)
    ("User lives in lisbon with two cats.", "User lives in porto with two cats.", 0.0, False),
    # {allergic, peanuts, shellfish} vs {allergic, peanuts}: 2*2/(3+2) = 0.8, a match
    ("User is allergic to peanuts and shellfish.", "User is allergic to peanuts.", 0.8, True),
    # both keys {name:java, name:python}; tokens {replaced, java, python} on both sides ("with" is a
    # stop word, not an order word, and nothing comes before "replaced" to swap with): 2*3/(3+3),
    # a match although the two say opposite things
    ("User replaced Java with Python.", "User replaced Python with Java.", 1.0, True),
]


@pytest.mark.parametrize(("a", "b", "expected", "matches"), DOCUMENTED_PAIRS + DOCUMENTED_LIMITS)
def test_documented_pairs_score_exactly(a: str, b: str, expected: float, matches: bool) -> None:
    assert sim(a, b) == pytest.approx(expected, abs=1e-9)
    assert (sim(a, b) >= KEYED_DICE.threshold) is matches


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


def test_similarity_is_symmetric() -> None:
    pairs = [
        # {lives, lisbon} vs {currently, lives, lisbon}: 2*2/(2+3) = 0.8
        ("User lives in Lisbon.", "User currently lives in Lisbon."),
        # {like, answers, bullet, points} vs {like, answers, formatted, bullet, points}: 8/9
        ("User prefers answers in bullet points.", "User likes answers formatted as bullet points."),
        # {learning, rust} vs {currently, learning, rust, language}: 2*2/(2+4) = 0.667
        ("User is learning Rust.", "User is currently learning the Rust language."),
        # {drinks, green, tea, every, morning} vs the same + {work}: 2*5/(5+6) = 0.909
        ("User drinks green tea every morning.", "User drinks green tea every morning at work."),
        # {drinks, green, tea, every, morning} vs {drinks, tea, every, morning}: 2*4/(5+4) = 0.889
        ("User drinks green tea every morning.", "User drinks tea every morning."),
    ]
    for a, b in pairs:
        assert 0.0 < sim(a, b) < 1.0  # a pair scoring 0.0 or 1.0 both ways shows nothing
        assert sim(a, b) == sim(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("User is on the platform team.", "User is on the payments team."),
        ("User plays jazz.", "User likes jazz."),
    ],
)
def test_a_one_word_substitution_is_not_a_paraphrase(a: str, b: str) -> None:
    assert sim(a, b) == 0.0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # the same order word on both sides, nothing swapped: nothing to compare, Dice decides: {like, tea, over, coffee} twice
        ("User prefers tea over coffee.", "User likes tea over coffee."),
        # the same order around "over", a phrase moved elsewhere: {like, tea, over, coffee, morning} twice
        ("User prefers tea over coffee in the morning.", "In the morning the user prefers tea over coffee."),
    ],
    ids=["synonym", "moved-phrase"],
)
def test_order_words_refuse_only_a_swap(a: str, b: str) -> None:
    assert sim(a, b) == 1.0 and sim(b, a) == 1.0


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
    assert [(a, b) for a, b in pairs if sim(a, b) >= KEYED_DICE.threshold] == []
    # across conversations too, only the same fact told twice matches itself
    everything = [t for texts in by_conversation.values() for t in texts]
    matching = {(a, b) for a, b in combinations(everything, 2) if sim(a, b) >= KEYED_DICE.threshold}
    assert matching == {("User keeps kosher.", "User keeps kosher.")}


def test_the_docs_tables_are_the_documented_pairs() -> None:
    """docs/matcher.md's two tables and its PAIRS script show exactly these pairs, in this order."""
    import ast

    from ..conftest import REPO

    text = (REPO / "docs" / "matcher.md").read_text(encoding="utf-8")
    pairs_table = re.findall(r"^\| ([01]\.\d{3}) \| (match|no) \| (.+?) \| (.+?) \| .+ \|$", text, re.M)
    limits_table = re.findall(r"^\| ([01]\.\d{3}) \| (User.+?) \| (.+?) \| .+ \|$", text, re.M)
    assert [(a, b, float(score), verdict) for score, verdict, a, b in pairs_table] == [
        (a, b, round(expected, 3), "match" if matches else "no") for a, b, expected, matches in DOCUMENTED_PAIRS
    ]
    # the limits table has no verdict column: its score must fall on the flag's side of the threshold
    assert [(a, b, float(score), float(score) >= 0.5) for score, a, b in limits_table] == [
        (a, b, round(expected, 3), matches) for a, b, expected, matches in DOCUMENTED_LIMITS
    ]
    # the tables are the output of the "Check it yourself" script: its PAIRS are the same pairs in the same order
    script = text.split("## Check it yourself", 1)[1]
    found = re.search(r"^PAIRS = (\[\n.*?\n\])$", script, re.M | re.S)
    assert found is not None
    assert ast.literal_eval(found.group(1)) == [(a, b) for a, b, _, _ in DOCUMENTED_PAIRS + DOCUMENTED_LIMITS]
