"""The pure scoring core: parse, match one-to-one, compute every metric. No I/O."""

from ._assign import Pair, assign
from ._cover import FactCoverMatcher
from ._matcher import KeyedDiceMatcher, Matcher, fact_keys, matcher_id, normalize
from ._metrics import (
    DEFAULT_GATED_METRICS,
    LOWER_IS_BETTER,
    ConversationScore,
    MatchedPair,
    ScoreReport,
    aggregate,
    score,
    score_conversation,
)
from ._parse import parse_response
from ._registry import DEFAULT_MATCHER, MATCHERS, matcher_params, resolve_matcher
from ._types import Case, ExpectedItem, Failure, FailureReason, Memory, Outcome

__all__ = [
    "DEFAULT_GATED_METRICS",
    "DEFAULT_MATCHER",
    "LOWER_IS_BETTER",
    "MATCHERS",
    "Case",
    "ConversationScore",
    "ExpectedItem",
    "FactCoverMatcher",
    "Failure",
    "FailureReason",
    "KeyedDiceMatcher",
    "MatchedPair",
    "Matcher",
    "Memory",
    "Outcome",
    "Pair",
    "ScoreReport",
    "aggregate",
    "assign",
    "fact_keys",
    "matcher_id",
    "matcher_params",
    "normalize",
    "parse_response",
    "resolve_matcher",
    "score",
    "score_conversation",
]
