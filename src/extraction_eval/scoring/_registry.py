"""Matchers by name: ``--matcher keyed-dice@3``, ``--matcher keyed-dice`` (its latest version)."""

from __future__ import annotations

from collections.abc import Mapping

from .._exceptions import ConfigurationError
from ._matcher import DEFAULT_MATCHER, KeyedDiceMatcher, Matcher, matcher_id

# Every matcher a run may be scored with, by name@version. A new version is added, never
# edited in place: a run's matcher id must keep meaning the same scores.
MATCHERS: Mapping[str, Matcher] = {matcher_id(m): m for m in (KeyedDiceMatcher(),)}


def _version_key(matcher: Matcher) -> tuple[int, str]:
    return (int(matcher.version), "") if matcher.version.isdigit() else (-1, matcher.version)


def resolve_matcher(name: str | None) -> Matcher:
    """The matcher called ``name`` (``name@version``, or a bare name for its latest version); None: the default."""
    if name is None:
        return DEFAULT_MATCHER
    if name in MATCHERS:
        return MATCHERS[name]
    versions = [m for m in MATCHERS.values() if m.name == name]
    if versions:
        return max(versions, key=_version_key)
    raise ConfigurationError(
        f"--matcher {name!r} is not a known matcher; use one of {sorted(MATCHERS)!r} "
        f"(or a bare name for its latest version: {sorted({m.name for m in MATCHERS.values()})!r})."
    )
