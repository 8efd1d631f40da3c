"""The regression gate's judgement, case by case (pure: records in, verdict out)."""

from __future__ import annotations

import json
import math

import pytest

from extraction_eval.gates import GateResult, MetricRow, MetricStatus, Verdict, compare, judge
from extraction_eval.metric_keys import DEFAULT_GATED_METRICS
from extraction_eval.tracking import RegisteredBaseline, TrackedRun

IDENTITY = {"gold_version": "v1", "subset": "full", "matcher": "keyed-dice@3"}


def run(metrics: dict[str, float] | None = None, status: str = "FINISHED", **tags: str) -> TrackedRun:
    base_tags = {
        "run_kind": "eval",
        "provider": "openai",
        "mode": "cassette",
        "cassette_kind": "oracle_aligned_expected_json",
        "contract_override": "false",
        **IDENTITY,
    }
    return TrackedRun(
        "r1",
        "1",
        status,
        0,
        {**base_tags, **tags},
        metrics if metrics is not None else {k: 1.0 for k in DEFAULT_GATED_METRICS},
    )


def baseline(
    provider: str = "openai",
    enforcement: str = "ci",
    metrics: dict[str, float] | None = None,
    gated: tuple[str, ...] = DEFAULT_GATED_METRICS,
    **tags: str,
) -> RegisteredBaseline:
    version_tags = {"enforcement": enforcement, "gated_metrics": json.dumps(list(gated)), **IDENTITY, **tags}
    return RegisteredBaseline(
        provider,
        f"extraction-eval-{provider}",
        "1",
        "b1",
        version_tags,
        TrackedRun("b1", "2", "FINISHED", 0, {}, metrics if metrics is not None else {k: 1.0 for k in gated}),
    )


def test_equal_metrics_pass() -> None:
    result = judge(run(), [baseline()])
    assert result.verdict is Verdict.PASS and result.exit_code == 0
    assert len(result.rows) == len(DEFAULT_GATED_METRICS)


def test_exactly_three_points_passes_and_a_hair_more_fails() -> None:
    # 0.97 - 1.0 is -0.030000000000000027 in floating point; rounding to 9 places makes it -0.03.
    ok = judge(run({**{k: 1.0 for k in DEFAULT_GATED_METRICS}, "recall/episodic": 0.97}), [baseline()])
    assert ok.verdict is Verdict.PASS
    row = next(r for r in ok.rows if r.key == "recall/episodic")
    assert row.delta == -0.03 and row.status == "pass"
    bad = judge(run({**{k: 1.0 for k in DEFAULT_GATED_METRICS}, "recall/episodic": 0.9699}), [baseline()])
    assert bad.verdict is Verdict.REGRESSION and bad.exit_code == 1
    assert [r.key for r in bad.rows if r.status == "FAIL"] == ["recall/episodic"]


def test_lower_is_better_metrics_fail_when_they_rise() -> None:
    gated = ("macro/recall", "negatives/false_positive_rate", "failures/rate")
    base = baseline(
        gated=gated, metrics={"macro/recall": 0.8, "negatives/false_positive_rate": 0.1, "failures/rate": 0.0}
    )
    rows = compare(
        gated,
        dict(base.run.metrics),
        {"macro/recall": 0.9, "negatives/false_positive_rate": 0.14, "failures/rate": 0.02},
    )  # type: ignore[union-attr]
    assert [(r.key, r.status) for r in rows] == [
        ("macro/recall", "pass"),
        ("negatives/false_positive_rate", "FAIL"),
        ("failures/rate", "pass"),
    ]
    # a drop of a lower-is-better metric is an improvement, never a failure
    assert compare(("failures/rate",), {"failures/rate": 0.5}, {"failures/rate": 0.0})[0].status == "pass"


