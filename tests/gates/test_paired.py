"""The gate's paired interval, resolution and gate.json, against numbers computed by hand."""

from __future__ import annotations

import json
import math

import pytest

from extraction_eval.gates import GateResult, MetricRow, MetricStatus, Verdict
from extraction_eval.gates._paired import RowStats, gate_json, parse_counts, row_stats, verdict_word
from extraction_eval.tracking import RegisteredBaseline, TrackedRun

# category_accuracy: run 2/4 (c1 1/1, c2 0/1, c3 1/2), base 4/4; delta -0.5.
# u_run = (a_i - 0.5 b_i)/4 = 0.125, -0.125, 0; u_base = 0: se_d = sqrt(3/2 * 2 * 0.125^2).
# temporal_accuracy: run 1/2 (c1 1/1, c2 0/1), base 2/2; delta -0.5; resolution 1/2.
# u_run = 0.25, -0.25 over C = 2: se_d = sqrt(2/1 * 2 * 0.25^2) = 0.5.
RUN = {
    "c1": {"category_accuracy": (1, 1), "temporal_accuracy": (1, 1)},
    "c2": {"category_accuracy": (0, 1), "temporal_accuracy": (0, 1)},
    "c3": {"category_accuracy": (1, 2), "temporal_accuracy": (0, 0)},
}
BASE = {
    "c1": {"category_accuracy": (1, 1), "temporal_accuracy": (1, 1)},
    "c2": {"category_accuracy": (1, 1), "temporal_accuracy": (1, 1)},
    "c3": {"category_accuracy": (2, 2), "temporal_accuracy": (0, 0)},
}
ROWS = (
    MetricRow("category_accuracy", 1.0, 0.5, -0.5, MetricStatus.FAIL, False),
    MetricRow("temporal_accuracy", 1.0, 0.5, -0.5, MetricStatus.FAIL, False),
    MetricRow("macro/recall", 0.8, 0.8, 0.0, MetricStatus.PASS, False),
)
SE_CAT = math.sqrt(3 / 2 * 2 * 0.125**2)


def rounded(value: object) -> object:
    """Floats to 12 places, inside lists, tuples and dicts: exact comparison of whole results."""
    if isinstance(value, float):
        return round(value, 12)
    if isinstance(value, (list, tuple)):
        return [rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return value


def fields(stats: tuple[RowStats, ...]) -> object:
    return rounded([(s.key, s.ci_low, s.ci_high, s.resolution, s.note) for s in stats])


def test_interval_resolution_and_note_of_every_row() -> None:
    stats = row_stats(ROWS, RUN, BASE, {"n/macro/recall": 40.0})
    assert fields(stats) == rounded(
        [
            (
                "category_accuracy",
                -0.5 - 1.96 * SE_CAT,
                -0.5 + 1.96 * SE_CAT,
                0.25,
                "outside the paired 95% interval: a shift beyond noise in these conversations",
            ),
            (
                "temporal_accuracy",
                -0.5 - 1.96 * 0.5,
                -0.5 + 1.96 * 0.5,
                0.5,
                "within one row: one memory moves this metric by 0.5000; within the paired 95% interval: "
                "not distinguishable from noise in these conversations",
            ),
            # macro/recall has no counts in RUN: no interval; its n is the run's logged n/ key
            ("macro/recall", None, None, 1 / 40, ""),
        ]
    )


def test_without_a_baseline_record_there_is_no_interval_and_the_reason_is_given() -> None:
    stats = row_stats(ROWS[:2], RUN, None, {}, "the baseline was seeded without per-conversation counts")
    assert fields(stats) == rounded(
        [
            (
                "category_accuracy",
                None,
                None,
                0.25,
                "no paired interval (the baseline was seeded without per-conversation counts)",
            ),
            (
                "temporal_accuracy",
                None,
                None,
                0.5,
                "within one row: one memory moves this metric by 0.5000; no paired interval "
                "(the baseline was seeded without per-conversation counts)",
            ),
        ]
    )
    assert fields(row_stats(ROWS[:1], None, None, {})) == [
        ["category_accuracy", None, None, None, "no paired interval"]
    ]


def test_a_single_conversation_has_no_interval() -> None:
    one = {"c1": {"category_accuracy": (0, 2)}}
    base = {"c1": {"category_accuracy": (2, 2)}}
    row = MetricRow("category_accuracy", 1.0, 0.0, -1.0, MetricStatus.FAIL, False)
    assert fields(row_stats((row,), one, base, {}, "why")) == [
        ["category_accuracy", None, None, 0.5, "no paired interval (why)"]
    ]


def test_parse_counts_sums_samples_and_picks_the_provider() -> None:
    text = "\n".join(
        json.dumps(r)
        for r in [
            {"provider": "openai", "conversation_id": "c1", "counts": {"k": [1, 2]}},
            {"provider": "openai", "conversation_id": "c1", "counts": {"k": [2, 2], "j": [0, 1]}},
            {"provider": "vllm", "conversation_id": "c1", "counts": {"k": [9, 9]}},
            {"provider": "openai", "conversation_id": 7, "counts": {"k": [0, 1]}},
        ]
    )
    assert parse_counts(text + "\n\n", provider="openai") == {"c1": {"k": (3, 4), "j": (0, 1)}, "7": {"k": (0, 1)}}
    assert parse_counts(text) == {"c1": {"k": (12, 13), "j": (0, 1)}, "7": {"k": (0, 1)}}


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("not json", "JSONDecodeError"),
        ('{"counts": {}}', "KeyError"),
        ('{"conversation_id": "c", "counts": {"k": [1]}}', "ValueError"),
        ('{"conversation_id": "c", "counts": {"k": 3}}', "TypeError"),
        ('{"conversation_id": "c", "counts": []}', "AttributeError"),
    ],
)
def test_parse_counts_names_the_bad_line(line: str, error: str) -> None:
    good = json.dumps({"conversation_id": "c1", "counts": {"k": [1, 1]}})
    with pytest.raises(ValueError) as info:
        parse_counts(f"{good}\n{line}\n")
    assert str(info.value) == f"line 2: not a per-conversation row with counts ({error})"


