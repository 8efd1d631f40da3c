"""fact-cover-lr: fact-cover@2's features weighed by a logistic model fitted on the tuning half."""

from __future__ import annotations

import math

import pytest

from extraction_eval.scoring import MATCHERS, resolve_matcher
from extraction_eval.scoring._cover_lr import (
    _FC,
    FEATURES,
    WEIGHTS,
    WEIGHTS_BY_VERSION,
    CoverLogisticMatcher,
    features,
    probability,
    substituted,
)


def test_it_is_registered_with_its_fitted_weights() -> None:
    m = resolve_matcher("fact-cover-lr")
    assert isinstance(m, CoverLogisticMatcher) and isinstance(MATCHERS["fact-cover-lr@1"], CoverLogisticMatcher)
    assert len(WEIGHTS) == len(FEATURES) and any(w != 0.0 for w in WEIGHTS)


def test_the_feature_vector_by_hand() -> None:
    x = dict(zip(FEATURES, features("User lives in Lisbon.", "User lives in Lisbon now."), strict=True))
    assert x["bias"] == 1.0
    assert x["cover_forward"] == 1.0  # every expected content word is stated
    assert x["key_overlap"] == 1.0  # the one name, lisbon, is there
    assert x["log_length_ratio"] == pytest.approx(math.log(26 / 22))
    assert all(x[f"rule_{name}"] == 0.0 for name in ("date", "number", "name", "when", "polarity"))
    refused = dict(zip(FEATURES, features("User moved on 2026-03-01.", "User moved house."), strict=True))
    assert refused["rule_date"] == 1.0 and refused["fc_forward"] == 0.0


def test_probability_is_the_logistic_of_the_weighted_sum() -> None:
    assert probability((0.0, 0.0), (1.0, 5.0)) == 0.5
    assert probability((1.0, 2.0), (1.0, 1.0)) == pytest.approx(1 / (1 + math.exp(-3)))
    assert probability((1000.0,), (1.0,)) == pytest.approx(1.0)  # clipped, never an overflow


def test_equal_text_matches_and_another_date_never_does() -> None:
    m = CoverLogisticMatcher()
    assert m.explain("User lives in Lisbon.", "user lives in lisbon") == (1.0, "equal after normalisation")
    # the contract: text about another date never matches, however much else it shares
    p, rule = m.explain(
        "User joined the Riverside Camera Club on 2026-10-13.", "User joined the Riverside Camera Club on 2026-10-06."
    )
    assert p == 0.0 and rule.startswith("another fact (fact-cover@2: date 2026-10-13 not in the candidate")


def test_a_paraphrase_is_accepted_and_another_fact_refused() -> None:
    m = CoverLogisticMatcher()
    assert m.similarity("User has an 80 litre planted tank.", "User has an 80-litre planted aquarium.") >= m.threshold
    assert m.similarity("User has a dog named Rufus.", "User's sister lives in Leeds.") < m.threshold


def test_version_2_is_the_latest_and_has_its_own_weights() -> None:
    m = resolve_matcher("fact-cover-lr")
    assert MATCHERS["fact-cover-lr@2"] is m and m.version == "2"
    assert WEIGHTS_BY_VERSION["2"] != WEIGHTS and len(WEIGHTS_BY_VERSION["2"]) == len(FEATURES)


@pytest.mark.parametrize(
    ("expected", "candidate"),
    [
        ("User has a 6 km commute.", "User has a 9 km commute."),  # another number in its place
        ("User moved to Utrecht.", "User moved to Rotterdam."),  # another place
        ("User banks with Fidelity.", "User banks with Vanguard."),  # another company
    ],
)
def test_version_2_refuses_another_number_or_name_outright(expected: str, candidate: str) -> None:
    _, rule = _FC.explain(expected, candidate)
    assert rule.startswith(("number ", "name "))
    assert substituted(expected, candidate, rule)
    p, why = MATCHERS["fact-cover-lr@2"].explain(expected, candidate)
    assert p == 0.0 and why.startswith("another fact")


@pytest.mark.parametrize(
    ("expected", "candidate"),
    [
        ("User earns 34k.", "User earns £34,000 a year."),  # the same amount, written otherwise
        ("User prefers hotels over Airbnb rentals.", "User books only hotels, not Airbnbs."),  # a plural
        ("User makes lofi beats in Ableton 11.", "User makes lofi beats in Ableton."),  # left out, not replaced
    ],
)
def test_version_2_leaves_a_missing_or_rewritten_key_to_the_model(expected: str, candidate: str) -> None:
    _, rule = _FC.explain(expected, candidate)
    assert rule.startswith(("number ", "name "))
    assert not substituted(expected, candidate, rule)
    assert not MATCHERS["fact-cover-lr@2"].explain(expected, candidate)[1].startswith("another fact")
