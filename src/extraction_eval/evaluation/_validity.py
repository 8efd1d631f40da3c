"""A matcher's metric-level validity: its numbers on a realistic answer set against the reviewers'.

Both score the same answers of the same conversations; only the matching differs. Per metric:
the matcher's value, the reviewers' value, the difference and its paired 95% interval, clustered
by conversation (the contract's "Uncertainty": ``se_d`` over the per-conversation influences of
the two scorings). Then the rows behind the difference: every gold row the reviewers matched
and the matcher did not, and the reverse, with the matcher's rule for that pair.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..ratios import MACRO_PARTS, OPTIONAL_RATIO_KEYS, RATIO_KEYS, Z95, paired_se, ratio_values, sum_counts
from ..scoring import Case, ConversationScore, Matcher, conversation_counts, matcher_id, score_conversation
from ..scoring._matcher import explain
from ..vocab import CATEGORIES

#: The headline metrics (issue 23's goal: each within 2 points of the reviewers').
HEADLINE: tuple[str, ...] = (
    "micro/precision",
    "micro/recall",
    "macro/precision",
    "macro/recall",
    *(f"recall/{c.value}" for c in CATEGORIES),
)
#: Every metric the table shows, headline first.
SHOWN: tuple[str, ...] = (
    *HEADLINE,
    *(f"precision/{c.value}" for c in CATEGORIES),
    "strict/precision",
    "strict/recall",
    "category_accuracy",
    "temporal_accuracy",
    "multilabel/exact_match",
    "supersession/recall",
    "supersession/stale_leak_rate",
    "negatives/false_positive_rate",
    *sorted(OPTIONAL_RATIO_KEYS),
)
GOAL_POINTS = 0.02

RunCounts = dict[str, dict[str, tuple[int, int]]]


@dataclass(frozen=True)
class ValidityRow:
    metric: str
    matcher: float | None
    reviewed: float | None
    #: matcher − reviewed (None when either is undefined).
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    #: Σ b_i of the reviewed scoring (the metric's denominator).
    n: int
    headline: bool

    @property
    def within_goal(self) -> bool | None:
        if self.difference is None:
            return None
        return abs(round(self.difference, 9)) <= GOAL_POINTS


@dataclass(frozen=True)
class RowFlip:
    """A gold row matched under one scoring and not the other."""

    conversation_id: str
    memory_id: str
    expected: str
    #: "reviewers only" (the matcher missed a pair the reviewers made) or "matcher only".
    side: str
    answer: str
    similarity: float
    rule: str


@dataclass(frozen=True)
class ValidityReport:
    matcher: str
    reviewed: str
    conversations: int
    rows: tuple[ValidityRow, ...]
    flips: tuple[RowFlip, ...]
    matcher_metrics: Mapping[str, float]
    reviewed_metrics: Mapping[str, float]

    @property
    def headline_misses(self) -> tuple[ValidityRow, ...]:
        return tuple(r for r in self.rows if r.headline and r.within_goal is False)


def _counts(scores: Sequence[ConversationScore]) -> RunCounts:
    return {s.case.conversation_id: conversation_counts(s) for s in scores}


def _values(counts: RunCounts) -> dict[str, float]:
    """Every ratio, and each macro key as the mean of its parts (the scorer's ``aggregate``)."""
    values = ratio_values(sum_counts(counts.values()))
    for key, parts in MACRO_PARTS.items():
        if all(part in values for part in parts):
            values[key] = sum(values[part] for part in parts) / len(parts)
    return values


def _defined(key: str, counts: RunCounts) -> bool:
    parts = MACRO_PARTS.get(key, (key,))
    return any(part in c for c in counts.values() for part in parts)


def _matched(score: ConversationScore) -> dict[str, str]:
    return {p.expected.memory_id: p.predicted.content for p in score.pairs}


def _safe_explain(matcher: Matcher, a: str, b: str) -> tuple[float, str]:
    try:
        return explain(matcher, a, b)
    except Exception as exc:  # a judge with no judgment for the pair: say so, do not stop the report
        return 0.0, f"not explained ({type(exc).__name__}: {exc})"


def compare_matchers(cases: Sequence[Case], matcher: Matcher, reviewed: Matcher) -> ValidityReport:
    """Score ``cases`` under both matchers and compare them metric by metric and row by row."""
    by_matcher = [score_conversation(case, matcher) for case in cases]
    by_reviewers = [score_conversation(case, reviewed) for case in cases]
    run, base = _counts(by_matcher), _counts(by_reviewers)
    run_values, base_values = _values(run), _values(base)
    rows = []
    for key in SHOWN:
        if key not in MACRO_PARTS and key not in RATIO_KEYS:
            continue
        if not _defined(key, base):
            continue
        m, r = run_values.get(key), base_values.get(key)
        difference = None if m is None or r is None or math.isnan(m) or math.isnan(r) else m - r
        low = high = None
        if difference is not None:
            se = paired_se(key, run, run_values, base, base_values)
            if se is not None:
                low, high = difference - Z95 * se, difference + Z95 * se
        parts = MACRO_PARTS.get(key, (key,))
        n = sum(c.get(part, (0, 0))[1] for c in base.values() for part in parts)
        rows.append(ValidityRow(key, m, r, difference, low, high, n, key in HEADLINE))
    flips: list[RowFlip] = []
    for mine, theirs in zip(by_matcher, by_reviewers, strict=True):
        got, want = _matched(mine), _matched(theirs)
        for item in theirs.case.expected:
            mid = item.memory_id
            if (mid in got) == (mid in want) and got.get(mid) == want.get(mid):
                continue
            if mid in want and got.get(mid) != want[mid]:
                similarity, rule = _safe_explain(matcher, item.memory.content, want[mid])
                flips.append(
                    RowFlip(
                        theirs.case.conversation_id,
                        mid,
                        item.memory.content,
                        "reviewers only",
                        want[mid],
                        similarity,
                        rule,
                    )
                )
            if mid in got and want.get(mid) != got[mid]:
                similarity, rule = _safe_explain(matcher, item.memory.content, got[mid])
                flips.append(
                    RowFlip(
                        theirs.case.conversation_id,
                        mid,
                        item.memory.content,
                        "matcher only",
                        got[mid],
                        similarity,
                        rule,
                    )
                )
    return ValidityReport(
        matcher=matcher_id(matcher),
        reviewed=matcher_id(reviewed),
        conversations=len(cases),
        rows=tuple(rows),
        flips=tuple(flips),
        matcher_metrics=run_values,
        reviewed_metrics=base_values,
    )


def _num(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.4f}" if signed else f"{value:.4f}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def validity_markdown(report: ValidityReport, *, title: str, max_flips: int = 200) -> str:
    """The table and the rows behind it, as Markdown."""
    lines = [
        f"# {title}",
        "",
        f"{report.conversations} conversations; matcher `{report.matcher}` against the reviewers' decisions "
        f"(`{report.reviewed}`). Difference = matcher − reviewers; interval: paired 95%, clustered by "
        f"conversation. Goal for a headline metric: within {GOAL_POINTS * 100:.0f} points.",
        "",
        "| metric | matcher | reviewers | difference | 95% interval | n | within 2 points |",
        "| --- | ---: | ---: | ---: | --- | ---: | --- |",
    ]
    for r in report.rows:
        interval = "–" if r.ci_low is None or r.ci_high is None else f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]"
        goal = "" if not r.headline else {True: "yes", False: "**no**", None: "–"}[r.within_goal]
        name = f"**{r.metric}**" if r.headline else r.metric
        lines.append(
            f"| {name} | {_num(r.matcher)} | {_num(r.reviewed)} | {_num(r.difference, True)} | {interval} | "
            f"{r.n} | {goal} |"
        )
    reviewers_only = [f for f in report.flips if f.side == "reviewers only"]
    matcher_only = [f for f in report.flips if f.side == "matcher only"]
    lines += [
        "",
        f"## Rows behind the difference: {len(reviewers_only)} matched by the reviewers only, "
        f"{len(matcher_only)} by the matcher only",
        "",
    ]
    shown = report.flips[:max_flips]
    if len(report.flips) > len(shown):
        lines.append(f"{len(shown)} of {len(report.flips)} rows shown (the JSON report has them all).")
        lines.append("")
    lines += [
        "| conversation | gold row | side | expected | answer | similarity | matcher's rule |",
        "| --- | --- | --- | --- | --- | ---: | --- |",
    ]
    for f in shown:
        lines.append(
            f"| {f.conversation_id} | {f.memory_id} | {f.side} | {_cell(f.expected)} | {_cell(f.answer)} | "
            f"{f.similarity:.3f} | {_cell(f.rule)} |"
        )
    return "\n".join(lines) + "\n"


def validity_json(report: ValidityReport) -> dict[str, object]:
    return {
        "matcher": report.matcher,
        "reviewed": report.reviewed,
        "conversations": report.conversations,
        "rows": [
            {
                "metric": r.metric,
                "matcher": r.matcher,
                "reviewed": r.reviewed,
                "difference": r.difference,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "n": r.n,
                "headline": r.headline,
                "within_goal": r.within_goal,
            }
            for r in report.rows
        ],
        "flips": [f.__dict__ for f in report.flips],
    }
