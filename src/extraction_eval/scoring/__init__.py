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
    conversation_counts,
    score,
    score_conversation,
)
from ._parse import MAX_RESPONSE_CHARS, parse_response, pathological
from ._types import Case, ExpectedItem, Failure, FailureReason, Memory, Outcome
from ._uncertainty import Z95, denominator, paired_se, standard_error, uncertainty_metrics

__all__ = [
    "DEFAULT_GATED_METRICS",
    "DEFAULT_MATCHER",
    "LOWER_IS_BETTER",
    "MAX_RESPONSE_CHARS",
    "Z95",
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
    "conversation_counts",
    "denominator",
    "fact_keys",
    "matcher_id",
    "normalize",
    "paired_se",
    "parse_response",
    "pathological",
    "score",
    "score_conversation",
    "standard_error",
    "uncertainty_metrics",
]
