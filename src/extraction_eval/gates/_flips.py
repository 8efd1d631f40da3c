"""Expected memories that flipped between matched and unmatched from one run to another.

Read from two runs' ``per_conversation.jsonl`` rows (pure functions, no I/O). For each
recall metric (``micro/recall``, ``strict/recall``, ``recall/<category>``) an expected
memory is a *hit* when it counts in the metric's numerator: matched (micro), matched with
the right categories and temporal kind (strict), matched by a prediction that carries the
category (per category). A flip is a hit in one run and a miss in the other. Each flip
carries both texts and, through the matcher's ``explain``, the similarity and the rule that
decided, on the side that matched and against the nearest prediction on the side that did
not: a reviewer can tell a rewording the matcher refused from a fact that was not extracted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..scoring import Matcher
from ..scoring._matcher import explain
from ..vocab import CATEGORIES

RECALL_KEYS: tuple[str, ...] = ("micro/recall", "strict/recall", *(f"recall/{c.value}" for c in CATEGORIES))

Rows = Mapping[str, Mapping[str, Any]]


def parse_rows(text: str, source: str) -> dict[str, dict[str, Any]]:
    """``per_conversation.jsonl`` rows of sample 0 by conversation id."""
    out: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if row.get("sample", 0) != 0:
                continue
            out[str(row["conversation_id"])] = row
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{source} line {number}: not a per-conversation row ({type(exc).__name__})") from None
    return out


@dataclass(frozen=True)
class Side:
    """One run's view of an expected memory: the prediction it was matched to, or the nearest one."""

    matched: bool
    predicted: str | None
    similarity: float | None
    rule: str


@dataclass(frozen=True)
class Flip:
    metric: str
    conversation_id: str
    memory_id: str
    expected: str
    #: "lost" (hit in A, miss in B) or "gained" (miss in A, hit in B).
    direction: str
    a: Side
    b: Side


def _hits(row: Mapping[str, Any]) -> dict[str, set[str]]:
    """Metric key -> the memory ids that count in its numerator, for one conversation."""
    expected = {e["memory_id"]: e for e in row.get("expected", [])}
    predicted = row.get("predicted", [])
    out: dict[str, set[str]] = {key: set() for key in RECALL_KEYS}
    for m in row.get("matches", []):
        mid = m["memory_id"]
        out["micro/recall"].add(mid)
        if m.get("category_ok") and m.get("temporal_ok"):
            out["strict/recall"].add(mid)
        got = set(predicted[m["predicted_index"]].get("categories", []))
        for category in expected.get(mid, {}).get("categories", []):
            if category in got:
                out[f"recall/{category}"].add(mid)
    return out


def _side(row: Mapping[str, Any], memory_id: str, text: str, matcher: Matcher) -> Side:
    predicted = [p["content"] for p in row.get("predicted", [])]
    match = next((m for m in row.get("matches", []) if m["memory_id"] == memory_id), None)
    if match is not None:
        candidate = predicted[match["predicted_index"]]
        _, rule = explain(matcher, text, candidate)
        return Side(True, candidate, float(match["similarity"]), rule)
    if row.get("failure_reason"):
        return Side(False, None, None, f"the conversation failed ({row['failure_reason']})")
    if not predicted:
        return Side(False, None, None, "no prediction in this conversation")
    scored = [(explain(matcher, text, p), p) for p in predicted]
    (similarity, rule), nearest = max(scored, key=lambda s: s[0][0])
    return Side(False, nearest, similarity, f"nearest prediction, unmatched: {rule}")


def flips(a: Rows, b: Rows, matcher_a: Matcher, matcher_b: Matcher, metrics: Iterable[str] = RECALL_KEYS) -> list[Flip]:
    """Every expected memory whose hit changed between run A and run B, per recall metric."""
    out: list[Flip] = []
    wanted = [m for m in metrics if m in RECALL_KEYS]
    common = sorted(set(a) & set(b))
    hits_a = {cid: _hits(a[cid]) for cid in common}
    hits_b = {cid: _hits(b[cid]) for cid in common}
    for metric in wanted:
        for cid in common:
            # A's text, or B's for a memory only B's row lists (a gold row corrected between the runs)
            texts = {e["memory_id"]: e["content"] for e in (*b[cid].get("expected", []), *a[cid].get("expected", []))}
            for mid in sorted(hits_a[cid][metric] ^ hits_b[cid][metric]):
                text = texts.get(mid, "")
                out.append(
                    Flip(
                        metric=metric,
                        conversation_id=cid,
                        memory_id=mid,
                        expected=text,
                        direction="lost" if mid in hits_a[cid][metric] else "gained",
                        a=_side(a[cid], mid, text, matcher_a),
                        b=_side(b[cid], mid, text, matcher_b),
                    )
                )
    return out


def recall_key_for(metric: str) -> str:
    """The recall metric whose lost hits explain a drop in ``metric``: per category when it has one."""
    tail = metric.rsplit("/", 1)[-1]
    if tail in {c.value for c in CATEGORIES}:
        return f"recall/{tail}"
    if metric.startswith("strict/"):
        return "strict/recall"
    return "micro/recall"


def _sim(side: Side) -> str:
    return "—" if side.similarity is None else f"{side.similarity:.3f}"


def _cell(text: str | None) -> str:
    return "—" if text is None else text.replace("|", "\\|").replace("\n", " ")


def render_flips(found: Sequence[Flip], label_a: str, label_b: str) -> list[str]:
    """Markdown, one table per metric: expected text, each run's prediction, similarity and rule."""
    lines: list[str] = []
    for metric in dict.fromkeys(f.metric for f in found):
        rows = [f for f in found if f.metric == metric]
        lost = sum(f.direction == "lost" for f in rows)
        lines += [
            "",
            f"### `{metric}`: {lost} lost, {len(rows) - lost} gained",
            "",
            f"| conversation | memory | flip | expected | {label_a} prediction | sim | rule | "
            f"{label_b} prediction | sim | rule |",
            "| --- | --- | --- | --- | --- | ---: | --- | --- | ---: | --- |",
        ]
        for f in rows:
            lines.append(
                f"| {f.conversation_id} | {f.memory_id} | {f.direction} | {_cell(f.expected)} | "
                f"{_cell(f.a.predicted)} | {_sim(f.a)} | {_cell(f.a.rule)} | "
                f"{_cell(f.b.predicted)} | {_sim(f.b)} | {_cell(f.b.rule)} |"
            )
    return lines
