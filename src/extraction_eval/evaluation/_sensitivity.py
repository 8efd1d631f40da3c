"""The scorer's self-test: seeded, known mutations of oracle answers, each with its
analytically expected effect on every metric.

Each mutation edits the oracle answers of a gold set (the expected memories as a perfect
extractor's JSON) in one known way. Its expected effect is computed on a *ledger* of
counts — how many memories carry each category, how many pairs are right in category,
in kind, and so on — by arithmetic alone, without matching anything. The mutated answers
then go through the real path (JSON text → parse → one-to-one matching → metrics), and
every metric must land exactly where the ledger says: the affected ones move by their
computed amount, the others do not move. A gated metric that no mutation moves is a
failure of the self-test (a metric the scorer could not show to be alive).

In a gold set with forbidden memories (v2), the security rates are checked too. Their
oracle value is the one place the ledger asks the matcher: whether a conversation's
expected rows already match one of its forbidden texts (the matcher's floor,
docs/metrics.md#security) is a property of the matcher, not of arithmetic. Each
"plant a forbidden text" mutation then moves them by arithmetic alone.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..gold import ExpectedMemory, GoldSet
from ..metric_keys import DEFAULT_GATED_METRICS
from ..ratios import RATIO_KEYS, SECURITY_KEYS
from ..scoring import Case, ExpectedItem, ForbiddenItem, Matcher, Memory, parse_response, score
from ..scoring._matcher import texts_match
from ..vocab import CATEGORIES, FORBIDDEN_REASONS, Category, ForbiddenReason, TemporalKind

#: A memory no gold conversation states; it must match nothing.
UNRELATED = "User keeps a collection of 19th-century brass telescopes in Quillhaven."
SEED = 20261203

#: (numerator, denominator) of every ratio metric: the ledger.
Ledger = dict[str, list[int]]

_PR_PARTNER = {
    **{f"precision/{c.value}": f"recall/{c.value}" for c in CATEGORIES},
    **{f"recall/{c.value}": f"precision/{c.value}" for c in CATEGORIES},
    "micro/precision": "micro/recall",
    "micro/recall": "micro/precision",
    "strict/precision": "strict/recall",
    "strict/recall": "strict/precision",
}


@dataclass(frozen=True)
class Check:
    """One metric after one mutation: what the ledger says and what the scorer gave."""

    mutation: str
    metric: str
    baseline: float | None
    expected: float | None
    observed: float | None

    @property
    def ok(self) -> bool:
        if self.expected is None or self.observed is None:
            return self.expected is None and self.observed is None
        return round(self.expected - self.observed, 9) == 0

    @property
    def moved(self) -> bool:
        return _differs(self.observed, self.baseline)


@dataclass(frozen=True)
class SensitivityReport:
    mutations: tuple[str, ...]
    checks: tuple[Check, ...]
    unmoved_gated: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def failures(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.ok)

    @property
    def ok(self) -> bool:
        return not self.failures and not self.unmoved_gated


def _differs(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return (a is None) != (b is None)
    return round(a - b, 9) != 0


# ---------------------------------------------------------------- the ledger


def _oracle_leaks(gold: GoldSet, cid: str, matcher: Matcher) -> set[ForbiddenReason]:
    """The reasons whose forbidden texts the conversation's own expected rows already match."""
    forbidden = (gold.forbidden_by_conversation or {}).get(cid, ())
    memories = gold.by_conversation.get(cid, ())
    return {f.reason for f in forbidden if any(texts_match(matcher, f.content, m.content) for m in memories)}


#: Per conversation and reason: the expected rows' texts that match a forbidden text of the reason.
LeakSources = dict[str, dict[ForbiddenReason, set[str]]]


def _leak_sources(gold: GoldSet, conversation_ids: Sequence[str], matcher: Matcher) -> LeakSources:
    out: LeakSources = {}
    for cid in conversation_ids:
        for f in (gold.forbidden_by_conversation or {}).get(cid, ()):
            for m in gold.by_conversation.get(cid, ()):
                if texts_match(matcher, f.content, m.content):
                    out.setdefault(cid, {}).setdefault(f.reason, set()).add(m.content)
    return out


def _leaking(predictions: Sequence[Memory], sources: dict[ForbiddenReason, set[str]]) -> set[ForbiddenReason]:
    return {r for r, texts in sources.items() if any(p.content in texts for p in predictions)}


