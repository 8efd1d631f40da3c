"""The regression gate's judgement: pure, over records read from the tracking store.

A gated metric fails when the run is worse than the baseline by more than 0.03
(for lower-is-better metrics, worse means higher). Differences are rounded to 9
decimal places first, so exactly 3 points passes. Every case where no honest
comparison is possible fails closed with its own message (exit 2), never passes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from ..metric_keys import LOWER_IS_BETTER
from ..mlflow_names import (
    TAG_ANSWER_SET,
    TAG_CASSETTE_KIND,
    TAG_GOLD_VERSION,
    TAG_MATCHER,
    TAG_MODE,
    TAG_OVERRIDE,
    TAG_PROVIDER,
    TAG_RUN_KIND,
    TAG_SUBSET,
    RunKind,
    flag,
)
from ..tracking._reader import RegisteredBaseline, TrackedRun
from ..vocab import CassetteKind, Enforcement, Mode, Subset

THRESHOLD = 0.03


class Verdict(StrEnum):
    PASS = "pass"
    REGRESSION = "regression"
    CANNOT_EVALUATE = "cannot_evaluate"
    REPORT_ONLY = "report_only"

    @property
    def exit_code(self) -> int:
        return {"pass": 0, "regression": 1, "cannot_evaluate": 2, "report_only": 0}[self.value]


class MetricStatus(StrEnum):
    """One gated metric's verdict (the gate.md table prints the value)."""

    PASS = "pass"
    FAIL = "FAIL"
    MISSING = "missing"


@dataclass(frozen=True)
class MetricRow:
    key: str
    baseline: float | None
    run: float | None
    delta: float | None
    status: MetricStatus
    lower_is_better: bool


