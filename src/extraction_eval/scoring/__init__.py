"""The pure scoring core: parse, match one-to-one, compute every metric. No I/O."""

from ._assign import Pair, assign
from ._matcher import DEFAULT_MATCHER, KeyedDiceMatcher, Matcher, fact_keys, matcher_id, normalize
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
from ._types import Case, ExpectedItem, Failure, FailureReason, Memory, Outcome

__all__ = [
    "DEFAULT_GATED_METRICS",
    "DEFAULT_MATCHER",
    "LOWER_IS_BETTER",
    "Case",
    "ConversationScore",
    "ExpectedItem",
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
    "normalize",
    "parse_response",
    "score",
    "score_conversation",
]