def _ledger(gold: GoldSet, conversation_ids: Sequence[str], matcher: Matcher) -> Ledger:
    """Counts of a perfect extractor: every expected memory predicted exactly."""
    led: Ledger = {}

    def add(key: str, a: int, b: int) -> None:
        cell = led.setdefault(key, [0, 0])
        cell[0] += a
        cell[1] += b

    for key in RATIO_KEYS:
        add(key, 0, 0)
    for cid in conversation_ids:
        memories = gold.by_conversation.get(cid, ())
        add("failures/rate", 0, 1)
        if not memories:
            add("negatives/false_positive_rate", 0, 1)
        for m in memories:
            _memory(led, m, +1)
        if gold.forbidden_by_conversation is not None:
            reasons = {f.reason for f in gold.forbidden_by_conversation.get(cid, ())}
            leaked = _oracle_leaks(gold, cid, matcher)
            for reason in reasons:
                add(SECURITY_KEYS[reason.value], int(reason in leaked), 1)
    return led


def _memory(led: Ledger, m: ExpectedMemory, sign: int) -> None:
    """Add (or, with sign -1, remove) one expected memory predicted exactly."""
    for c in m.categories:
        for key in ("precision", "recall", "category_accuracy", "temporal_accuracy"):
            led[f"{key}/{c.value}"][0] += sign
            led[f"{key}/{c.value}"][1] += sign
    for key in ("micro/precision", "micro/recall", "strict/precision", "strict/recall"):
        led[key][0] += sign
        led[key][1] += sign
    for key in ("category_accuracy", "temporal_accuracy"):
        led[key][0] += sign
        led[key][1] += sign
    if len(m.categories) > 1:
        led["multilabel/exact_match"][0] += sign
        led["multilabel/exact_match"][1] += sign
    if m.supersedes is not None:
        led["supersession/recall"][0] += sign
        led["supersession/recall"][1] += sign
        led["supersession/stale_leak_rate"][1] += sign


def _unpredict(led: Ledger, m: ExpectedMemory) -> None:
    """The memory is still expected but no longer predicted (so: missed)."""
    for c in m.categories:
        led[f"precision/{c.value}"][0] -= 1
        led[f"precision/{c.value}"][1] -= 1
        led[f"recall/{c.value}"][0] -= 1
        for key in ("category_accuracy", "temporal_accuracy"):
            led[f"{key}/{c.value}"][0] -= 1
            led[f"{key}/{c.value}"][1] -= 1
    for key in ("micro/precision", "strict/precision", "category_accuracy", "temporal_accuracy"):
        led[key][0] -= 1
        led[key][1] -= 1
    led["micro/recall"][0] -= 1
    led["strict/recall"][0] -= 1
    if len(m.categories) > 1:
        led["multilabel/exact_match"][0] -= 1
    if m.supersedes is not None:
        led["supersession/recall"][0] -= 1


def _extra_prediction(led: Ledger, categories: Sequence[Category]) -> None:
    """One more prediction that matches nothing."""
    for c in categories:
        led[f"precision/{c.value}"][1] += 1
    led["micro/precision"][1] += 1
    led["strict/precision"][1] += 1


def values(led: Ledger) -> dict[str, float]:
    """Metric values from the ledger: the contract's ratios, zero rules, F1 and macro means."""
    out: dict[str, float] = {}
    for key, (a, b) in led.items():
        if b > 0:
            out[key] = a / b
        elif key in _PR_PARTNER:
            out[key] = 1.0 if led[_PR_PARTNER[key]][1] == 0 else 0.0
    for c in CATEGORIES:
        p, r = out[f"precision/{c.value}"], out[f"recall/{c.value}"]
        out[f"f1/{c.value}"] = 0.0 if p + r == 0 else 2 * p * r / (p + r)
    for name in ("precision", "recall", "f1"):
        out[f"macro/{name}"] = sum(out[f"{name}/{c.value}"] for c in CATEGORIES) / len(CATEGORIES)
    return out


# ---------------------------------------------------------------- mutations


@dataclass
class _Answers:
    """Per conversation: the predicted memories (mutable) and whether the JSON is broken."""

    predictions: dict[str, list[Memory]]
    broken: set[str] = field(default_factory=set)


def _as_memory(m: ExpectedMemory) -> Memory:
    return Memory(m.content, frozenset(m.categories), m.temporal_kind, m.supersedes)


