"""Standard errors and paired intervals against numbers worked out by hand (docs/metrics.md)."""

from __future__ import annotations

import math
import random

import pytest

from extraction_eval.ratios import OPTIONAL_RATIO_KEYS, RATIO_KEYS, ratio_values, sum_counts
from extraction_eval.scoring import (
    DEFAULT_MATCHER,
    Case,
    ExpectedItem,
    FailureReason,
    Outcome,
    conversation_counts,
    paired_se,
    score,
    standard_error,
)
from extraction_eval.scoring._uncertainty import per_conversation_counts
from tests.scoring.test_metrics import ALLERGY, DUR, F, mem, mixed_cases


def _counts(cases: list[Case]) -> dict[str, dict[str, tuple[int, int]]]:
    report = score(cases, DEFAULT_MATCHER)
    return per_conversation_counts([(s.conversation_id, conversation_counts(s)) for s in report.conversations])


def test_mixed_case_standard_errors_by_hand() -> None:
    u = score(mixed_cases(), DEFAULT_MATCHER).uncertainty
    # failures/rate: one failure in six conversations, M = 1/6, Σb = 6.
    # u = (1 − 1/6)/6 = 5/36 for C, (0 − 1/6)/6 = −1/36 for the other five;
    # Σu² = (25 + 5)/1296; se = sqrt(6/5 · 30/1296) = sqrt(36/1296) = 1/6.
    assert u["n/failures/rate"] == 6.0
    assert u["se/failures/rate"] == pytest.approx(1 / 6, abs=1e-12)
    # micro/recall: (a, b) = A (2, 2), B (1, 1), C (0, 1), F (1, 1); M = 4/5, Σb = 5.
    # u = 0.4/5, 0.2/5, −0.8/5, 0.2/5 = 0.08, 0.04, −0.16, 0.04; Σu² = 0.0352;
    # se = sqrt(4/3 · 0.0352) = 0.216641024...
    assert u["n/micro/recall"] == 5.0
    assert u["se/micro/recall"] == pytest.approx(math.sqrt(4 / 3 * 0.0352), abs=1e-12)
    assert u["se/micro/recall"] == pytest.approx(0.216641024, abs=1e-9)
    # macro/recall: parts factual A (1,1) B (1,1), M=1; procedural A (1,1), M=1; behavioral
    # A (0,1) F (1,1), M=0.5; episodic C (0,1), M=0; preference none.
    # u_A = (0 + 0 + (0 − 0.5)/2)/5 = −0.05, u_B = 0, u_C = 0, u_F = ((1 − 0.5)/2)/5 = 0.05;
    # C = 4, se = sqrt(4/3 · 0.005) = 0.0816496581; n = 2 + 1 + 0 + 2 + 1 = 6.
    assert u["n/macro/recall"] == 6.0
    assert u["se/macro/recall"] == pytest.approx(math.sqrt(4 / 3 * 0.005), abs=1e-12)
    # category_accuracy: pairs A (1 ok of 2), B (1, 1), F (1, 1); M = 3/4, Σb = 4.
    # u = (1 − 1.5)/4, (1 − 0.75)/4, (1 − 0.75)/4 = −0.125, 0.0625, 0.0625; Σu² = 0.0234375;
    # se = sqrt(3/2 · 0.0234375) = 0.1875.
    assert u["n/category_accuracy"] == 4.0
    assert u["se/category_accuracy"] == pytest.approx(0.1875, abs=1e-12)


def test_fewer_than_two_conversations_have_no_standard_error_but_keep_n() -> None:
    u = score(mixed_cases(), DEFAULT_MATCHER).uncertainty
    # supersession/recall has one case (B): n = 1, no se. preference has nothing expected.
    assert u["n/supersession/recall"] == 1.0
    assert "se/supersession/recall" not in u
    assert u["n/recall/preference"] == 0.0
    assert "se/recall/preference" not in u
    # F1 keys never carry an se.
    assert not any(k.startswith(("se/f1", "n/f1", "se/macro/f1")) for k in u)


def test_counts_reproduce_every_ratio_metric() -> None:
    report = score(mixed_cases(), DEFAULT_MATCHER)
    totals = sum_counts(conversation_counts(s) for s in report.conversations)
    # no case has forbidden memories, so the security rates are absent, not zero
    assert set(totals) == set(RATIO_KEYS) - OPTIONAL_RATIO_KEYS
    assert not any(k.startswith(("security/", "n/security/")) for k in {**report.metrics, **report.uncertainty})
    values = ratio_values(totals)
    for key in set(RATIO_KEYS) - OPTIONAL_RATIO_KEYS:
        if key in report.metrics:
            assert values[key] == report.metrics[key], key
        else:  # an accuracy or rate over zero cases
            assert totals[key][1] == 0 and key not in values