@pytest.mark.parametrize(
    ("the_run", "baselines", "message"),
    [
        (run(), [baseline(enforcement="manual")], "no provider with enforcement 'ci'"),
        (run(), [], "no provider with enforcement 'ci'"),
        (run(provider="anthropic"), [baseline()], "which has no registered baseline"),
        (
            run(metrics={k: 1.0 for k in DEFAULT_GATED_METRICS if k != "temporal_accuracy"}),
            [baseline()],
            "missing or NaN",
        ),
        (
            run(metrics={**{k: 1.0 for k in DEFAULT_GATED_METRICS}, "macro/recall": math.nan}),
            [baseline()],
            "missing or NaN",
        ),
        (run(), [baseline(metrics={})], "missing or NaN"),
        (run(gold_version="v2"), [baseline()], "gold version 'v2' but the baseline has 'v1'"),
        (run(matcher="embedding@3"), [baseline()], "matcher 'embedding@3' but the baseline has 'keyed-dice@3'"),
        (run(), [baseline(subset="smoke")], "subset 'full' but the baseline has 'smoke'"),
        (run(subset="smoke"), [baseline()], "covers the 'smoke' subset; gate the full set"),
        (run(subset="fast"), [baseline()], "covers the 'fast' subset"),
        (run(mode="live", cassette_kind="live_call"), [baseline()], "is a live run"),
        (run(mode="record", cassette_kind="live_openai_recorded"), [baseline()], "is a live run"),
        (run(contract_override="true"), [baseline()], "contract_override=true"),
        (run(status="FAILED"), [baseline()], "has status 'FAILED'"),
        (run(run_kind="baseline_seed"), [baseline()], "not an extraction-eval run"),
        (run(), [baseline(gated=())], "lists no gated metrics"),
    ],
)
def test_every_fail_closed_case_has_its_own_message(
    the_run: TrackedRun, baselines: list[RegisteredBaseline], message: str
) -> None:
    result = judge(the_run, baselines)
    assert result.verdict is Verdict.CANNOT_EVALUATE and result.exit_code == 2
    assert message in result.reasons[0]


def test_manual_provider_is_reported_and_never_fails() -> None:
    vllm_run = run(provider="vllm", metrics={k: 0.2 for k in DEFAULT_GATED_METRICS})
    result = judge(vllm_run, [baseline(), baseline("vllm", "manual")])
    assert result.verdict is Verdict.REPORT_ONLY and result.exit_code == 0
    # the vllm baseline gates DEFAULT_GATED_METRICS: one row each, so all() below is not vacuous
    assert len(result.rows) == len(DEFAULT_GATED_METRICS)
    assert all(r.status == "FAIL" for r in result.rows)  # the table still shows the drop


@pytest.mark.parametrize(
    ("tags", "why"),
    [
        ({"gold_version": "v2"}, "has gold version 'v2' but the baseline has 'v1'"),
        ({"matcher": "exact@1"}, "has matcher 'exact@1' but the baseline has 'keyed-dice@3'"),
        ({"subset": "smoke"}, "covers the 'smoke' subset"),
        ({"mode": "vllm", "cassette_kind": "live_call"}, "is a live run (mode 'vllm')"),
        ({"contract_override": "true"}, "ran past contract drift"),
    ],
    ids=["gold-version", "matcher", "subset", "live", "override"],
)
def test_a_manual_provider_run_that_fails_an_identity_check_fails_closed(tags: dict[str, str], why: str) -> None:
    """Issue 12, point 2: the enforcement decision comes after every identity check."""
    result = judge(run(provider="vllm", **tags), [baseline(), baseline("vllm", "manual")])
    assert result.verdict is Verdict.CANNOT_EVALUATE and result.exit_code == 2
    assert why in result.reasons[0]


def test_unmeasured_manual_baseline_shows_missing_numbers() -> None:
    result = judge(run(provider="vllm"), [baseline(), baseline("vllm", "manual", measured="false")])
    assert result.verdict is Verdict.REPORT_ONLY
    assert {r.status for r in result.rows} == {"missing"}


def rows_all_equal(gated: tuple[str, ...] = DEFAULT_GATED_METRICS, value: float = 1.0) -> tuple[MetricRow, ...]:
    return tuple(
        MetricRow(k, value, value, 0.0, MetricStatus.PASS, k in {"failures/rate", "negatives/false_positive_rate"})
        for k in gated
    )


