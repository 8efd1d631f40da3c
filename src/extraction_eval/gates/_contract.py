"""The contract gate: prompt, schema and gold files must match what the manifest recorded.

In ``cassette``, ``smoke`` and ``fast`` modes a prompt or schema hash that differs
from the manifest stops the run with both hashes and the fix.
``EXTRACTION_EVAL_ALLOW_CONTRACT_DRIFT=1`` lets a local run go on past prompt or
schema drift (replaying the cassettes as recorded) and tags it
``contract_override=true``; the regression gate refuses such a run, and under
``CI`` the override is an error. Gold file drift has no override.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._exceptions import ContractDriftError, GoldDataError
from .._settings import ALLOW_DRIFT_VAR, allow_contract_drift
from ..contract import prompt_sha256, schema_sha256
from ..gold import Cassette, CassetteManifest, GoldSet, Problem, check_gold


@dataclass(frozen=True)
class ContractVerdict:
    """Passed, or passed by override (with what drifted)."""

    override: bool
    drift: tuple[str, ...]


def raise_problems(problems: Sequence[Problem]) -> None:
    """Hash drift raises ContractDriftError, anything else GoldDataError."""
    drift = [p.message for p in problems if p.kind == "drift"]
    data = [p.message for p in problems if p.kind != "drift"]
    if drift:
        raise ContractDriftError("contract gate: gold files drifted:\n" + "\n".join(drift + data))
    if data:
        raise GoldDataError("\n".join(data))


def check_cassette_rows(manifest: CassetteManifest, cassettes: Sequence[Cassette]) -> list[Problem]:
    """Every cassette must agree with the manifest's kind, model and hashes."""
    problems = []
    for cassette in cassettes:
        for name in ("cassette_kind", "prompt_sha256", "schema_sha256", "model"):
            have, want = getattr(cassette, name), getattr(manifest, name)
            if have != want:
                problems.append(
                    Problem(
                        "data",
                        f"cassette {cassette.conversation_id!r}: {name} is {str(have)!r} but the "
                        f"manifest says {str(want)!r}; the manifest must describe its cassettes: "
                        "re-record or re-generate them.",
                    )
                )
    return problems


def contract_gate(gold: GoldSet, manifest: CassetteManifest, cassettes: Sequence[Cassette]) -> ContractVerdict:
    """Run every replay-mode check; raise on drift unless the local override is set."""
    raise_problems([*check_gold(gold, manifest, cassettes), *check_cassette_rows(manifest, cassettes)])
    drift = []
    for label, recorded, current in (
        ("system prompt", manifest.prompt_sha256, prompt_sha256()),
        ("BatchExtractionResult schema", manifest.schema_sha256, schema_sha256()),
    ):
        if recorded != current:
            drift.append(f"{label}: manifest {recorded}, code {current}")
    if not drift:
        return ContractVerdict(override=False, drift=())
    if allow_contract_drift():
        return ContractVerdict(override=True, drift=tuple(drift))
    raise ContractDriftError(
        "contract gate: the extraction contract changed since the cassettes were made:\n  "
        + "\n  ".join(drift)
        + "\nReplaying them would score answers to a request nobody sends any more. Fix: "
        "re-record live cassettes (`EXTRACTION_EVAL_MODE=record extraction-eval run --mode "
        "record`) or, while they are oracle-aligned, re-generate them (`extraction-eval "
        "cassettes oracle`) and mark the pull request EXTRACTION_EVAL_ORACLE_OK=1 for review. "
        f"For a local look only: {ALLOW_DRIFT_VAR}=1 (never in CI; the regression gate refuses "
        "such runs)."
    )
