"""The contract gate: prompt, schema and gold files must match what the manifest recorded.

In ``cassette``, ``smoke`` and ``fast`` modes a prompt or schema hash that differs
from the manifest stops the run with both hashes and the fix.
``EXTRACTION_EVAL_ALLOW_CONTRACT_DRIFT=1`` lets a local run go on past prompt or
schema drift (replaying the cassettes as recorded) and tags it
``contract_override=true``; the regression gate refuses such a run, and under
``CI`` the override is an error. Gold file drift has no override.

The same report carries what replay would refuse (a missing, mismatched or unknown
cassette, compared with the closest recording), so one error lists everything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .._exceptions import CassetteError, ContractDriftError, GoldDataError
from .._settings import ALLOW_DRIFT_VAR, allow_contract_drift
from ..cassettes import ReplayPlan, plan_replay
from ..contract import prompt_sha256, schema_sha256
from ..gold import (
    CASSETTES_FILE,
    PINNED_GOLD,
    Cassette,
    CassetteManifest,
    Conversation,
    GoldSet,
    Problem,
    ProblemKind,
    check_baseline_version,
    check_file_hashes,
    check_gold,
    check_pinned,
    load_gold,
    raise_problems,
    read_cassettes,
    rewrite_cassettes_command,
)

#: How many line numbers a grouped problem lists before it says "and N more".
_SHOWN_LINES = 5


@dataclass(frozen=True)
class ContractVerdict:
    """Passed, or passed by override (with what drifted); ``replay`` is the checked replay plan."""

    override: bool
    drift: tuple[str, ...]
    replay: ReplayPlan


def check_cassette_rows(gold_dir: Path, manifest: CassetteManifest, cassettes: Sequence[Cassette]) -> list[Problem]:
    """Every cassette must agree with the manifest's kind, model and hashes.

    One problem per field, at the first row that differs, with how many rows differ and
    their lines (the n-th cassette is on line n: JSONL allows no empty line).
    """
    path = gold_dir / CASSETTES_FILE
    rewrite = rewrite_cassettes_command(gold_dir, [manifest.cassette_kind, *(c.cassette_kind for c in cassettes)])
    problems = []
    for name in ("cassette_kind", "prompt_sha256", "schema_sha256", "model"):
        want = getattr(manifest, name)
        rows = [(n, c) for n, c in enumerate(cassettes, start=1) if getattr(c, name) != want]
        if not rows:
            continue
        (first, cassette), lines = rows[0], [n for n, _ in rows]
        listed = ", ".join(map(str, lines[:_SHOWN_LINES])) + (
            f" and {len(lines) - _SHOWN_LINES} more" if len(lines) > _SHOWN_LINES else ""
        )
        count = (
            f" ({len(rows)} of {len(cassettes)} cassettes differ in {name}: lines {listed})" if len(rows) > 1 else ""
        )
        problems.append(
            Problem(
                ProblemKind.DATA,
                f"{path}:{first}: cassette {cassette.conversation_id!r}: {name} is "
                f"{str(getattr(cassette, name))!r} but the manifest says {str(want)!r}{count}; the manifest "
                f"must describe its cassettes: rewrite both with {rewrite}.",
            )
        )
    return problems


def replay_mode_problems(
    gold: GoldSet,
    manifest: CassetteManifest,
    cassettes: Sequence[Cassette],
    selected: Sequence[Conversation] | None = None,
) -> tuple[list[Problem], ReplayPlan | None]:
    """Every check a replay makes before it starts (``gold validate`` runs the same), and the
    replay plan over ``selected`` (default all) when the cassettes allow one.

    Replay problems are what replay would refuse: missing, mismatched or unknown cassettes.
    """
    problems = [*check_gold(gold, manifest, cassettes), *check_cassette_rows(gold.cassette_dir, manifest, cassettes)]
    try:
        replay = plan_replay(
            gold.file_path(CASSETTES_FILE),
            cassettes,
            gold.conversations,
            gold.conversations if selected is None else selected,
            manifest.model,
            kind=manifest.cassette_kind,
        )
    except CassetteError as exc:
        return [*problems, Problem(ProblemKind.REPLAY, str(exc))], None
    return problems, replay


@dataclass(frozen=True)
class GoldReport:
    """What ``gold validate`` found: the folder's counts and every problem a replay would refuse."""

    gold: GoldSet
    cassettes: tuple[Cassette, ...]
    problems: tuple[Problem, ...]

    def lines(self) -> list[str]:
        """The counts, one per line."""
        data, manifest = self.gold, self.gold.manifest
        assert manifest is not None  # validate_gold_folder loads it
        stats = data.stats()
        width = max(len(k) for k in stats)
        lines = [f"gold {data.version!r} at {data.path}"]
        lines += [f"  {key:<{width}}  {value}" for key, value in stats.items()]
        lines.append(f"  {'cassettes':<{width}}  {len(self.cassettes)} ({manifest.cassette_kind.value})")
        lines.append(f"  {'subset smoke':<{width}}  {len(manifest.subsets.smoke)}")
        lines.append(f"  {'subset fast':<{width}}  {len(manifest.subsets.fast)}")
        pinned = "pinned" if data.version in PINNED_GOLD else "not pinned (no baseline yet)"
        lines.append(f"  {'frozen inputs':<{width}}  {pinned}")
        return lines

    def check(self) -> None:
        """Raise GoldDataError listing every problem, if there is one."""
        if self.problems:
            raise GoldDataError(f"{len(self.problems)} problem(s):\n" + "\n".join(p.message for p in self.problems))


def validate_gold_folder(gold_dir: Path) -> GoldReport:
    """Every file, row, count, subset, pinned hash and cassette request of a gold folder, and its
    baseline file's gold version: what ``gold validate`` checks (a replay refuses the same)."""
    gold = load_gold(gold_dir)
    assert gold.manifest is not None  # load_gold requires it
    cassettes = read_cassettes(gold, gold.manifest)
    problems, _ = replay_mode_problems(gold, gold.manifest, cassettes)
    problems += check_baseline_version(gold)
    return GoldReport(gold, tuple(cassettes), tuple(problems))


def contract_gate(
    gold: GoldSet,
    manifest: CassetteManifest,
    cassettes: Sequence[Cassette],
    selected: Sequence[Conversation] | None = None,
) -> ContractVerdict:
    """Run every replay-mode check, over ``selected`` (default all); raise on drift unless the override is set."""
    # Read first: under CI the override is an error whenever it is set, drift or not.
    override_allowed = allow_contract_drift()
    problems, replay = replay_mode_problems(gold, manifest, cassettes, selected)
    raise_problems(problems)
    assert replay is not None  # no problem means replay planned
    drift = []
    for label, recorded, current in (
        ("system prompt", manifest.prompt_sha256, prompt_sha256()),
        ("BatchExtractionResult schema", manifest.schema_sha256, schema_sha256()),
    ):
        if recorded != current:
            drift.append(f"{label}: manifest {recorded}, code {current}")
    if not drift:
        return ContractVerdict(override=False, drift=(), replay=replay)
    if override_allowed:
        return ContractVerdict(override=True, drift=tuple(drift), replay=replay)
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


def check_live_inputs(gold: GoldSet) -> None:
    """Live modes send the gold inputs, so they must be the pinned, recorded ones too."""
    problems = check_pinned(gold)
    if gold.manifest is not None:
        problems += check_file_hashes(gold, gold.manifest, gold.input_files)
    raise_problems(problems)