@dataclass(frozen=True)
class GateResult:
    verdict: Verdict
    reasons: tuple[str, ...]
    run: TrackedRun | None = None
    baseline: RegisteredBaseline | None = None
    rows: tuple[MetricRow, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code


def _value(metrics: dict[str, float] | None, key: str) -> float | None:
    if metrics is None:
        return None
    value = metrics.get(key)
    if value is None or math.isnan(value):
        return None
    return value


def compare(gated: Sequence[str], baseline: dict[str, float] | None, run: dict[str, float]) -> tuple[MetricRow, ...]:
    """One row per gated metric: the delta, rounded to 9 places, judged against 0.03."""
    rows = []
    for key in gated:
        base, now = _value(baseline, key), _value(run, key)
        lower = key in LOWER_IS_BETTER
        if base is None or now is None:
            rows.append(MetricRow(key, base, now, None, MetricStatus.MISSING, lower))
            continue
        delta = round(now - base, 9)
        worse = delta > THRESHOLD if lower else delta < -THRESHOLD
        rows.append(MetricRow(key, base, now, delta, MetricStatus.FAIL if worse else MetricStatus.PASS, lower))
    return tuple(rows)


def _cannot(
    reason: str,
    run: TrackedRun | None = None,
    baseline: RegisteredBaseline | None = None,
    rows: tuple[MetricRow, ...] = (),
) -> GateResult:
    return GateResult(Verdict.CANNOT_EVALUATE, (reason,), run, baseline, rows)


def judge(run: TrackedRun, baselines: Sequence[RegisteredBaseline]) -> GateResult:
    """Decide one run against its provider's registered baseline.

    Identity first (override, subset, live, gold version, subset and matcher against the
    baseline), for every provider; only a run that passes them all meets the enforcement
    decision (a manual provider's run is reported, exit 0) and the metric comparison."""
    tags = run.tags
    if tags.get(TAG_RUN_KIND) != RunKind.EVAL:
        return _cannot(f"run {run.run_id} is not an extraction-eval run (tag run_kind != 'eval').", run)
    if run.status != "FINISHED":
        return _cannot(f"run {run.run_id} has status {run.status!r}; the gate judges finished runs only.", run)
    if run.deleted:
        return _cannot(f"run {run.run_id} is deleted; the gate judges live runs only. Restore it or rerun.", run)
    version = tags.get(TAG_GOLD_VERSION, "?")
    slot = f"gold {version}" + (
        f" (hand-written answer sets: {tags[TAG_ANSWER_SET]!r})" if TAG_ANSWER_SET in tags else ""
    )
    register = f"`extraction-eval baseline register --gold gold/{version}" + (
        f" --answers {tags[TAG_ANSWER_SET]}`" if TAG_ANSWER_SET in tags else "` (CI: `--from-rev <base>`)"
    )
    if not any(b.enforcement == Enforcement.CI.value for b in baselines):
        return _cannot(
            f"no provider with enforcement 'ci' has a registered baseline for {slot}, so nothing can fail "
            f"the build; an empty provider set is a failure. Seed it: {register}.",
            run,
        )
    provider = tags.get(TAG_PROVIDER)
    baseline = next((b for b in baselines if b.provider == provider), None)
    if baseline is None:
        known = sorted(b.provider for b in baselines)
        return _cannot(
            f"run {run.run_id} is for provider {provider!r}, which has no registered baseline for {slot} "
            f"(registered: {known!r}). Seed it: {register}, or gate a run of a registered provider.",
            run,
        )
    if baseline.run is not None and baseline.run.deleted:
        return _cannot(
            f"the baseline of {provider!r} ({baseline.model_name} version {baseline.version}) points at run "
            f"{baseline.run_id}, which is deleted; a deleted run is no bar. Restore it (`mlflow runs restore "
            f"--run-id {baseline.run_id}`) or promote another run.",
            run,
            baseline,
        )
    changed = baseline.changed_since_promotion()
    if changed:
        listed = "; ".join(
            f"{key} {'is gone' if now is None else f'is {now!r}'} on the run, {value!r} when promoted"
            for key, value, now in changed[:5]
        ) + (f"; and {len(changed) - 5} more" if len(changed) > 5 else "")
        return _cannot(
            f"the baseline of {provider!r} ({baseline.model_name} version {baseline.version}) points at run "
            f"{baseline.run_id}, which was written to after promotion: {listed}. The bar is the numbers fixed "
            "at promotion, and a baseline whose run changed is refused: look at the run's metric history "
            "for who wrote it, then have a keeper promote a reviewed run again "
            f"(`extraction-eval baseline promote --run-id {baseline.run_id} --gold gold/{version}`).",
            run,
            baseline,
        )
    measured = baseline.measured_metrics
    base_metrics = dict(measured) if measured is not None else None
    gated = baseline.gated_metrics
    rows = compare(gated, base_metrics, dict(run.metrics))

    if tags.get(TAG_OVERRIDE) == flag(True):
        return _cannot(
            f"run {run.run_id} ran past contract drift (contract_override=true); an overridden "
            "run is never gated. Re-record or re-generate the cassettes and run again.",
            run,
            baseline,
            rows,
        )
    subset = tags.get(TAG_SUBSET)
    if subset in (Subset.SMOKE.value, Subset.FAST.value):
        return _cannot(
            f"run {run.run_id} covers the {subset!r} subset; gate the full set "
            "(`extraction-eval run --mode cassette`).",
            run,
            baseline,
            rows,
        )
    live_modes = {Mode.LIVE.value, Mode.VLLM.value, Mode.RECORD.value}
    if tags.get(TAG_CASSETTE_KIND) == CassetteKind.LIVE_CALL.value or tags.get(TAG_MODE) in live_modes:
        return _cannot(
            f"run {run.run_id} is a live run (mode {tags.get(TAG_MODE)!r}): a live number is a "
            "new evidence event, reported, not gated. Gate a cassette replay instead.",
            run,
            baseline,
            rows,
        )
    for tag, label in ((TAG_GOLD_VERSION, "gold version"), (TAG_SUBSET, "subset"), (TAG_MATCHER, "matcher")):
        have, want = tags.get(tag), baseline.tags.get(tag)
        if have != want:
            fix = (
                f"rescore it under the baseline's matcher (`extraction-eval rescore --run-id {run.run_id} "
                f"--matcher {want}`) and gate that run, or have a keeper promote a baseline under {have}"
                if tag == TAG_MATCHER
                else f"gate a {want} run, or seed the {have} baseline ({register})"
            )
            return _cannot(
                f"run {run.run_id} has {label} {have!r} but the baseline has {want!r}; numbers "
                f"from another {label} are not comparable: {fix}.",
                run,
                baseline,
                rows,
            )
    # Every identity check above holds for a manual provider too; only then is it reported.
    if baseline.enforcement == Enforcement.MANUAL.value:
        return GateResult(
            Verdict.REPORT_ONLY,
            (
                f"provider {provider!r} has enforcement 'manual': its run passed every identity check "
                "and is reported, never fails the build.",
            ),
            run,
            baseline,
            rows,
        )
    if not gated:
        return _cannot(f"the baseline of {provider!r} lists no gated metrics.", run, baseline, rows)
    missing = [r.key for r in rows if r.status is MetricStatus.MISSING]
    if missing:
        return _cannot(
            f"gated metric(s) missing or NaN in the run or the baseline: {missing!r}; a metric "
            "that cannot be compared fails closed.",
            run,
            baseline,
            rows,
        )
    failed = [r.key for r in rows if r.status is MetricStatus.FAIL]
    if failed:
        return GateResult(
            Verdict.REGRESSION,
            (f"{len(failed)} gated metric(s) dropped by more than {THRESHOLD:.2f}: {failed!r}.",),
            run,
            baseline,
            rows,
        )
    return GateResult(
        Verdict.PASS,
        (f"all {len(rows)} gated metrics within {THRESHOLD:.2f} of the baseline.",),
        run,
        baseline,
        rows,
    )