def test_a_live_call_cassette_replayed_in_cassette_mode_is_not_gated() -> None:
    # contract: "a live run (a live number is a new evidence event, reported not gated)" fails closed,
    # whatever the mode tag says: the cassette kind alone marks a live number.
    the_run, the_baseline = run(mode="cassette", cassette_kind="live_call"), baseline()
    assert judge(the_run, [the_baseline]) == GateResult(
        Verdict.CANNOT_EVALUATE,
        (
            "run r1 is a live run (mode 'cassette'): a live number is a new evidence event, reported, "
            "not gated. Gate a cassette replay instead.",
        ),
        the_run,
        the_baseline,
        rows_all_equal(),
    )


def test_lower_is_better_rising_by_exactly_three_points_passes_and_a_hair_more_fails() -> None:
    # contract: worse than the baseline by more than 0.03 fails (for lower-is-better, worse means higher)
    gated = ("failures/rate",)
    assert compare(gated, {"failures/rate": 0.0}, {"failures/rate": 0.03}) == (
        MetricRow("failures/rate", 0.0, 0.03, 0.03, MetricStatus.PASS, True),
    )
    assert compare(gated, {"failures/rate": 0.0}, {"failures/rate": 0.0300001}) == (
        MetricRow("failures/rate", 0.0, 0.0300001, 0.0300001, MetricStatus.FAIL, True),
    )


def test_differences_are_rounded_to_nine_places_before_the_threshold() -> None:
    # 0.9699999996 - 1.0 = -0.0300000004: 9 places make it exactly -0.03, which passes;
    # 0.969999999 - 1.0 = -0.030000001 stays beyond it.
    assert compare(("macro/recall",), {"macro/recall": 1.0}, {"macro/recall": 0.9699999996}) == (
        MetricRow("macro/recall", 1.0, 0.9699999996, -0.03, MetricStatus.PASS, False),
    )
    assert compare(("macro/recall",), {"macro/recall": 1.0}, {"macro/recall": 0.969999999}) == (
        MetricRow("macro/recall", 1.0, 0.969999999, -0.030000001, MetricStatus.FAIL, False),
    )


def test_every_missing_gated_metric_is_named() -> None:
    gated = ("macro/precision", "macro/recall", "temporal_accuracy")
    the_run = run(metrics={"macro/precision": 0.9, "macro/recall": math.nan})
    the_baseline = baseline(
        gated=gated, metrics={"macro/precision": 0.9, "macro/recall": 0.8, "temporal_accuracy": 0.7}
    )
    assert judge(the_run, [the_baseline]) == GateResult(
        Verdict.CANNOT_EVALUATE,
        (
            "gated metric(s) missing or NaN in the run or the baseline: ['macro/recall', 'temporal_accuracy']; "
            "a metric that cannot be compared fails closed.",
        ),
        the_run,
        the_baseline,
        (
            MetricRow("macro/precision", 0.9, 0.9, 0.0, MetricStatus.PASS, False),
            MetricRow("macro/recall", 0.8, None, None, MetricStatus.MISSING, False),
            MetricRow("temporal_accuracy", 0.7, None, None, MetricStatus.MISSING, False),
        ),
    )


def test_a_regression_result_whole() -> None:
    gated = ("macro/recall", "temporal_accuracy", "negatives/false_positive_rate")
    the_baseline = baseline(
        gated=gated,
        metrics={"macro/recall": 0.8, "temporal_accuracy": 0.9, "negatives/false_positive_rate": 0.1},
    )
    the_run = run(metrics={"macro/recall": 0.75, "temporal_accuracy": 0.95, "negatives/false_positive_rate": 0.2})
    assert judge(the_run, [the_baseline]) == GateResult(
        Verdict.REGRESSION,
        ("2 gated metric(s) dropped by more than 0.03: ['macro/recall', 'negatives/false_positive_rate'].",),
        the_run,
        the_baseline,
        (
            MetricRow("macro/recall", 0.8, 0.75, -0.05, MetricStatus.FAIL, False),
            MetricRow("temporal_accuracy", 0.9, 0.95, 0.05, MetricStatus.PASS, False),
            MetricRow("negatives/false_positive_rate", 0.1, 0.2, 0.1, MetricStatus.FAIL, True),
        ),
    )


