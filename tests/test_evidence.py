"""Every report names the evidence its numbers rest on: one sentence per cassette kind."""

from __future__ import annotations

import pytest

from extraction_eval.evidence import NOT_PROVEN, evidence_line, run_description
from extraction_eval.vocab import CassetteKind


@pytest.mark.parametrize("kind", list(CassetteKind))
def test_each_kind_names_itself_and_differs(kind: CassetteKind) -> None:
    line = evidence_line(kind.value, model="gpt-4o-mini")
    assert line.startswith("Evidence: ") and f"({kind.value})" in line
    others = {evidence_line(k.value, model="gpt-4o-mini") for k in CassetteKind if k is not kind}
    assert line not in others


def test_oracle_aligned_says_it_is_not_a_quality_claim() -> None:
    line = evidence_line("oracle_aligned_expected_json", model="gpt-4o-mini")
    assert "not the model" in line and "a perfect score here is not a quality claim" in line
    assert "gpt-4o-mini" not in line  # the oracle is nobody's model


def test_live_kinds_name_the_model() -> None:
    assert "recorded from live calls to gpt-4o-mini" in evidence_line("live_openai_recorded", model="gpt-4o-mini")
    assert "never gated" in evidence_line("live_call", model="Qwen/Qwen2.5-14B-Instruct")
    assert "live calls to Qwen/Qwen2.5-14B-Instruct" in evidence_line("live_call", model="Qwen/Qwen2.5-14B-Instruct")


@pytest.mark.parametrize("kind", [None, "", "hand_written"])
def test_unknown_or_missing_kind_claims_nothing(kind: str | None) -> None:
    assert evidence_line(kind) == (
        "Evidence: not measured yet (no cassette kind recorded); there is no number to trust."
    )


def test_run_description_whole() -> None:
    text = run_description(
        "oracle_aligned_expected_json", model="gpt-4o-mini", provider="openai", gold_version="v1", subset="fast"
    )
    lines = text.split("\n")
    assert lines[0] == "extraction-eval of openai/gpt-4o-mini on gold v1 (fast subset)."
    assert lines[1] == "" and lines[2] == evidence_line("oracle_aligned_expected_json")
    assert lines[3:5] == ["", "What the numbers do not prove:"]
    assert lines[5:] == [f"- {item}" for item in NOT_PROVEN]
    assert len(NOT_PROVEN) == 5 and "prompt injection" in NOT_PROVEN[2]
