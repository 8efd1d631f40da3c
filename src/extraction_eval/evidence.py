"""What a number rests on: the sentence every report carries about its evidence."""

from __future__ import annotations

from collections.abc import Mapping

from .mlflow_names import TAG_ANSWER_SET, TAG_CASSETTE_FILE, TAG_CASSETTE_KIND, TAG_CASSETTES_EDITED, TAG_MODEL, flag
from .vocab import CassetteKind

NOT_PROVEN: tuple[str, ...] = (
    "that live model precision or recall is 1.0;",
    "that synthetic conversations represent customer traffic;",
    "that extraction is safe against prompt injection or poisoned memory content;",
    "that vLLM is benchmarked, GPU capacity exists, or latency fits the queue budget;",
    "that a passing gate covers embedding quality, retrieval quality, or end-to-end answer quality.",
)


def evidence_line(
    kind: str | None, *, model: str | None = None, edits: str | None = None, answer_set: str | None = None
) -> str:
    """One sentence: which kind of evidence the numbers rest on and what that means.

    ``edits`` names how the replayed cassettes differ from what the manifest records
    (``evaluation.ReplayedCassettes.edits``): such a run is never called oracle-aligned
    or recorded, whatever its manifest says.
    """
    if edits is not None:
        return (
            f"Evidence: EDITED cassettes: {edits}. The manifest calls them {kind or 'unmeasured'}, "
            "but the answers replayed are not that: these numbers describe hand-edited answers, "
            "neither the expected JSON nor a recorded model."
        )
    if kind == CassetteKind.ORACLE_ALIGNED.value:
        return (
            "Evidence: oracle-aligned cassettes (oracle_aligned_expected_json). The cassettes "
            "embed the expected JSON, so these numbers test the scoring, replay and gate "
            "wiring, not the model; a perfect score here is not a quality claim."
        )
    if kind == CassetteKind.LIVE_RECORDED.value:
        return (
            f"Evidence: cassettes recorded from live calls to {model or 'the model'} "
            "(live_openai_recorded), replayed deterministically. The numbers describe that "
            "recording of that model under that prompt and schema on the synthetic gold set."
        )
    if kind == CassetteKind.HAND_WRITTEN_BLIND.value:
        named = f" (answer set {answer_set!r})" if answer_set else ""
        return (
            f"Evidence: HAND-WRITTEN answers{named}, not a model recording (hand_written_blind). A person "
            "wrote each answer from the system prompt, the schema and the conversation alone, blind to the "
            "gold rows; these numbers measure the harness (its matcher and metrics) on realistic answers, "
            "and say nothing about any model."
        )
    if kind == CassetteKind.LIVE_CALL.value:
        return (
            f"Evidence: live calls to {model or 'the model'} made by this run (live_call): a new "
            "evidence event, reported and compared, never gated."
        )
    return "Evidence: not measured yet (no cassette kind recorded); there is no number to trust."


def edits_from_tags(tags: Mapping[str, str]) -> str | None:
    """What ``evidence_line`` needs as ``edits`` for a logged run tagged ``cassettes_edited``."""
    if tags.get(TAG_CASSETTES_EDITED) != flag(True):
        return None
    sha = tags.get(TAG_CASSETTE_FILE)
    return "the replayed answers are not what the manifest records" + (
        f" (cassette file sha256 {sha[:12]}…)" if sha else ""
    )


def evidence_from_tags(tags: Mapping[str, str]) -> str:
    """The evidence sentence of a logged run, from its tags alone (the gate's report, ``baseline
    show``, a rescored run): a run tagged ``cassettes_edited=true`` is EDITED, whatever its
    cassette kind says, as the run itself was described."""
    return evidence_line(
        tags.get(TAG_CASSETTE_KIND),
        model=tags.get(TAG_MODEL),
        edits=edits_from_tags(tags),
        answer_set=tags.get(TAG_ANSWER_SET),
    )


def run_description(
    kind: str | None,
    *,
    model: str,
    provider: str,
    gold_version: str,
    subset: str,
    edits: str | None = None,
    answer_set: str | None = None,
) -> str:
    """The MLflow run description: what the numbers rest on and what they do not prove."""
    lines = [
        f"extraction-eval of {provider}/{model} on gold {gold_version} ({subset} subset).",
        "",
        evidence_line(kind, model=model, edits=edits, answer_set=answer_set),
        "",
        "What the numbers do not prove:",
        *(f"- {item}" for item in NOT_PROVEN),
    ]
    return "\n".join(lines)
