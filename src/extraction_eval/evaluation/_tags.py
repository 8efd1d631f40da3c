"""What a run is tagged with, its params and its description: who, what, on which evidence."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .._git import GitState
from ..contract import SAMPLING, prompt_sha256, schema_sha256
from ..evidence import run_description
from ..gold import GoldSet
from ..mlflow_names import (
    TAG_ANSWER_SET,
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
    TAG_RUN_KIND,
    TAG_SCHEMA,
    TAG_SUBSET,
    RunKind,
    flag,
)
from ..scoring import DEFAULT_MATCHER, Matcher, matcher_id, matcher_params
from ..vocab import CassetteKind
from ._answers import CollectedAnswers
from ._options import RunOptions
from ._plan import RunPlan
from ._replayed import ReplayedCassettes
from ._usage import provenance_tags


def build_tags(
    plan: RunPlan,
    gold: GoldSet,
    collected: CollectedAnswers,
    *,
    override: bool,
    git: GitState,
    matcher: Matcher = DEFAULT_MATCHER,
    replayed: ReplayedCassettes | None = None,
) -> dict[str, str]:
    """Every tag of an evaluation run (docs/tracking-reference.md lists them)."""
    tags = {
        TAG_RUN_KIND: RunKind.EVAL.value,
        TAG_GOLD_VERSION: gold.version,
        TAG_PROMPT: prompt_sha256(),
        TAG_SCHEMA: schema_sha256(),
        TAG_CASSETTE_KIND: collected.cassette_kind.value,
        TAG_ENFORCEMENT: plan.enforcement.value,
        TAG_PROVIDER: plan.provider.value,
        TAG_MODEL: plan.model,
        TAG_MODE: plan.mode.value,
        TAG_SUBSET: plan.subset.value,
        TAG_MATCHER: matcher_id(matcher),
        TAG_OVERRIDE: flag(override),
        TAG_GIT_DIRTY: "unknown" if git.dirty is None else flag(git.dirty),
        **provenance_tags(list(collected.answers.values())),
        **collected.tags,
    }
    if git.commit:
        tags[TAG_GIT_COMMIT] = git.commit
    if gold.answer_set is not None:
        tags[TAG_ANSWER_SET] = gold.answer_set
    if replayed is not None:
        tags[TAG_CASSETTE_FILE] = replayed.file_sha256
        tags[TAG_CASSETTES_EDITED] = flag(replayed.edited)
    if override and gold.manifest is not None:
        tags[TAG_MANIFEST_PROMPT] = gold.manifest.prompt_sha256
        tags[TAG_MANIFEST_SCHEMA] = gold.manifest.schema_sha256
    return tags


def build_params(
    plan: RunPlan, gold_dir: Path, conversations: int, options: RunOptions, *, matcher: Matcher = DEFAULT_MATCHER
) -> dict[str, str]:
    """One param per input, named as the CLI and MLproject name it (``mode`` is a tag: the
    gate reads it), the fixed sampling, how many conversations the subset holds, and the
    matcher's held-out figures."""
    params = {f"sampling.{k}": str(v) for k, v in SAMPLING.items()}
    params["gold"] = str(gold_dir)
    params["output_dir"] = str(plan.output_dir)
    params["conversations"] = str(conversations)
    params.update(matcher_params(matcher))  # the matcher's held-out figures (docs/matcher.md)
    if options.max_failure_rate is not None:
        params["max_failure_rate"] = str(options.max_failure_rate)
    if not options.traces:
        params["no_traces"] = "true"
    if not plan.mode.is_replay:
        params["concurrency"] = str(options.concurrency)
        params["max_retries"] = str(options.max_retries)
        params["timeout"] = str(options.timeout_s)
        params["repeat"] = str(options.repeat)
        if options.max_tokens is not None:
            params["max_tokens"] = str(options.max_tokens)
        if options.max_cost_usd is not None:
            params["max_cost_usd"] = str(options.max_cost_usd)
    return params


def count_params(metrics: Mapping[str, float]) -> dict[str, str]:
    """The ``counts/...`` keys of metrics.json as MLflow params: sizes, not measures, so the
    run's metric columns are the metrics (docs/decisions.md, "Counts are params")."""
    return {k: str(int(v)) for k, v in metrics.items() if k.startswith("counts/")}


def run_name(
    plan: RunPlan,
    gold_version: str,
    git: GitState,
    replayed: ReplayedCassettes | None,
    *,
    answer_set: str | None = None,
) -> str:
    """``[<commit>-]<mode>-<provider>-<gold>[-<answer set>][-edited]``, e.g. ``67bcce7-cassette-openai-v1``.

    The commit comes first: MLflow's runs table cuts long names at their end, and the commit is
    what tells two runs of the same mode, provider and gold version apart."""
    name = f"{plan.mode.value}-{plan.provider.value}-{gold_version}"
    if answer_set is not None:
        name += f"-{answer_set}"
    if replayed is not None and replayed.edited:
        name += "-edited"
    if git.commit:
        name = f"{git.commit[:7]}{'+dirty' if git.dirty else ''}-{name}"
    return name


def describe_run(
    plan: RunPlan,
    gold_version: str,
    kind: CassetteKind,
    *,
    override: bool,
    replayed: ReplayedCassettes | None = None,
    answer_set: str | None = None,
) -> str:
    """The MLflow run description: what the numbers rest on (computed from what was replayed),
    and an override when there was one."""
    description = run_description(
        kind.value,
        model=plan.model,
        provider=plan.provider.value,
        gold_version=gold_version,
        subset=plan.subset.value,
        edits=replayed.edits() if replayed is not None else None,
        answer_set=answer_set,
    )
    if override:
        description += (
            "\n\nCONTRACT OVERRIDE: replayed cassettes recorded under another prompt or schema; "
            "the regression gate refuses this run."
        )
    return description
