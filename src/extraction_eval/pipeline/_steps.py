"""The steps of ``run_eval`` that need the gates or MLflow (the others are in ``evaluation``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path

from .._exceptions import ContractDriftError
from .._settings import mlflow_run_id, tracking_uri
from ..contract import prompt_sha256, system_prompt
from ..evaluation import (
    Answer,
    CollectedAnswers,
    OutputFolder,
    RunFiles,
    RunOptions,
    RunPlan,
    ScoredRun,
    build_cases,
    collect_live,
    collect_record,
    collect_replay,
    memory_table_rows,
    output_error,
    write_outputs,
    write_run_json,
)
from ..evaluation._judging import JUDGMENTS_FILE, choose_matcher, is_judge, record_judgments
from ..evaluation._reviewing import is_reviewed, reviewed_matcher
from ..evaluation._traces import TraceRecord
from ..gates._contract_gate import ContractVerdict, check_live_inputs, contract_gate
from ..gold import MANIFEST_FILE, Conversation, GoldSet, read_cassettes
from ..scoring import Matcher, candidate_pairs
from ..tracking._log import MEMORY_TABLE_FILE, TABLE_FILE, LoggedRun, gold_dataset, log_eval_run
from ..vocab import Mode


def check_contract(plan: RunPlan, gold: GoldSet, selected: Sequence[Conversation]) -> ContractVerdict | None:
    """Replay: the contract gate over the selected conversations (raises on drift unless the
    local override is set). Live modes: the gold inputs they send are the pinned ones (None)."""
    if not plan.mode.is_replay:
        check_live_inputs(gold)
        return None
    if gold.manifest is None:  # pragma: no cover - load_gold requires it for replay
        raise ContractDriftError(f"{gold.path / MANIFEST_FILE}: no manifest")
    cassettes = read_cassettes(gold, gold.manifest)  # a missing file names the path and the fix
    return contract_gate(gold, gold.manifest, cassettes, selected)


def contract_notes(verdict: ContractVerdict | None) -> tuple[str, ...]:
    if verdict is None:
        return ()
    return tuple(f"CONTRACT OVERRIDE: {d}" for d in verdict.drift)


def collect_answers(
    plan: RunPlan,
    gold: GoldSet,
    selected: Sequence[Conversation],
    options: RunOptions,
    verdict: ContractVerdict | None,
) -> CollectedAnswers:
    """Replay the checked cassettes, or call the provider (recording cassettes in ``record``)."""
    if verdict is not None:
        assert gold.manifest is not None  # a verdict is for a manifest
        return collect_replay(plan, gold.manifest.cassette_kind, verdict.replay)
    if plan.mode is Mode.RECORD:
        return collect_record(plan, gold, options)
    return collect_live(plan, selected, options)


def choose_run_matcher(
    plan: RunPlan,
    gold: GoldSet,
    selected: Sequence[Conversation],
    answers: Mapping[str, Answer],
    options: RunOptions,
) -> Matcher:
    """``--matcher``: a registered matcher, or the judge. In ``record`` the judge is asked about
    every candidate pair with no recorded judgment (stored in the gold folder's judgments.jsonl);
    in every mode its judgments are then replayed, and a missing one fails closed."""
    if is_reviewed(options.matcher):
        return reviewed_matcher(gold, selected, answers)
    path = gold.path / JUDGMENTS_FILE
    command = f"extraction-eval run --mode record --matcher judge --gold {gold.path}"
    if is_judge(options.matcher) and plan.mode is Mode.RECORD:
        record_judgments(candidate_pairs(build_cases(gold, selected, answers)), path, command)
    return choose_matcher(options.matcher, path, command)


def log_run(
    plan: RunPlan,
    gold: GoldSet,
    selected: Sequence[Conversation],
    scored: ScoredRun,
    files: RunFiles,
    plots: Sequence[Path] | Callable[[], Sequence[Path]],
    *,
    tags: Mapping[str, str],
    params: Mapping[str, str],
    description: str,
    name: str,
    traces: Sequence[TraceRecord] = (),
) -> LoggedRun:
    """One MLflow run (or the one ``mlflow run`` created): tags, params, the metrics (the
    ``counts/`` keys are params), the scored conversations as a dataset, the output files, the
    plots (or the function that draws them, run while the rest is logged) and the
    per-conversation and per-memory tables."""
    return log_eval_run(
        tracking_uri=tracking_uri(),
        experiment_name=plan.experiment,
        run_id=mlflow_run_id(),
        run_name=name,
        tags=tags,
        params=params,
        metrics={k: v for k, v in scored.metrics.items() if not k.startswith("counts/")},
        description=description,
        artifacts=files.artifacts,
        tables={TABLE_FILE: files.table, MEMORY_TABLE_FILE: partial(memory_table_rows, scored)},
        dataset=gold_dataset(gold, selected, plan.subset.value),
        failed=scored.failed,
        plots=plots,
        prompt=(system_prompt(), prompt_sha256()),
        traces=traces,
    )


def experiment_notes(plan: RunPlan, logged: LoggedRun) -> tuple[str, ...]:
    if plan.experiment == logged.experiment_name:
        return ()
    return (
        f"this {plan.provider.value} run was logged to experiment {logged.experiment_name!r} "
        f"(chosen by `mlflow run`); the contract's experiment is {plan.experiment!r}.",
    )


def write_staged(folder: OutputFolder, gold_dir: Path, scored: ScoredRun) -> RunFiles:
    """The output files, into the folder's staging folder (a full disk is an OutputError)."""
    try:
        return write_outputs(folder.staging, gold_dir, scored)
    except OSError as exc:
        raise output_error(folder.path, "write", exc) from None


def write_run_file(target: Path, plan: RunPlan, logged: LoggedRun, evidence: str, tags: Mapping[str, str]) -> Path:
    """run.json in ``target`` (the staging folder): the run's id, where it was logged, its evidence
    (computed from what was replayed) and its tags."""
    return write_run_json(
        target,
        run_id=logged.run_id,
        experiment_id=logged.experiment_id,
        experiment_name=logged.experiment_name,
        tracking_uri=logged.tracking_uri,
        status=logged.status,
        evidence=evidence,
        tags=tags,
    )