def test_a_passing_result_whole() -> None:
    the_run, the_baseline = run(), baseline()
    assert judge(the_run, [the_baseline]) == GateResult(
        Verdict.PASS,
        (f"all {len(DEFAULT_GATED_METRICS)} gated metrics within 0.03 of the baseline.",),
        the_run,
        the_baseline,
        rows_all_equal(),
    )


def test_a_manual_provider_result_whole() -> None:
    # A replay of a manual provider that passes every identity check (a live vLLM run does not:
    # issue 12 checks identity before enforcement) is reported, never failed.
    the_run = run(provider="vllm", mode="cassette", metrics={"macro/recall": 0.5})
    the_baseline = baseline("vllm", "manual", gated=("macro/recall",), metrics={"macro/recall": 0.6})
    assert judge(the_run, [baseline(), the_baseline]) == GateResult(
        Verdict.REPORT_ONLY,
        (
            "provider 'vllm' has enforcement 'manual': its run passed every identity check and is reported, never fails the build.",
        ),
        the_run,
        the_baseline,
        (MetricRow("macro/recall", 0.6, 0.5, -0.1, MetricStatus.FAIL, False),),
    )


def test_a_metric_the_baseline_lacks_still_shows_the_runs_value() -> None:
    assert compare(("macro/recall", "macro/precision"), {"macro/precision": 0.5}, {"macro/recall": 0.9}) == (
        MetricRow("macro/recall", None, 0.9, None, MetricStatus.MISSING, False),
        MetricRow("macro/precision", 0.5, None, None, MetricStatus.MISSING, False),
    )
    assert compare(("failures/rate",), None, {"failures/rate": 0.0}) == (
        MetricRow("failures/rate", None, 0.0, None, MetricStatus.MISSING, True),
    )


@pytest.mark.parametrize(
    ("the_run", "baselines", "reason"),
    [
        (run(run_kind="baseline_seed"), [baseline()], "run r1 is not an extraction-eval run (tag run_kind != 'eval')."),
        (run(status="RUNNING"), [baseline()], "run r1 has status 'RUNNING'; the gate judges finished runs only."),
        (
            run(),
            [baseline(enforcement="manual")],
            "no provider with enforcement 'ci' has a registered baseline for gold v1, so nothing can fail the "
            "build; an empty provider set is a failure. Seed it: `extraction-eval baseline register --gold "
            "gold/v1` (CI: `--from-rev <base>`).",
        ),
    ],
)
def test_a_run_that_cannot_be_matched_to_a_baseline_result_whole(
    the_run: TrackedRun, baselines: list[RegisteredBaseline], reason: str
) -> None:
    # the result keeps the run, so the report can name it; no baseline applies
    assert judge(the_run, baselines) == GateResult(Verdict.CANNOT_EVALUATE, (reason,), the_run, None, ())


def _deleted(r: TrackedRun) -> TrackedRun:
    return TrackedRun(r.run_id, r.experiment_id, r.status, r.start_time, r.tags, r.metrics, r.artifact_uri, True)


def _with_deleted_run(b: RegisteredBaseline) -> RegisteredBaseline:
    assert b.run is not None
    return RegisteredBaseline(b.provider, b.model_name, b.version, b.run_id, b.tags, _deleted(b.run))


# Every "could not evaluate" branch, the whole result: the exact reason (what happened and the
# fix, as docs/gates.md promises), the run it names, the baseline it was held against (None
# before one is chosen) and the rows the report shows (none before the comparison is made).
_RUN = run()
_BASE = baseline()
_NO_BASELINE_YET = [
    (
        run(run_kind="baseline_seed"),
        [_BASE],
        "run r1 is not an extraction-eval run (tag run_kind != 'eval').",
    ),
    (
        run(status="RUNNING"),
        [_BASE],
        "run r1 has status 'RUNNING'; the gate judges finished runs only.",
    ),
    (
        _deleted(_RUN),
        [_BASE],
        "run r1 is deleted; the gate judges live runs only. Restore it or rerun.",
    ),
    (
        run(provider="anthropic"),
        [_BASE, baseline("vllm", "manual")],
        "run r1 is for provider 'anthropic', which has no registered baseline for gold v1 (registered: "
        "['openai', 'vllm']). Seed it: `extraction-eval baseline register --gold gold/v1` (CI: `--from-rev "
        "<base>`), or gate a run of a registered provider.",
    ),
]