def test_per_conversation_rows_carry_the_counts() -> None:
    report = score(mixed_cases(), DEFAULT_MATCHER)
    row = next(s for s in report.conversations if s.conversation_id == "A").to_json()
    counts = row["counts"]
    assert isinstance(counts, dict)
    assert counts["micro/recall"] == [2, 2]
    assert counts["micro/precision"] == [2, 3]
    assert counts["recall/behavioral"] == [0, 1]
    assert counts["category_accuracy"] == [1, 2]
    assert counts["failures/rate"] == [0, 1]
    assert counts["negatives/false_positive_rate"] == [0, 0]


def test_samples_of_one_conversation_are_one_cluster() -> None:
    # Two samples of X (one failed, one not) and one of Y (ok): the cluster is X, not the sample.
    rows = [("X", {"failures/rate": (1, 1)}), ("X", {"failures/rate": (0, 1)}), ("Y", {"failures/rate": (0, 1)})]
    run = per_conversation_counts(rows)
    assert run == {"X": {"failures/rate": (1, 2)}, "Y": {"failures/rate": (0, 1)}}
    # M = 1/3, Σb = 3: u_X = (1 − 2/3)/3 = 1/9, u_Y = (0 − 1/3)/3 = −1/9; se = sqrt(2 · 2/81) = 2/9.
    assert standard_error(run, "failures/rate", {"failures/rate": 1 / 3}) == pytest.approx(2 / 9, abs=1e-12)


def test_paired_interval_by_hand() -> None:
    # Four conversations; the base never fails, the run fails on X.
    base = {cid: {"failures/rate": (0, 1)} for cid in "WXYZ"}
    run = {**base, "X": {"failures/rate": (1, 1)}}
    # u_base = 0 everywhere; u_run = 0.75/4 = 0.1875 for X and −0.25/4 = −0.0625 for W, Y, Z.
    # Σd² = 0.03515625 + 3 · 0.00390625 = 0.046875; se_d = sqrt(4/3 · 0.046875) = 0.25.
    se_d = paired_se("failures/rate", run, {"failures/rate": 0.25}, base, {"failures/rate": 0.0})
    assert se_d == pytest.approx(0.25, abs=1e-12)


def test_paired_interval_counts_conversations_either_run_has() -> None:
    # recall/factual: the base expects a fact in X and Y, the run (another labeling) in Y and Z.
    base = {"X": {"recall/factual": (1, 1)}, "Y": {"recall/factual": (0, 1)}, "Z": {"recall/factual": (0, 0)}}
    run = {"X": {"recall/factual": (0, 0)}, "Y": {"recall/factual": (1, 1)}, "Z": {"recall/factual": (1, 1)}}
    # base M = 0.5, Σb = 2: u = X 0.25, Y −0.25. run M = 1: u = Y 0, Z 0.
    # d = X 0.25, Y −0.25, Z 0 over C = 3: se_d = sqrt(3/2 · 0.125) = 0.4330127...
    se_d = paired_se("recall/factual", run, {"recall/factual": 1.0}, base, {"recall/factual": 0.5})
    assert se_d == pytest.approx(math.sqrt(1.5 * 0.125), abs=1e-12)


def test_identical_runs_have_zero_paired_spread() -> None:
    counts = _counts(mixed_cases())
    metrics = score(mixed_cases(), DEFAULT_MATCHER).metrics
    for key in ("micro/recall", "macro/precision", "failures/rate", "category_accuracy"):
        assert paired_se(key, counts, metrics, counts, metrics) == 0.0


def test_standard_error_agrees_with_a_direct_computation_on_random_runs() -> None:
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(2, 30)
        rows = {f"c{i}": {"k": (a, a + rng.randint(0, 3))} for i in range(n) for a in [rng.randint(0, 3)]}
        total_a = sum(a for (a, _b) in (r["k"] for r in rows.values()))
        total_b = sum(b for (_a, b) in (r["k"] for r in rows.values()))
        if total_b == 0:
            continue
        m = total_a / total_b
        used = [(a, b) for (a, b) in (r["k"] for r in rows.values()) if b > 0]
        c = len(used)
        expected = None if c < 2 else math.sqrt(c / (c - 1) * sum(((a - m * b) / total_b) ** 2 for a, b in used))
        got = standard_error(rows, "k", {"k": m})
        assert (got is None and expected is None) or got == pytest.approx(expected, rel=1e-12)


def test_a_failed_expected_fact_moves_recall_by_its_resolution() -> None:
    cases = [
        Case(f"c{i}", (ExpectedItem(f"c{i}-m1", mem(ALLERGY, {F}, DUR)),), Outcome((mem(ALLERGY, {F}, DUR),)))
        for i in range(4)
    ]
    cases[0] = Case("c0", cases[0].expected, Outcome.failed(FailureReason.INVALID_JSON, "x"))
    report = score(cases, DEFAULT_MATCHER)
    assert report.metrics["recall/factual"] == 0.75
    assert 1 / report.uncertainty["n/recall/factual"] == 0.25  # one memory moves it 25 points