@dataclass(frozen=True)
class _Mutation:
    name: str
    apply: Callable[[_Answers, Ledger], None]


def _find(answers: _Answers, m: ExpectedMemory) -> int:
    return next(i for i, p in enumerate(answers.predictions[m.conversation_id]) if p.content == m.content)


def _next_category(c: Category) -> Category:
    return CATEGORIES[(CATEGORIES.index(c) + 1) % len(CATEGORIES)]


def _next_kind(t: TemporalKind) -> TemporalKind:
    flip = {
        TemporalKind.DURABLE: TemporalKind.CURRENT,
        TemporalKind.CURRENT: TemporalKind.DURABLE,
        TemporalKind.PAST: TemporalKind.FUTURE,
        TemporalKind.FUTURE: TemporalKind.PAST,
    }
    return flip[t]


def _mutations(
    gold: GoldSet, conversation_ids: Sequence[str], rng: random.Random, matcher: Matcher
) -> tuple[list[_Mutation], list[str]]:
    memories = [m for cid in conversation_ids for m in gold.by_conversation.get(cid, ())]
    positives = [cid for cid in conversation_ids if gold.by_conversation.get(cid)]
    negatives = [cid for cid in conversation_ids if not gold.by_conversation.get(cid)]
    notes: list[str] = []
    out: list[_Mutation] = []

    sources = _leak_sources(gold, conversation_ids, matcher)

    def unleak(led: Ledger, cid: str, before: Sequence[Memory], after: Sequence[Memory]) -> None:
        """An oracle leak (the matcher's floor) ends when the expected row behind it is no longer predicted."""
        src = sources.get(cid, {})
        for reason in _leaking(before, src) - _leaking(after, src):
            led[SECURITY_KEYS[reason.value]][0] -= 1

    def drop(ms: Sequence[ExpectedMemory]) -> Callable[[_Answers, Ledger], None]:
        def fn(answers: _Answers, led: Ledger) -> None:
            for m in ms:
                before = list(answers.predictions[m.conversation_id])
                del answers.predictions[m.conversation_id][_find(answers, m)]
                _unpredict(led, m)
                unleak(led, m.conversation_id, before, answers.predictions[m.conversation_id])

        return fn

    for c in CATEGORIES:
        carrying = [m for m in memories if c in m.categories]
        if carrying:
            out.append(_Mutation(f"drop 1 memory ({c.value})", drop([rng.choice(carrying)])))
    if len(memories) >= 3:
        out.append(_Mutation("drop 3 memories", drop(rng.sample(memories, 3))))

    for c in CATEGORIES:
        single = [m for m in memories if tuple(m.categories) == (c,)]
        if not single:
            notes.append(f"no single-label {c.value} memory: category flip from {c.value} not tried")
            continue
        target = rng.choice(single)

        def flip_category(answers: _Answers, led: Ledger, m: ExpectedMemory = target, src: Category = c) -> None:
            dst = _next_category(src)
            i = _find(answers, m)
            p = answers.predictions[m.conversation_id][i]
            answers.predictions[m.conversation_id][i] = Memory(
                p.content, frozenset({dst}), p.temporal_kind, p.supersedes
            )
            led[f"precision/{src.value}"][0] -= 1
            led[f"precision/{src.value}"][1] -= 1
            led[f"recall/{src.value}"][0] -= 1
            led[f"precision/{dst.value}"][1] += 1
            for key in ("strict/precision", "strict/recall", "category_accuracy", f"category_accuracy/{src.value}"):
                led[key][0] -= 1

        out.append(_Mutation(f"flip category ({c.value} -> {_next_category(c).value})", flip_category))

    if memories:
        target = rng.choice(memories)

        def flip_kind(answers: _Answers, led: Ledger, m: ExpectedMemory = target) -> None:
            i = _find(answers, m)
            p = answers.predictions[m.conversation_id][i]
            answers.predictions[m.conversation_id][i] = Memory(
                p.content, p.categories, _next_kind(p.temporal_kind), p.supersedes
            )
            for key in ("strict/precision", "strict/recall", "temporal_accuracy"):
                led[key][0] -= 1
            for cat in m.categories:
                led[f"temporal_accuracy/{cat.value}"][0] -= 1

        out.append(_Mutation("flip temporal kind", flip_kind))

    multi = [m for m in memories if len(m.categories) > 1]
    if multi:
        target = rng.choice(multi)

        def strip_label(answers: _Answers, led: Ledger, m: ExpectedMemory = target) -> None:
            stripped = m.categories[-1]
            i = _find(answers, m)
            p = answers.predictions[m.conversation_id][i]
            answers.predictions[m.conversation_id][i] = Memory(
                p.content, p.categories - {stripped}, p.temporal_kind, p.supersedes
            )
            led[f"precision/{stripped.value}"][0] -= 1
            led[f"precision/{stripped.value}"][1] -= 1
            led[f"recall/{stripped.value}"][0] -= 1
            for key in ("strict/precision", "strict/recall", "category_accuracy", "multilabel/exact_match"):
                led[key][0] -= 1
            for cat in m.categories:
                led[f"category_accuracy/{cat.value}"][0] -= 1

        out.append(_Mutation("strip one label of a multi-label memory", strip_label))
    else:
        notes.append("no multi-label memory: label strip not tried")

    def add(cid: str, category: Category, negative: bool) -> Callable[[_Answers, Ledger], None]:
        def fn(answers: _Answers, led: Ledger) -> None:
            answers.predictions[cid].append(Memory(UNRELATED, frozenset({category}), TemporalKind.DURABLE, None))
            _extra_prediction(led, [category])
            if negative:
                led["negatives/false_positive_rate"][0] += 1

        return fn

    if positives:
        for c in CATEGORIES:
            out.append(_Mutation(f"add an unrelated memory ({c.value})", add(rng.choice(positives), c, False)))
    if negatives:
        out.append(
            _Mutation("add a memory to a negative conversation", add(rng.choice(negatives), Category.FACTUAL, True))
        )
    else:
        notes.append("no negative conversation: false-positive mutation not tried")

    superseding = [m for m in memories if m.supersedes is not None]
    if superseding:
        target = rng.choice(superseding)

        def leak(answers: _Answers, led: Ledger, m: ExpectedMemory = target) -> None:
            assert m.supersedes is not None
            answers.predictions[m.conversation_id].append(
                Memory(m.supersedes, frozenset(m.categories), m.temporal_kind, None)
            )
            _extra_prediction(led, m.categories)
            led["supersession/stale_leak_rate"][0] += 1

        out.append(_Mutation("leak the stale fact of a supersession case", leak))
    else:
        notes.append("no supersession case: stale-leak mutation not tried")

    if positives:
        target_cid = rng.choice(positives)

        def break_json(answers: _Answers, led: Ledger, cid: str = target_cid) -> None:
            answers.broken.add(cid)
            for m in gold.by_conversation[cid]:
                _unpredict(led, m)
            led["failures/rate"][0] += 1
            unleak(led, cid, answers.predictions[cid], ())

        out.append(_Mutation("break the JSON of a response", break_json))
    # Last, so that the random choices above are the same with or without a forbidden file.
    if gold.forbidden_by_conversation is not None:
        out += _plant_mutations(gold, conversation_ids, rng, matcher, notes)
    return out, notes


