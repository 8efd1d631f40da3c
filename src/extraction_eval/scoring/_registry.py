"""Matchers by name: ``--matcher keyed-dice@3``, ``--matcher keyed-dice`` (its latest version)."""

from __future__ import annotations

from collections.abc import Mapping

from .._exceptions import ConfigurationError
from ._cover import FactCoverMatcher
from ._cover_lr import CoverLogisticMatcher
from ._judge import JUDGE_NAME
from ._matcher import KeyedDiceMatcher, Matcher, matcher_id
from ._reviewed import REVIEWED_NAME

DEFAULT_MATCHER: Matcher = FactCoverMatcher(version="2")

# Every matcher a run may be scored with, by name@version. A new version is added, never
# edited in place: a run's matcher id must keep meaning the same scores.
MATCHERS: Mapping[str, Matcher] = {
    matcher_id(m): m
    for m in (
        KeyedDiceMatcher(),
        FactCoverMatcher(),
        FactCoverMatcher(version="2"),
        CoverLogisticMatcher(),
        CoverLogisticMatcher(version="2"),
    )
}


# Each matcher's figures on the calibration set's held-out half, from
# `extraction-eval matcher calibrate --matcher ID` (docs/matcher.md); logged as params of every
# run, and pinned by tests/cli/test_matcher.py, which recomputes them.
HELDOUT_FIGURES: Mapping[str, Mapping[str, float]] = {
    "keyed-dice@3": {"acceptance": 0.592, "refusal": 0.718, "precision": 0.759, "f1": 0.665, "kappa": 0.294},
    "fact-cover@1": {"acceptance": 0.713, "refusal": 0.846, "precision": 0.874, "f1": 0.785, "kappa": 0.534},
    "fact-cover@2": {"acceptance": 0.731, "refusal": 0.886, "precision": 0.906, "f1": 0.809, "kappa": 0.589},
    # experimental, not the default: it refuses only half of the different facts (docs/matcher.md)
    "fact-cover-lr@1": {"acceptance": 0.942, "refusal": 0.503, "precision": 0.739, "f1": 0.828, "kappa": 0.477},
    # version 1 with another number or name refused outright: experimental (docs/matcher.md)
    "fact-cover-lr@2": {"acceptance": 0.928, "refusal": 0.658, "precision": 0.802, "f1": 0.861, "kappa": 0.610},
}


def matcher_params(matcher: Matcher) -> dict[str, str]:
    """The run params that describe a matcher: its held-out figures (``matcher.heldout.<figure>``)."""
    figures = HELDOUT_FIGURES.get(matcher_id(matcher), {})
    return {f"matcher.heldout.{name}": f"{value:.3f}" for name, value in figures.items()}


def _version_key(matcher: Matcher) -> tuple[int, str]:
    return (int(matcher.version), "") if matcher.version.isdigit() else (-1, matcher.version)


def resolve_matcher(name: str | None) -> Matcher:
    """The matcher called ``name`` (``name@version``, or a bare name for its latest version); None: the default."""
    if name is None:
        return DEFAULT_MATCHER
    if name in MATCHERS:
        return MATCHERS[name]
    if name.split("@", 1)[0] == REVIEWED_NAME:
        raise ConfigurationError(
            "--matcher reviewed replays an answer set's reviewed decisions: use it with `run --answers SET`, "
            "`rescore` of such a run, or `matcher validate`."
        )
    if name.split("@", 1)[0] == JUDGE_NAME:
        raise ConfigurationError(
            "--matcher judge replays recorded judgments: use it with `run`, `rescore` or `matcher calibrate`."
        )
    versions = [m for m in MATCHERS.values() if m.name == name]
    if versions:
        return max(versions, key=_version_key)
    raise ConfigurationError(
        f"--matcher {name!r} is not a known matcher; use one of {sorted(MATCHERS)!r} "
        f"(or a bare name for its latest version: {sorted({m.name for m in MATCHERS.values()})!r})."
    )