@pytest.mark.parametrize(("the_run", "baselines", "reason"), _NO_BASELINE_YET)
def test_a_run_refused_before_a_baseline_is_chosen_result_whole(
    the_run: TrackedRun, baselines: list[RegisteredBaseline], reason: str
) -> None:
    assert judge(the_run, baselines) == GateResult(Verdict.CANNOT_EVALUATE, (reason,), the_run, None, ())


def test_a_deleted_baseline_run_is_no_bar_result_whole() -> None:
    dead = _with_deleted_run(_BASE)
    assert judge(_RUN, [dead]) == GateResult(
        Verdict.CANNOT_EVALUATE,
        (
            "the baseline of 'openai' (extraction-eval-openai version 1) points at run b1, which is "
            "deleted; a deleted run is no bar. Restore it (`mlflow runs restore --run-id b1`) or "
            "promote another run.",
        ),
        _RUN,
        dead,
        (),
    )


_AFTER_COMPARISON = [
    (
        {"contract_override": "true"},
        "run r1 ran past contract drift (contract_override=true); an overridden run is never gated. "
        "Re-record or re-generate the cassettes and run again.",
    ),
    (
        {"subset": "fast"},
        "run r1 covers the 'fast' subset; gate the full set (`extraction-eval run --mode cassette`).",
    ),
    (
        {"mode": "vllm", "cassette_kind": "live_call"},
        "run r1 is a live run (mode 'vllm'): a live number is a new evidence event, reported, not "
        "gated. Gate a cassette replay instead.",
    ),
    (
        {"gold_version": "v2"},
        "run r1 has gold version 'v2' but the baseline has 'v1'; numbers from another gold version "
        "are not comparable: gate a v1 run, or seed the v2 baseline (`extraction-eval baseline register "
        "--gold gold/v2` (CI: `--from-rev <base>`)).",
    ),
    (
        {"matcher": "fact-cover@1"},
        "run r1 has matcher 'fact-cover@1' but the baseline has 'keyed-dice@3'; numbers from another "
        "matcher are not comparable: rescore it under the baseline's matcher (`extraction-eval rescore "
        "--run-id r1 --matcher keyed-dice@3`) and gate that run, or have a keeper promote a baseline under "
        "fact-cover@1.",
    ),
]


@pytest.mark.parametrize(("tags", "reason"), _AFTER_COMPARISON)
def test_a_run_refused_after_the_comparison_keeps_baseline_and_rows(tags: dict[str, str], reason: str) -> None:
    the_run = run(**tags)
    # the rows are still shown, so a reader sees the numbers the gate declined to judge
    assert judge(the_run, [_BASE]) == GateResult(Verdict.CANNOT_EVALUATE, (reason,), the_run, _BASE, rows_all_equal())


def test_a_baseline_with_no_gated_metrics_result_whole() -> None:
    empty = baseline(gated=())
    assert judge(_RUN, [empty]) == GateResult(
        Verdict.CANNOT_EVALUATE, ("the baseline of 'openai' lists no gated metrics.",), _RUN, empty, ()
    )


def test_the_gate_report_of_a_run_on_edited_cassettes_says_edited() -> None:
    # the run's own description says EDITED (docs/tracking.md); its gate.md must not call it
    # oracle-aligned because the manifest does
    from extraction_eval.gates._gate_run import render_markdown

    edited = run(cassettes_edited="true", cassette_file_sha256="cd" * 32)
    text = render_markdown(judge(edited, [_BASE]))
    assert "\nEvidence: EDITED cassettes: the replayed answers are not what the manifest records " in text
    assert "(cassette file sha256 cdcdcdcdcdcd…)" in text
    assert "\nEvidence: oracle-aligned cassettes" not in text
    assert "\nBaseline Evidence: not measured yet" in text  # this fixture baseline has no cassette kind
