"""One evaluation, end to end: gold, contract gate, answers, score, MLflow run, output files."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._exceptions import ContractDriftError
from .._git import git_state
from .._jsonio import atomic_write_bytes, atomic_write_text, dumps_line, write_json
from .._settings import hide_uri_password, mlflow_run_id, project_root, tracking_uri
from ..cassettes import ReplayPlan
from ..contract import SAMPLING, prompt_sha256, schema_sha256
from ..evidence import evidence_line, run_description
from ..gates._contract import contract_gate, raise_problems
from ..gold import (
    CONVERSATIONS_FILE,
    EXPECTED_FILE,
    MANIFEST_FILE,
    Cassette,
    Conversation,
    GoldSet,
    load_gold,
)
from ..gold._check import check_file_hashes, check_pinned, read_cassettes
from ..scoring import DEFAULT_MATCHER, Case, ExpectedItem, Memory, ScoreReport, matcher_id, parse_response, score
from ..tracking._log import DatasetInfo, LoggedRun, log_eval_run
from ..tracking._names import (
    TAG_CASSETTE_KIND,
    TAG_ENFORCEMENT,
    TAG_GIT_COMMIT,
    TAG_GIT_DIRTY,
    TAG_GOLD_VERSION,
    TAG_MATCHER,
    TAG_MODE,
    TAG_MODEL,
    TAG_OVERRIDE,
    TAG_PROMPT,
    TAG_PROVIDER,
    TAG_RUN_KIND,
    TAG_SCHEMA,
    TAG_SUBSET,
)
from ..vocab import CassetteKind, Mode
from ._plan import RunPlan, plan_run
from ._records import CallRecord, provenance_tags, usage_metrics, usage_tokens


@dataclass(frozen=True)
class RunOptions:
    """Knobs of live calls and the failure bound (replay ignores the live ones)."""

    max_failure_rate: float | None = None
    concurrency: int = 8
    timeout_s: float = 60.0
    max_retries: int = 4
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    progress: bool | None = None


@dataclass(frozen=True)
class Collected:
    records: dict[str, CallRecord]
    cassette_kind: CassetteKind
    unused: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunResult:
    plan: RunPlan
    logged: LoggedRun
    metrics: dict[str, float]
    report: ScoreReport
    cassette_kind: CassetteKind
    override: bool
    failed: bool
    notes: tuple[str, ...]
    tags: dict[str, str]


def replay_records(cassettes: dict[str, Cassette]) -> dict[str, CallRecord]:
    """Every replayed answer goes through the same parse path as a live one."""
    out = {}
    for cid, cassette in cassettes.items():
        tokens_in, tokens_out = usage_tokens(cassette.usage)
        out[cid] = CallRecord(
            conversation_id=cid,
            outcome=parse_response(cassette.response, finish_reason=cassette.finish_reason, refusal=cassette.refusal),
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            system_fingerprint=cassette.system_fingerprint,
            recorded_at=cassette.recorded_at,
        )
    return out


def build_cases(gold: GoldSet, selected: Sequence[Conversation], records: dict[str, CallRecord]) -> list[Case]:
    cases = []
    for conversation in selected:
        cid = conversation.conversation_id
        expected = tuple(
            ExpectedItem(
                m.memory_id,
                Memory(m.content, frozenset(m.categories), m.temporal_kind, m.supersedes),
            )
            for m in gold.by_conversation[cid]
        )
        cases.append(Case(cid, expected, records[cid].outcome))
    return cases


def _check_inputs(gold: GoldSet) -> None:
    """Live modes send the gold inputs, so they must be the pinned, recorded ones too."""
    problems = check_pinned(gold)
    if gold.manifest is not None:
        problems += check_file_hashes(gold, gold.manifest, (CONVERSATIONS_FILE, EXPECTED_FILE))
    raise_problems(problems)


def _dataset(gold: GoldSet) -> DatasetInfo:
    digest_source = b"".join((gold.path / name).read_bytes() for name in (CONVERSATIONS_FILE, EXPECTED_FILE))
    rows = [
        {
            "conversation_id": c.conversation_id,
            "session_date": c.session_date,
            "turns": len(c.turns),
            "expected_memories": len(gold.by_conversation[c.conversation_id]),
        }
        for c in gold.conversations
    ]
    return DatasetInfo(
        name=f"gold-{gold.version}",
        digest=hashlib.sha256(digest_source).hexdigest()[:16],
        source=str(gold.path.resolve()),
        rows=rows,
    )


def _replayed(plan: RunPlan, kind: CassetteKind, replay: ReplayPlan) -> Collected:
    notes: tuple[str, ...] = ()
    if replay.unused:
        notes = (f"{len(replay.unused)} cassette(s) not used by subset {plan.subset.value!r}.",)
    return Collected(
        records=replay_records(dict(replay.cassettes)),
        cassette_kind=kind,
        unused=replay.unused,
        notes=notes,
    )


def run_eval(mode: Mode, gold_dir: Path, output_dir: Path, options: RunOptions | None = None) -> RunResult:
    """Load, gate, answer, score, log and write: one evaluation, one MLflow run."""
    options = options or RunOptions()
    gold = load_gold(gold_dir, require_manifest=mode.is_replay)
    plan = plan_run(mode, gold_dir, output_dir, gold.manifest)
    selected = gold.subset_conversations(plan.subset)

    override = False
    notes: list[str] = []
    if mode.is_replay:
        if gold.manifest is None:  # pragma: no cover - load_gold requires it
            raise ContractDriftError(f"{gold_dir / MANIFEST_FILE}: no manifest")
        cassettes = read_cassettes(gold, gold.manifest)  # a missing file names the path and the fix
        verdict = contract_gate(gold, gold.manifest, cassettes, selected)
        override = verdict.override
        notes += [f"CONTRACT OVERRIDE: {d}" for d in verdict.drift]
        collected = _replayed(plan, gold.manifest.cassette_kind, verdict.replay)
    else:
        _check_inputs(gold)
        from ..providers import collect_live

        collected = collect_live(plan, gold, selected, options)
    notes += collected.notes
    report = score(build_cases(gold, selected, collected.records), DEFAULT_MATCHER)
    records = [collected.records[c.conversation_id] for c in selected]
    metrics = {**report.metrics, **usage_metrics(records, plan.model)}
    failed = options.max_failure_rate is not None and metrics["failures/rate"] > options.max_failure_rate
    if failed:
        notes.append(
            f"failure rate {metrics['failures/rate']:.3f} is above --max-failure-rate "
            f"{options.max_failure_rate}: the run is marked FAILED."
        )

    output_dir.mkdir(parents=True, exist_ok=True)
    metrics_path = output_dir / "metrics.json"
    write_json(metrics_path, dict(sorted(metrics.items())))
    rows = []
    for conversation_score, record in zip(report.conversations, records, strict=True):
        row: dict[str, Any] = conversation_score.to_json()
        row["usage"] = {
            "input_tokens": record.input_tokens,
            "output_tokens": record.output_tokens,
            "latency_s": record.latency_s,
            "retries": record.retries,
        }
        rows.append(row)
    per_conversation = output_dir / "per_conversation.jsonl"
    atomic_write_text(per_conversation, "".join(dumps_line(r) + "\n" for r in rows))

    root = project_root()
    git = git_state(root)
    kind = collected.cassette_kind
    tags = {
        TAG_RUN_KIND: "eval",
        TAG_GOLD_VERSION: gold.version,
        TAG_PROMPT: prompt_sha256(),
        TAG_SCHEMA: schema_sha256(),
        TAG_CASSETTE_KIND: kind.value,
        TAG_ENFORCEMENT: plan.enforcement.value,
        TAG_PROVIDER: plan.provider.value,
        TAG_MODEL: plan.model,
        TAG_MODE: plan.mode.value,
        TAG_SUBSET: plan.subset.value,
        TAG_MATCHER: matcher_id(DEFAULT_MATCHER),
        TAG_OVERRIDE: "true" if override else "false",
        TAG_GIT_DIRTY: "unknown" if git.dirty is None else str(git.dirty).lower(),
        **provenance_tags(records),
        **collected.tags,
    }
    if git.commit:
        tags[TAG_GIT_COMMIT] = git.commit
    if override and gold.manifest is not None:
        tags["manifest_prompt_sha256"] = gold.manifest.prompt_sha256
        tags["manifest_schema_sha256"] = gold.manifest.schema_sha256
    params = {f"sampling.{k}": str(v) for k, v in SAMPLING.items()}
    params["gold_dir"] = str(gold_dir)
    params["conversations"] = str(len(selected))
    if not mode.is_replay:
        params["concurrency"] = str(options.concurrency)
        params["max_retries"] = str(options.max_retries)
        params["timeout_s"] = str(options.timeout_s)
    artifacts = [metrics_path, per_conversation]
    # The manifest the run used, beside its numbers in the output folder too (and never
    # an older run's copy beside these numbers when this gold folder has none).
    manifest_copy = output_dir / MANIFEST_FILE
    if (gold_dir / MANIFEST_FILE).exists():
        atomic_write_bytes(manifest_copy, (gold_dir / MANIFEST_FILE).read_bytes())
        artifacts.append(manifest_copy)
    else:
        manifest_copy.unlink(missing_ok=True)
    description = run_description(
        kind.value,
        model=plan.model,
        provider=plan.provider.value,
        gold_version=gold.version,
        subset=plan.subset.value,
    )
    if override:
        description += (
            "\n\nCONTRACT OVERRIDE: replayed cassettes recorded under another prompt or schema; "
            "the regression gate refuses this run."
        )
    table = [
        {
            "conversation_id": r["conversation_id"],
            "status": r["status"],
            "expected": r["expected"],
            "predicted": r["predicted"],
            "matches": r["matches"],
            "errors": r["error"] or "",
        }
        for r in rows
    ]
    # An older run's run.json must not outlive a run that the store refuses: the gate would judge it.
    (output_dir / "run.json").unlink(missing_ok=True)
    logged = log_eval_run(
        tracking_uri=tracking_uri(),
        experiment_name=plan.experiment,
        run_id=mlflow_run_id(),
        run_name=f"{plan.mode.value}-{plan.provider.value}-{gold.version}",
        tags=tags,
        params=params,
        metrics=metrics,
        description=description,
        artifacts=artifacts,
        table_rows=table,
        dataset=_dataset(gold),
        failed=failed,
    )
    if plan.experiment != logged.experiment_name:
        notes.append(
            f"this {plan.provider.value} run was logged to experiment {logged.experiment_name!r} "
            f"(chosen by `mlflow run`); the contract's experiment is {plan.experiment!r}."
        )
    write_json(
        output_dir / "run.json",
        {
            "run_id": logged.run_id,
            "experiment_id": logged.experiment_id,
            "experiment_name": logged.experiment_name,
            "tracking_uri": hide_uri_password(logged.tracking_uri, logged.tracking_uri),
            "status": logged.status,
            "evidence": evidence_line(kind.value, model=plan.model),
            "tags": tags,
        },
    )
    return RunResult(plan, logged, metrics, report, kind, override, failed, tuple(notes), tags)


def summary_lines(result: RunResult) -> list[str]:
    """What `run` prints: identity, evidence, the headline metrics."""
    m = result.metrics
    keys = [
        "macro/precision",
        "macro/recall",
        "macro/f1",
        "strict/precision",
        "strict/recall",
        "category_accuracy",
        "temporal_accuracy",
        "multilabel/exact_match",
        "supersession/recall",
        "supersession/stale_leak_rate",
        "negatives/false_positive_rate",
        "failures/rate",
    ]
    lines = [
        f"run {result.logged.run_id} in experiment {result.logged.experiment_name!r} "
        f"({result.logged.status}) at {hide_uri_password(result.logged.tracking_uri, result.logged.tracking_uri)}",
        f"provider {result.plan.provider.value}, model {result.plan.model}, mode "
        f"{result.plan.mode.value}, subset {result.plan.subset.value}, enforcement "
        f"{result.plan.enforcement.value}",
        evidence_line(result.cassette_kind.value, model=result.plan.model),
        "",
    ]
    width = max(len(k) for k in keys)
    for key in keys:
        value = m.get(key)
        lines.append(f"  {key:<{width}}  {'(no cases)' if value is None else f'{value:.4f}'}")
    lines.append(
        f"  counts: {int(m['counts/conversations'])} conversations, {int(m['counts/expected'])} "
        f"expected, {int(m['counts/predicted'])} predicted, {int(m['counts/matched'])} matched, "
        f"{int(m['counts/failed'])} failed"
    )
    lines += [f"note: {n}" for n in result.notes]
    return lines
