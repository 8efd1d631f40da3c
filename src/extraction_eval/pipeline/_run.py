"""``run_eval``: one evaluation as a page of named steps, each a function of its own."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from .._git import git_state
from .._settings import project_root, tracking_uri
from ..evaluation import (
    COMPARISON_FILE,
    Answer,
    OutputFolder,
    RunOptions,
    RunPlan,
    build_params,
    build_tags,
    check_options,
    count_params,
    describe_run,
    output_folder,
    plan_run,
    replayed_cassettes,
    run_name,
    run_traces,
    score_answers,
    write_plots,
)
from ..evidence import evidence_line
from ..gold import baseline_block, load_gold
from ..mlflow_names import TAG_TRACES
from ..scoring import ScoreReport
from ..tracking._connect import wait_for_server
from ..tracking._log import PLOTS_DIR, LoggedRun
from ..vocab import CassetteKind, Mode
from ._compare import live_comparison
from ._steps import (
    check_contract,
    choose_run_matcher,
    collect_answers,
    contract_notes,
    experiment_notes,
    log_run,
    write_run_file,
    write_staged,
)


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
    answers: Mapping[str, Answer]
    #: The output files, in the order ``run`` lists them (comparison.md aside).
    files: tuple[Path, ...]
    #: comparison.md's Markdown for a live run, None for replay.
    comparison: str | None
    #: The evidence sentence, computed from what was replayed.
    evidence: str = ""


def run_eval(mode: Mode, gold_dir: Path, output_dir: Path, options: RunOptions | None = None) -> RunResult:
    """Load, gate, answer, score, log and write: one evaluation, one MLflow run.

    The output folder is one unit (``evaluation.output_folder``): locked, cleared and marked
    RUNNING first; the files are staged and renamed into place after the MLflow run ends, or
    the folder is left marked FAILED/KILLED with the reason.
    """
    options = options or RunOptions()
    check_options(mode, options)  # refused before the folder is touched
    with output_folder(output_dir) as folder:
        return _run_steps(mode, gold_dir, folder, options)


def _run_steps(mode: Mode, gold_dir: Path, folder: OutputFolder, options: RunOptions) -> RunResult:
    gold = load_gold(gold_dir, require_manifest=mode.is_replay, answers=options.answers)
    plan = plan_run(mode, gold_dir, folder.path, gold.manifest)
    wait_for_server(tracking_uri())  # before any provider call is paid for
    selected = gold.subset_conversations(plan.subset)
    verdict = check_contract(plan, gold, selected)
    override = verdict is not None and verdict.override
    collected = collect_answers(plan, gold, selected, options, verdict)
    checked, drift = verdict is not None, contract_notes(verdict)
    del verdict  # its cassettes are answers now: not held while the run is scored and logged
    matcher = choose_run_matcher(plan, gold, selected, collected.answers, options)
    scored = score_answers(
        gold,
        selected,
        collected.answers,
        model=plan.model,
        max_failure_rate=options.max_failure_rate,
        matcher=matcher,
        extra_samples=collected.extra_samples,
    )
    replayed = replayed_cassettes(gold, collected.cassette_kind, collected.answers) if checked else None
    git = git_state(project_root())
    tags = build_tags(plan, gold, collected, override=override, git=git, matcher=matcher, replayed=replayed)
    params = {**build_params(plan, gold_dir, len(selected), options, matcher=matcher), **count_params(scored.metrics)}
    files = write_staged(folder, gold.cassette_dir, scored)
    name = run_name(plan, gold.version, git, replayed, answer_set=gold.answer_set)
    # the baseline file's bars are the oracle cassettes' numbers: not drawn beside an answer set's
    block = baseline_block(gold_dir, plan.provider.value) if gold.answer_set is None else None
    # Drawn in a worker thread while the run is logged (tracking._log.log_eval_run).
    plots = partial(
        write_plots,
        folder.staging / PLOTS_DIR,
        scored.report,
        scored.metrics,
        block.metrics if block is not None else None,
        name,
    )
    description = describe_run(
        plan, gold.version, collected.cassette_kind, override=override, replayed=replayed, answer_set=gold.answer_set
    )
    evidence = evidence_line(
        collected.cassette_kind.value,
        model=plan.model,
        edits=replayed.edits() if replayed is not None else None,
        answer_set=gold.answer_set,
    )
    traces, tags[TAG_TRACES] = run_traces(scored, selected, matcher, enabled=options.traces)
    logged = log_run(
        plan,
        gold,
        selected,
        scored,
        files,
        plots,
        tags=tags,
        params=params,
        description=description,
        name=name,
        traces=traces,
    )
    folder.run_id = logged.run_id
    write_run_file(folder.staging, plan, logged, evidence, tags)
    comparison = live_comparison(plan, logged, tags, scored.metrics, folder=folder.staging)
    committed = folder.commit()
    return RunResult(
        plan=plan,
        logged=logged,
        metrics=dict(scored.metrics),
        report=scored.report,
        cassette_kind=collected.cassette_kind,
        override=override,
        failed=scored.failed,
        notes=(*drift, *collected.notes, *scored.notes, *experiment_notes(plan, logged)),
        tags=tags,
        answers=collected.answers,
        files=tuple(p for p in committed if p.name != COMPARISON_FILE),
        comparison=comparison,
        evidence=evidence,
    )
