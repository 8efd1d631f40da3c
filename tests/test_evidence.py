"""Every report names the evidence its numbers rest on: one sentence per cassette kind."""

from __future__ import annotations

import pytest

from extraction_eval.evidence import evidence_line, run_description
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
    """The text docs/tracking.md shows ("The run description", there for the full subset) and whose
    evidence sentence docs/data-format.md shows in run.json, written out rather than rebuilt from
    NOT_PROVEN and evidence_line."""
    text = run_description(
        "oracle_aligned_expected_json", model="gpt-4o-mini", provider="openai", gold_version="v1", subset="fast"
    )
    assert text == (
        "extraction-eval of openai/gpt-4o-mini on gold v1 (fast subset).\n"
        "\n"
        "Evidence: oracle-aligned cassettes (oracle_aligned_expected_json). The cassettes embed the expected JSON, "
        "so these numbers test the scoring, replay and gate wiring, not the model; a perfect score here is not a "
        "quality claim.\n"
        "\n"
        "What the numbers do not prove:\n"
        "- that live model precision or recall is 1.0;\n"
        "- that synthetic conversations represent customer traffic;\n"
        "- that extraction is safe against prompt injection or poisoned memory content;\n"
        "- that vLLM is benchmarked, GPU capacity exists, or latency fits the queue budget;\n"
        "- that a passing gate covers embedding quality, retrieval quality, or end-to-end answer quality."
    )


def test_evidence_from_the_tags_of_a_run_on_edited_cassettes_says_edited() -> None:
    # issue 13: edited cassettes are never described as oracle-aligned, in any report (the gate's
    # gate.md, `baseline show`, a rescored run read their run's tags, not the replay)
    from extraction_eval.evidence import evidence_from_tags

    sha = "ab" * 32
    tags = {
        "cassette_kind": "oracle_aligned_expected_json",
        "model": "gpt-4o-mini",
        "cassettes_edited": "true",
        "cassette_file_sha256": sha,
    }
    assert evidence_from_tags(tags) == (
        "Evidence: EDITED cassettes: the replayed answers are not what the manifest records "
        "(cassette file sha256 abababababab…). The manifest calls them oracle_aligned_expected_json, "
        "but the answers replayed are not that: these numbers describe hand-edited answers, "
        "neither the expected JSON nor a recorded model."
    )
    assert evidence_from_tags({**tags, "cassettes_edited": "false"}) == evidence_line(
        "oracle_aligned_expected_json", model="gpt-4o-mini"
    )
    assert evidence_from_tags({"model": "m"}) == evidence_line(None)
