"""The pure scoring core: parse, match one-to-one, compute every metric. No I/O."""

from ._assign import Pair, assign
from ._cover import FactCoverMatcher
from ._judge import JUDGE_NAME, JudgeMatcher, MissingJudgment, candidate_pairs
from ._matcher import KeyedDiceMatcher, Matcher, fact_keys, matcher_id, normalize
from ._metrics import (
    DEFAULT_GATED_METRICS,
    LOWER_IS_BETTER,
    ConversationScore,
    ConversationStatus,
    MatchedPair,
    ScoreReport,
    aggregate,
    conversation_counts,
    conversation_status,
    score,
    score_conversation,
)
from ._outcomes import MemoryOutcome, memory_rows, outcome_counts
from ._parse import MAX_RESPONSE_CHARS, parse_response, pathological
from ._registry import DEFAULT_MATCHER, MATCHERS, matcher_params, resolve_matcher
from ._reviewed import REVIEWED_NAME, ConversationDecisions, MissingDecision, ReviewedMatcher, decision_verdicts
from ._types import Case, ExpectedItem, Failure, FailureReason, ForbiddenItem, Memory, Outcome
from ._uncertainty import Z95, denominator, paired_se, standard_error, uncertainty_metrics

__all__ = [
    "DEFAULT_GATED_METRICS",
    "DEFAULT_MATCHER",
    "JUDGE_NAME",
    "LOWER_IS_BETTER",
    "MATCHERS",
    "MAX_RESPONSE_CHARS",
    "REVIEWED_NAME",
    "Z95",
    "Case",
    "ConversationDecisions",
    "ConversationScore",
    "ConversationStatus",
    "ExpectedItem",
    "FactCoverMatcher",
    "Failure",
    "FailureReason",
    "ForbiddenItem",
    "JudgeMatcher",
    "KeyedDiceMatcher",
    "MatchedPair",
    "Matcher",
    "Memory",
    "MemoryOutcome",
    "MissingDecision",
    "MissingJudgment",
    "Outcome",
    "Pair",
    "ReviewedMatcher",
    "ScoreReport",
    "aggregate",
    "assign",
    "candidate_pairs",
    "conversation_counts",
    "conversation_status",
    "decision_verdicts",
    "denominator",
    "fact_keys",
    "matcher_id",
    "matcher_params",
    "memory_rows",
    "normalize",
    "outcome_counts",
    "paired_se",
    "parse_response",
    "pathological",
    "resolve_matcher",
    "score",
    "score_conversation",
    "standard_error",
    "uncertainty_metrics",
]