def _plant_mutations(
    gold: GoldSet, conversation_ids: Sequence[str], rng: random.Random, matcher: Matcher, notes: list[str]
) -> list[_Mutation]:
    """Per reason: one forbidden text predicted verbatim in a conversation that did not leak it."""
    forbidden = gold.forbidden_by_conversation or {}
    out: list[_Mutation] = []
    for reason in FORBIDDEN_REASONS:
        # a text of the reason in a conversation without supersession rows whose expected rows match
        # none of its forbidden texts; the text matches no expected row (either way round) and no
        # forbidden text of another reason, so it is an unassigned prediction that leaks only itself
        candidates = [
            (cid, f.content)
            for cid in conversation_ids
            if not _oracle_leaks(gold, cid, matcher)
            and not any(m.supersedes is not None for m in gold.by_conversation.get(cid, ()))
            for f in forbidden.get(cid, ())
            if f.reason is reason
            and not any(
                texts_match(matcher, m.content, f.content) or texts_match(matcher, f.content, m.content)
                for m in gold.by_conversation.get(cid, ())
            )
            and not any(texts_match(matcher, g.content, f.content) for g in forbidden[cid] if g.reason is not reason)
        ]
        if not candidates:
            notes.append(f"no eligible {reason.value} text: forbidden-text plant not tried")
            continue
        cid, text = rng.choice(candidates)

        def plant(
            answers: _Answers, led: Ledger, cid: str = cid, text: str = text, r: ForbiddenReason = reason
        ) -> None:
            answers.predictions[cid].append(Memory(text, frozenset({Category.FACTUAL}), TemporalKind.DURABLE, None))
            _extra_prediction(led, [Category.FACTUAL])
            led[SECURITY_KEYS[r.value]][0] += 1
            if not gold.by_conversation.get(cid):
                led["negatives/false_positive_rate"][0] += 1

        out.append(_Mutation(f"plant a forbidden text ({reason.value})", plant))
    return out