def tracked(run_id: str) -> TrackedRun:
    return TrackedRun(run_id, "1", "FINISHED", 0, {}, {})


def result(verdict: Verdict, rows: tuple[MetricRow, ...] = ROWS) -> GateResult:
    baseline = RegisteredBaseline("openai", "extraction-eval-openai", "1", "b1", {}, tracked("b1"))
    return GateResult(verdict, ("why",), tracked("r1"), baseline, rows)


def test_gate_json_whole() -> None:
    stats = row_stats(ROWS, RUN, BASE, {"n/macro/recall": 40.0})
    nan_row = MetricRow("recall/episodic", math.nan, 0.5, None, MetricStatus.MISSING, False)
    assert rounded(gate_json(result(Verdict.REGRESSION, (*ROWS, nan_row)), stats)) == rounded(
        {
            "verdict": "fail",
            "exit_code": 1,
            "run_id": "r1",
            "baseline_run_id": "b1",
            "rows": [
                {
                    "metric": "category_accuracy",
                    "baseline": 1.0,
                    "run": 0.5,
                    "delta": -0.5,
                    "ci_low": -0.5 - 1.96 * SE_CAT,
                    "ci_high": -0.5 + 1.96 * SE_CAT,
                    "resolution": 0.25,
                    "verdict": "fail",
                },
                {
                    "metric": "temporal_accuracy",
                    "baseline": 1.0,
                    "run": 0.5,
                    "delta": -0.5,
                    "ci_low": -1.48,
                    "ci_high": 0.48,
                    "resolution": 0.5,
                    "verdict": "fail",
                },
                {
                    "metric": "macro/recall",
                    "baseline": 0.8,
                    "run": 0.8,
                    "delta": 0.0,
                    "ci_low": None,
                    "ci_high": None,
                    "resolution": 0.025,
                    "verdict": "pass",
                },
                {
                    "metric": "recall/episodic",
                    "baseline": None,
                    "run": 0.5,
                    "delta": None,
                    "ci_low": None,
                    "ci_high": None,
                    "resolution": None,
                    "verdict": "missing",
                },
            ],
        }
    )


def test_gate_json_of_a_result_without_run_or_baseline() -> None:
    assert gate_json(GateResult(Verdict.CANNOT_EVALUATE, ("no run",)), ()) == {
        "verdict": "error",
        "exit_code": 2,
        "run_id": None,
        "baseline_run_id": None,
        "rows": [],
    }


@pytest.mark.parametrize(
    ("verdict", "rows", "word"),
    [
        (Verdict.PASS, ROWS[2:], "pass"),
        (Verdict.REGRESSION, ROWS, "fail"),
        (Verdict.CANNOT_EVALUATE, ROWS, "error"),
        (Verdict.REPORT_ONLY, ROWS, "fail"),  # a manual provider's report: fail by its rows, exit 0
        (Verdict.REPORT_ONLY, ROWS[2:], "pass"),
    ],
)
def test_verdict_word(verdict: Verdict, rows: tuple[MetricRow, ...], word: str) -> None:
    assert verdict_word(result(verdict, rows)) == word
