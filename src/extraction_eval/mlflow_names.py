"""Names other teams and dashboards rely on: experiments, run and version tags, registered models.

Low in the import order (no mlflow import): the run pipeline writes these tags, the
tracking package logs and reads them, and the gates judge by them.
"""

from __future__ import annotations

from enum import StrEnum

EXPERIMENT = "extraction-eval"
VLLM_EXPERIMENT = "extraction-eval-vllm"
BASELINE_EXPERIMENT = "extraction-eval-baselines"  # where seeds went before issue 13 (older stores)
SENSITIVITY_EXPERIMENT = "extraction-eval-sensitivity"
MATCHER_VALIDITY_EXPERIMENT = "extraction-eval-matcher-validity"
#: Before issue 22 a provider had one baseline, alias ``baseline``; it reads as gold v1's.
BASELINE_ALIAS = "baseline"
LEGACY_GOLD_VERSION = "v1"
MODEL_PREFIX = "extraction-eval-"
#: The providers a baseline can belong to: the gate looks each one's model up by its exact name.
PROVIDERS = ("openai", "vllm")
#: A hand-written answer set's baselines sit beside the oracle's, under their own alias.
HAND_WRITTEN_SLOT = "hand-written"


class RunKind(StrEnum):
    """The value of tag ``run_kind``."""

    EVAL = "eval"
    BASELINE_SEED = "baseline_seed"
    SENSITIVITY = "sensitivity"
    MATCHER_VALIDITY = "matcher_validity"


# Every run and baseline version
TAG_RUN_KIND = "run_kind"
TAG_GOLD_VERSION = "gold_version"
TAG_CASSETTE_KIND = "cassette_kind"
TAG_ENFORCEMENT = "enforcement"
TAG_PROVIDER = "provider"
TAG_MODEL = "model"
TAG_SUBSET = "subset"
TAG_MATCHER = "matcher"
TAG_NOTE = "mlflow.note.content"

# Evaluation runs
TAG_PROMPT = "prompt_sha256"
TAG_SCHEMA = "schema_sha256"
TAG_MODE = "mode"
TAG_GIT_COMMIT = "mlflow.source.git.commit"
TAG_GIT_DIRTY = "git_dirty"
TAG_OVERRIDE = "contract_override"
TAG_GATE_VERDICT = "gate_verdict"  # set by the regression gate on the run it judged
TAG_MANIFEST_PROMPT = "manifest_prompt_sha256"  # only on an overridden run
TAG_MANIFEST_SCHEMA = "manifest_schema_sha256"  # only on an overridden run
TAG_SYSTEM_FINGERPRINT = "system_fingerprint"
TAG_RECORDED_FROM = "recorded_from"
TAG_RECORDED_TO = "recorded_to"
TAG_BUDGET_EXHAUSTED = "budget_exhausted"  # live modes
TAG_RECORDING_COMPLETE = "recording_complete"  # record mode
TAG_RESCORED_FROM = "rescored_from"  # a run scored again from another run's stored responses
TAG_BASELINE_REPLAY = "baseline_replay"  # register --replay: the reviewed file this run replayed
TAG_LOGGED_ARTIFACTS = "mlflow.loggedArtifacts"
TAG_RUN_NAME = "mlflow.runName"  # set by the harness under `mlflow run` too
TAG_CASSETTE_FILE = "cassette_file_sha256"  # replay: sha256 of the cassette file replayed
TAG_TRACES = "traces"  # how many per-conversation traces the run has, or "off" (--no-traces)
TAG_CASSETTES_EDITED = "cassettes_edited"  # replay: "true" when they are not what the manifest records
TAG_ANSWER_SET = "answer_set"  # replay of a realistic answer set (gold/<v>/answers/<set>/), not the oracle cassettes

# Baseline versions and seed runs
TAG_GATED = "gated_metrics"
TAG_MEASURED = "measured"  # "false" when a baseline was seeded without metrics
TAG_BASELINE_SOURCE = "baseline_source"
TAG_BASELINE_SOURCE_REV = "baseline_source_rev"
TAG_BASELINE_ORIGIN_RUN = "baseline_origin_run_id"
TAG_LAST_REFRESHED = "last_refreshed"
TAG_BASELINE_METRIC_PREFIX = "baseline/"  # model version tags: baseline/<metric key> = value
TAG_PROMOTION_REASON = "promotion_reason"  # model version tag: why an edited or live run became a baseline

#: ``cassette_kind`` of a baseline that has no numbers yet.
UNMEASURED = "unmeasured"


def flag(value: bool) -> str:
    """A boolean tag's value: ``"true"`` or ``"false"``."""
    return "true" if value else "false"


def provider_experiment(provider: str) -> str:
    """The experiment holding provider P's runs and its seeded baseline run."""
    return VLLM_EXPERIMENT if provider == "vllm" else EXPERIMENT


def registered_model_name(provider: str) -> str:
    """The registered model whose ``baseline`` alias is provider P's baseline."""
    return f"{MODEL_PREFIX}{provider}"


def baseline_alias(gold_version: str, *, hand_written: bool = False) -> str:
    """The alias of provider P's baseline for gold version V on ``extraction-eval-<P>``:
    ``baseline-<V>``, or ``baseline-<V>-hand-written`` for runs on a hand-written answer set."""
    return f"{BASELINE_ALIAS}-{gold_version}" + (f"-{HAND_WRITTEN_SLOT}" if hand_written else "")


def provider_of_model(name: str) -> str | None:
    return name[len(MODEL_PREFIX) :] if name.startswith(MODEL_PREFIX) else None
