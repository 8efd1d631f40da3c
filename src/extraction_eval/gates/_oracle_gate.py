"""The oracle gate: a pull request that changes the contract cannot keep oracle cassettes quietly.

The contract changed when the prompt or schema hash of the code at HEAD differs from
the hashes in the manifest at the base revision. If it changed and the manifest at
HEAD still says ``oracle_aligned_expected_json``, the gate fails unless the pull
request body has a line that is exactly ``EXTRACTION_EVAL_ORACLE_OK=1``. Without the
token it passes only when the cassettes were re-recorded live: manifest kind
``live_openai_recorded``, every cassette of that kind with the HEAD hashes, and the
cassette file changed against the base. Editing the manifest's hashes alone never
passes, and a manifest that claims a live kind its cassettes do not back fails always.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .._exceptions import CannotEvaluate, ConfigurationError, GoldDataError
from .._git import resolve_rev, show_file
from .._settings import pr_body
from ..contract import prompt_sha256, schema_sha256
from ..gold import CASSETTES_FILE, MANIFEST_FILE, CassetteManifest, load_cassettes, load_manifest
from ..vocab import CassetteKind
from ._gate_run import publish_summary

TOKEN = "EXTRACTION_EVAL_ORACLE_OK=1"


@dataclass(frozen=True)
class OracleGateResult:
    passed: bool
    reasons: tuple[str, ...]

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def markdown(self) -> str:
        """The report printed and appended to the job summary."""
        title = "PASS" if self.passed else "FAIL"
        return f"## extraction-eval oracle gate: {title}\n\n" + "\n".join(f"- {r}" for r in self.reasons) + "\n"


def has_token(body: str | None) -> bool:
    """Only a line that is exactly the token counts (a CRLF line ending is allowed)."""
    if not body:
        return False
    return any(line.rstrip("\r") == TOKEN for line in body.split("\n"))


def _base_manifest(root: Path, base: str, path: Path) -> CassetteManifest | None:
    raw = show_file(root, base, path)
    if raw is None:
        return None
    try:
        return CassetteManifest.model_validate(json.loads(raw))
    except ValueError as exc:
        raise CannotEvaluate(f"{path} at {base!r} is not a valid manifest: {exc}") from None


def oracle_gate(base: str, gold_dir: Path, pr_body: str | None) -> OracleGateResult:
    """Decide the oracle gate for the working tree (the current directory) against ``base``."""
    root = Path.cwd()
    try:
        base_sha = resolve_rev(root, base)
    except (ConfigurationError, OSError, subprocess.SubprocessError) as exc:  # unknown revision, no git
        raise CannotEvaluate(str(exc)) from None
    manifest_path = gold_dir / MANIFEST_FILE
    cassette_path = gold_dir / CASSETTES_FILE
    try:
        head = load_manifest(manifest_path)
        cassettes = [c for _, c in load_cassettes(cassette_path)]
    except GoldDataError as exc:
        raise CannotEvaluate(str(exc)) from None
    before = _base_manifest(root, base_sha, manifest_path)
    code = (prompt_sha256(), schema_sha256())
    reasons: list[str] = []

    if head.cassette_kind is CassetteKind.LIVE_RECORDED:
        not_live = [c.conversation_id for c in cassettes if c.cassette_kind is not CassetteKind.LIVE_RECORDED]
        other_hash = [c.conversation_id for c in cassettes if (c.prompt_sha256, c.schema_sha256) != code]
        if not_live:
            reasons.append(
                f"the manifest claims live_openai_recorded but {len(not_live)} cassette(s) say "
                f"otherwise ({not_live[:5]!r}); re-record them (`run --mode record`)."
            )
        if other_hash:
            reasons.append(
                f"{len(other_hash)} cassette(s) were recorded under another prompt or schema hash "
                f"than the code at HEAD ({other_hash[:5]!r}); re-record them."
            )
        if reasons:
            return OracleGateResult(False, tuple(reasons))

    if before is None:
        return OracleGateResult(
            True, (f"{manifest_path} does not exist at {base!r}: a new gold folder, no contract to compare.",)
        )
    changed = (before.prompt_sha256, before.schema_sha256) != code
    if not changed:
        return OracleGateResult(True, ("the prompt and schema hashes at HEAD match the base manifest.",))
    what = []
    if before.prompt_sha256 != code[0]:
        what.append(f"prompt {before.prompt_sha256[:12]}… -> {code[0][:12]}…")
    if before.schema_sha256 != code[1]:
        what.append(f"schema {before.schema_sha256[:12]}… -> {code[1][:12]}…")
    summary = "the contract changed in this pull request: " + ", ".join(what) + "."

    if head.cassette_kind is CassetteKind.ORACLE_ALIGNED:
        if has_token(pr_body):
            return OracleGateResult(
                True,
                (
                    summary,
                    f"the cassettes are still oracle-aligned; the pull request body carries {TOKEN}, "
                    "the reviewer-visible exception.",
                ),
            )
        return OracleGateResult(
            False,
            (
                summary,
                "the cassettes are still oracle-aligned, so a perfect score would prove nothing about "
                f"the new contract. Re-record them live (`run --mode record`), or add a line that is "
                f"exactly {TOKEN} to the pull request body for a reviewer to see. Bumping the "
                "manifest's hashes does not satisfy this gate.",
            ),
        )
    base_cassettes = show_file(root, base_sha, cassette_path)
    if base_cassettes is not None and base_cassettes == cassette_path.read_bytes():
        return OracleGateResult(
            False,
            (
                summary,
                f"the manifest says live_openai_recorded but {cassette_path} is unchanged against the "
                "base: the cassettes were not re-recorded.",
            ),
        )
    return OracleGateResult(
        True,
        (
            summary,
            "the cassettes were re-recorded live under the new contract (every cassette "
            "live_openai_recorded with the HEAD hashes).",
        ),
    )


def read_pr_body(pr_body_file: Path | None) -> str | None:
    """The pull request body: ``--pr-body-file``, else ``EXTRACTION_EVAL_PR_BODY``."""
    if pr_body_file is None:
        return pr_body()
    if not pr_body_file.is_file():
        raise ConfigurationError(f"--pr-body-file {str(pr_body_file)!r} does not exist.")
    return pr_body_file.read_text(encoding="utf-8")


def run_oracle_gate(base: str, gold_dir: Path, pr_body_file: Path | None = None) -> tuple[OracleGateResult, str]:
    """The whole oracle gate: read the body, decide, render, append to the job summary."""
    result = oracle_gate(base, gold_dir, read_pr_body(pr_body_file))
    markdown = result.markdown()
    publish_summary(markdown)
    return result, markdown
