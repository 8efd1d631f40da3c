"""``rescore``: a run's stored raw responses scored again, under another matcher or gold folder,
as a new MLflow run, with no provider call.

The new run keeps the old one's provenance (gold version, prompt and schema hashes, cassette
kind, provider, model, mode, subset, enforcement, git) and says what changed: tag
``rescored_from=<id>`` and the new matcher's id in tag ``matcher``. The regression gate
refuses a run whose matcher is not its baseline's, so a rescored run is never gated against
a baseline of another matcher.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from .._exceptions import ConfigurationError
from .._settings import tracking_uri
from ..contract import SAMPLING
from ..evaluation import (
    RESPONSES_FILE,
    OutputFolder,
    ScoredRun,
    count_params,
    memory_table_rows,
    output_folder,
    parse_responses,
    run_traces,
    score_answers,
    write_outputs,
    write_plots,
    write_run_json,
)
from ..evaluation._plots import NO_BASELINE
from ..evaluation._reviewing import reviewed_matcher
from ..evidence import edits_from_tags, evidence_from_tags, run_description
from ..gold import Conversation, GoldSet, ProviderBaseline, baseline_block, load_gold
from ..mlflow_names import (
    EXPERIMENT,
    TAG_ANSWER_SET,
    TAG_BUDGET_EXHAUSTED,
    TAG_CASSETTE_FILE,
    TAG_CASSETTE_KIND,
    TAG_CASSETTES_EDITED,
    TAG_ENFORCEMENT,
    TAG_GIT_COMMIT,
    TAG_GIT_DIRTY,
    TAG_GOLD_VERSION,
    TAG_MANIFEST_PROMPT,
    TAG_MANIFEST_SCHEMA,
    TAG_MATCHER,
    TAG_MODE,
    TAG_MODEL,
    TAG_OVERRIDE,
    TAG_PROMPT,
    TAG_PROVIDER,
    TAG_RECORDED_FROM,
    TAG_RECORDED_TO,
    TAG_RECORDING_COMPLETE,
    TAG_RESCORED_FROM,
    TAG_RUN_KIND,
    TAG_SCHEMA,
    TAG_SUBSET,
    TAG_SYSTEM_FINGERPRINT,
    TAG_TRACES,
    VLLM_EXPERIMENT,
)
from ..scoring import Matcher, matcher_id, matcher_params
from ..tracking._log import MEMORY_TABLE_FILE, PLOTS_DIR, TABLE_FILE, LoggedRun, gold_dataset, log_eval_run
from ..tracking._stored import get_run, read_stored
from ..vocab import Provider, Subset

#: The tags a rescored run keeps from its source run: what the answers are and where they came from.
PROVENANCE_TAGS = (
    TAG_RUN_KIND,
    TAG_GOLD_VERSION,
    TAG_PROMPT,
    TAG_SCHEMA,
    TAG_CASSETTE_KIND,
    TAG_CASSETTE_FILE,
    TAG_CASSETTES_EDITED,
    TAG_ENFORCEMENT,
    TAG_PROVIDER,
    TAG_MODEL,
    TAG_MODE,
    TAG_SUBSET,
    TAG_OVERRIDE,
    TAG_MANIFEST_PROMPT,
    TAG_MANIFEST_SCHEMA,
    TAG_GIT_COMMIT,
    TAG_GIT_DIRTY,
    TAG_SYSTEM_FINGERPRINT,
    TAG_RECORDED_FROM,
    TAG_RECORDED_TO,
    TAG_BUDGET_EXHAUSTED,
    TAG_RECORDING_COMPLETE,
    TAG_ANSWER_SET,
)


@dataclass(frozen=True)
class RescoreResult:
    source_run_id: str
    responses_source: str
    logged: LoggedRun
    matcher: str
    metrics: Mapping[str, float]
    tags: Mapping[str, str]
    files: tuple[Path, ...]


def rescore_tags(source: Mapping[str, str], source_run_id: str, matcher: Matcher) -> dict[str, str]:
    """The source run's provenance tags, the new matcher, and ``rescored_from``."""
    tags = {key: source[key] for key in PROVENANCE_TAGS if key in source}
    tags[TAG_MATCHER] = matcher_id(matcher)
    tags[TAG_RESCORED_FROM] = source_run_id
    return tags


def comparable_baseline(block: ProviderBaseline | None, matcher: str) -> tuple[Mapping[str, float] | None, str]:
    """The baseline figures the per-category plot sets beside a rescored run's, or None and why
    not: figures measured under another matcher are not comparable (the gate refuses them too)."""
    if block is None or block.metrics is None:
        return None, NO_BASELINE
    if block.matcher != matcher:
        return None, f"the baseline was measured under matcher {block.matcher}, not {matcher}: not shown"
    return block.metrics, NO_BASELINE


def _check_gold(gold: GoldSet, tags: Mapping[str, str], run_id: str, answers: Mapping[str, object]) -> Subset:
    version = tags.get(TAG_GOLD_VERSION)
    if version is not None and version != gold.version:
        raise ConfigurationError(
            f"run {run_id} was scored against gold {version!r}, but --gold {gold.path} is gold {gold.version!r}; "
            f"pass the gold folder of version {version!r}."
        )
    try:
        subset = Subset(tags.get(TAG_SUBSET, Subset.FULL.value))
    except ValueError:
        raise ConfigurationError(f"run {run_id} has subset tag {tags.get(TAG_SUBSET)!r}, not a subset.") from None
    wanted = [c.conversation_id for c in gold.subset_conversations(subset)]
    missing = sorted(set(wanted) - set(answers))
    extra = sorted(set(answers) - set(wanted))
    if missing or extra:
        raise ConfigurationError(
            f"run {run_id}'s {RESPONSES_FILE} does not cover subset {subset.value!r} of gold {gold.version!r} at "
            f"{gold.path}: missing {missing[:10]!r}, not in the subset {extra[:10]!r}."
        )
    return subset