# ---------------------------------------------------------------- running


def _response(predictions: Sequence[Memory], broken: bool) -> str:
    text = json.dumps(
        {
            "memories": [
                {
                    "content": p.content,
                    "categories": [c.value for c in CATEGORIES if c in p.categories],
                    "temporal_kind": p.temporal_kind.value,
                    "supersedes": p.supersedes,
                }
                for p in predictions
            ]
        }
    )
    return text[:-1] if broken else text


def _observed(gold: GoldSet, conversation_ids: Sequence[str], answers: _Answers, matcher: Matcher) -> dict[str, float]:
    cases = []
    for cid in conversation_ids:
        expected = tuple(ExpectedItem(m.memory_id, _as_memory(m)) for m in gold.by_conversation.get(cid, ()))
        response = _response(answers.predictions[cid], cid in answers.broken)
        forbidden = None
        if gold.forbidden_by_conversation is not None:
            rows = gold.forbidden_by_conversation.get(cid, ())
            forbidden = tuple(ForbiddenItem(f.content, f.reason, f.stratum) for f in rows)
        cases.append(Case(cid, expected, parse_response(response), forbidden))
    return dict(score(cases, matcher).metrics)


def run_sensitivity(
    gold: GoldSet,
    matcher: Matcher,
    *,
    conversation_ids: Sequence[str] | None = None,
    seed: int = SEED,
    gated: Sequence[str] = DEFAULT_GATED_METRICS,
) -> SensitivityReport:
    """Apply every mutation to fresh oracle answers and check every metric against the ledger."""
    ids = list(conversation_ids) if conversation_ids is not None else [c.conversation_id for c in gold.conversations]
    rng = random.Random(seed)
    mutations, notes = _mutations(gold, ids, rng, matcher)
    base_ledger = _ledger(gold, ids, matcher)
    base_expected = values(base_ledger)
    fresh = _Answers({cid: [_as_memory(m) for m in gold.by_conversation.get(cid, ())] for cid in ids})
    base_observed = _observed(gold, ids, fresh, matcher)
    keys = sorted(base_expected.keys() | {k for k in base_observed if k in _checked(base_observed)})
    checks: list[Check] = [
        Check("none (oracle answers)", k, base_expected.get(k), base_expected.get(k), base_observed.get(k))
        for k in keys
    ]
    for mutation in mutations:
        answers = _Answers({cid: list(ps) for cid, ps in fresh.predictions.items()})
        led = {k: list(v) for k, v in base_ledger.items()}
        mutation.apply(answers, led)
        expected = values(led)
        observed = _observed(gold, ids, answers, matcher)
        for k in sorted(expected.keys() | {k for k in observed if k in _checked(observed)}):
            checks.append(Check(mutation.name, k, base_expected.get(k), expected.get(k), observed.get(k)))
    moved = {c.metric for c in checks if c.mutation != "none (oracle answers)" and c.moved}
    unmoved = tuple(k for k in gated if k not in moved)
    return SensitivityReport(tuple(m.name for m in mutations), tuple(checks), unmoved, tuple(notes))


def _checked(metrics: dict[str, float]) -> set[str]:
    """The scorer's keys the self-test checks: every ratio, F1 and macro key (not counts)."""
    return {k for k in metrics if not k.startswith(("counts/", "n/", "se/", "usage/", "latency/"))}


def sensitivity_table(report: SensitivityReport) -> list[dict[str, object]]:
    """Rows mutation → metric → expected → observed for every metric a mutation moved or should have."""
    return [
        {
            "mutation": c.mutation,
            "metric": c.metric,
            "baseline": c.baseline,
            "expected": c.expected,
            "observed": c.observed,
            "ok": c.ok,
        }
        for c in report.checks
        if not c.ok or _differs(c.expected, c.baseline) or c.moved
    ]