def test_the_docs_worked_example_table_is_what_the_scorer_computes() -> None:
    from tests.conftest import REPO

    text = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    section = text.split("### Worked example", 1)[1].split("By hand:", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    report = score(mixed_cases(), DEFAULT_MATCHER)
    assert len(rows) == 8
    for line in rows:
        key, value, n, se = (cell.strip().strip("`") for cell in line.strip("|").split("|"))
        assert f"{report.metrics[key]:.4f}" == value, key
        assert str(int(report.uncertainty[f"n/{key}"])) == n, key
        computed = report.uncertainty.get(f"se/{key}")
        assert (f"{computed:.4f}" if computed is not None else "—") == se, key


def test_ratio_values_apply_the_zero_rules() -> None:
    from extraction_eval.ratios import ratio_values

    totals = {
        "precision/factual": (0, 0),  # nothing predicted, nothing expected: 1.0
        "recall/factual": (0, 0),
        "precision/procedural": (0, 0),  # nothing predicted but one expected: 0.0
        "recall/procedural": (0, 1),
        "category_accuracy": (0, 0),  # an accuracy over zero cases is left out
        "failures/rate": (1, 4),
    }
    assert ratio_values(totals) == {
        "precision/factual": 1.0,
        "recall/factual": 1.0,
        "precision/procedural": 0.0,
        "recall/procedural": 0.0,
        "failures/rate": 0.25,
    }


def test_a_conversation_without_a_key_counts_as_zero_over_zero() -> None:
    # Rows written before a key existed (or by another version) lack it: (0, 0), never (0, 1).
    with_key = {"X": {"failures/rate": (1, 1)}, "Y": {"failures/rate": (0, 1)}, "Z": {"failures/rate": (0, 0)}}
    without = {"X": {"failures/rate": (1, 1)}, "Y": {"failures/rate": (0, 1)}, "Z": {}}
    metrics = {"failures/rate": 0.5}
    # M = 1/2, Σb = 2: u = 0.25, −0.25 over C = 2: se = sqrt(2 · 0.125) = 0.5
    assert (
        standard_error(with_key, "failures/rate", metrics) == standard_error(without, "failures/rate", metrics) == 0.5
    )
    parts = {f"recall/{c}": 1.0 for c in ("factual", "procedural", "preference", "behavioral", "episodic")}
    macro_run = {"X": {"recall/factual": (1, 1)}, "Y": {"recall/factual": (0, 1)}}
    # macro/recall: only factual has cases (M = 1/2 here): u = ±(0.5/2)/5 = ±0.05; se = sqrt(2 · 0.005) = 0.1
    assert standard_error(macro_run, "macro/recall", {**parts, "recall/factual": 0.5}) == pytest.approx(0.1)
    from extraction_eval.ratios import denominator

    assert denominator(macro_run, "macro/recall") == 2


def test_no_paired_interval_when_either_run_lacks_the_metric() -> None:
    run = {"X": {"failures/rate": (1, 1)}, "Y": {"failures/rate": (0, 1)}}
    assert paired_se("failures/rate", run, {"failures/rate": 0.5}, run, {}) is None
    assert paired_se("failures/rate", run, {}, run, {"failures/rate": 0.5}) is None


def test_a_macro_part_missing_in_one_conversation_counts_as_zero_over_zero() -> None:
    keys = ("factual", "procedural", "preference", "behavioral", "episodic")
    explicit = {
        "X": {"recall/factual": (1, 1), "recall/procedural": (0, 0)},
        "Y": {"recall/factual": (0, 1), "recall/procedural": (1, 1)},
        "Z": {"recall/factual": (0, 0), "recall/procedural": (0, 1)},
    }
    missing = {"X": {"recall/factual": (1, 1)}, "Y": explicit["Y"], "Z": {"recall/procedural": (0, 1)}}
    metrics = {f"recall/{c}": 1.0 for c in keys} | {"recall/factual": 0.5, "recall/procedural": 0.5}
    # u_X = ((1 − 0.5)/2)/5 = 0.05; u_Y = ((0 − 0.5)/2 + (1 − 0.5)/2)/5 = 0; u_Z = ((0 − 0.5)/2)/5 = −0.05;
    # se = sqrt(3/2 · 0.005) = 0.0866...
    expected = math.sqrt(1.5 * 0.005)
    assert standard_error(explicit, "macro/recall", metrics) == pytest.approx(expected, abs=1e-12)
    assert standard_error(missing, "macro/recall", metrics) == pytest.approx(expected, abs=1e-12)