def rescore_run(
    run_id: str,
    matcher: Matcher | str,
    gold_dir: Path,
    output_dir: Path,
    *,
    traces: bool = True,
    source_folders: tuple[Path, ...] = (),
) -> RescoreResult:
    """Score run ``run_id``'s stored responses again under ``matcher``; log and write a new run,
    with the plots and (unless ``traces`` is false) the per-conversation traces a run has."""
    from ..tracking._client import open_reader

    uri = tracking_uri()
    reader = open_reader(uri)
    try:
        source = get_run(reader, run_id)
        stored = read_stored(reader, source, RESPONSES_FILE, (output_dir, *source_folders))
    finally:
        reader.close()
    answers = parse_responses(stored.text, stored.source)
    gold = load_gold(gold_dir, require_manifest=False)
    subset = _check_gold(gold, source.tags, run_id, answers)
    selected = gold.subset_conversations(subset)
    if isinstance(matcher, str):  # "reviewed": the source run's answer set's decisions, over its stored responses
        answer_set = source.tags.get(TAG_ANSWER_SET)
        if answer_set is None:
            raise ConfigurationError(
                f"--matcher {matcher} replays an answer set's reviewed decisions, but run {run_id} replayed no "
                "answer set (no tag answer_set); rescore it with another matcher."
            )
        matcher = reviewed_matcher(load_gold(gold_dir, answers=answer_set), selected, answers)
    model = source.tags.get(TAG_MODEL, "")
    scored: ScoredRun = score_answers(gold, selected, answers, model=model, matcher=matcher)
    tags = rescore_tags(source.tags, run_id, matcher)
    params = {f"sampling.{k}": str(v) for k, v in SAMPLING.items()}
    params.update({"gold": str(gold_dir), "conversations": str(len(selected)), **matcher_params(matcher)})
    params.update(count_params(scored.metrics))  # as a run logs them (docs/decisions.md, "Counts are params")
    # Everything is read and scored before the folder is touched (it may be the source run's own
    # folder, whose responses.jsonl was just read); from here on it is one unit, as for `run`.
    with output_folder(output_dir) as folder:
        rescored = _Rescored(
            run_id, matcher, gold_dir, gold, subset, tuple(selected), model, scored, tags, params, stored.source, traces
        )
        return _log_and_write(folder, rescored)


@dataclass(frozen=True)
class _Rescored:
    """What a rescore computed before it touches the output folder."""

    run_id: str
    matcher: Matcher
    gold_dir: Path
    gold: GoldSet
    subset: Subset
    selected: tuple[Conversation, ...]
    model: str
    scored: ScoredRun
    tags: dict[str, str]
    params: dict[str, str]
    responses_source: str
    traces: bool


def _log_and_write(folder: OutputFolder, rescored: _Rescored) -> RescoreResult:
    """Stage the files, log the new run, write run.json and commit the folder as one unit."""
    uri = tracking_uri()
    run_id, matcher, gold, model, scored, tags = (
        rescored.run_id,
        rescored.matcher,
        rescored.gold,
        rescored.model,
        rescored.scored,
        rescored.tags,
    )
    subset = rescored.subset
    files = write_outputs(folder.staging, rescored.gold_dir, scored)
    kind = tags.get(TAG_CASSETTE_KIND, "")
    provider = tags.get(TAG_PROVIDER, Provider.OPENAI.value)
    edits = edits_from_tags(tags)  # a rescore of edited cassettes is described as edited too
    description = run_description(
        kind, model=model, provider=provider, gold_version=gold.version, subset=subset.value, edits=edits
    ) + (f"\n\nRESCORED from run {run_id} under matcher {matcher_id(matcher)}: its stored responses, no provider call.")
    name = f"rescore-{matcher_id(matcher)}-{run_id[:8]}"
    baseline, no_baseline = comparable_baseline(baseline_block(rescored.gold_dir, provider), matcher_id(matcher))
    # drawn in a worker thread while the run is logged, as a run's are (tracking._log.log_eval_run)
    plots = partial(write_plots, folder.staging / PLOTS_DIR, scored.report, scored.metrics, baseline, name, no_baseline)
    records, traces_tag = run_traces(scored, rescored.selected, matcher, enabled=rescored.traces)
    tags = {**tags, TAG_TRACES: traces_tag}
    logged = log_eval_run(
        tracking_uri=uri,
        experiment_name=VLLM_EXPERIMENT if provider == Provider.VLLM.value else EXPERIMENT,
        run_id=None,
        run_name=name,
        tags=tags,
        params=rescored.params,
        metrics={k: v for k, v in scored.metrics.items() if not k.startswith("counts/")},
        description=description,
        artifacts=files.artifacts,
        tables={TABLE_FILE: files.table, MEMORY_TABLE_FILE: partial(memory_table_rows, scored)},
        dataset=gold_dataset(gold, rescored.selected, subset.value),
        failed=False,
        plots=plots,
        traces=records,
    )
    folder.run_id = logged.run_id
    write_run_json(
        folder.staging,
        run_id=logged.run_id,
        experiment_id=logged.experiment_id,
        experiment_name=logged.experiment_name,
        tracking_uri=logged.tracking_uri,
        status=logged.status,
        evidence=evidence_from_tags(tags),
        tags=tags,
    )
    committed = folder.commit()
    return RescoreResult(
        source_run_id=run_id,
        responses_source=rescored.responses_source,
        logged=logged,
        matcher=matcher_id(matcher),
        metrics=dict(scored.metrics),
        tags=tags,
        files=committed,
    )
