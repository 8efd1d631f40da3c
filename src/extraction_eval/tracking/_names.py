"""Names other teams and dashboards rely on: experiments, tags, registered models."""

from __future__ import annotations

EXPERIMENT = "extraction-eval"
VLLM_EXPERIMENT = "extraction-eval-vllm"
BASELINE_EXPERIMENT = "extraction-eval-baselines"
BASELINE_ALIAS = "baseline"

TAG_RUN_KIND = "run_kind"  # "eval" for an evaluation, "baseline_seed" for a seeded baseline
TAG_GOLD_VERSION = "gold_version"
TAG_PROMPT = "prompt_sha256"
TAG_SCHEMA = "schema_sha256"
TAG_CASSETTE_KIND = "cassette_kind"
TAG_ENFORCEMENT = "enforcement"
TAG_PROVIDER = "provider"
TAG_MODEL = "model"
TAG_MODE = "mode"
TAG_SUBSET = "subset"
TAG_MATCHER = "matcher"
TAG_GIT_COMMIT = "mlflow.source.git.commit"
TAG_GIT_DIRTY = "git_dirty"
TAG_OVERRIDE = "contract_override"
TAG_GATED = "gated_metrics"
TAG_MEASURED = "measured"  # "false" when a baseline was seeded without metrics
TAG_NOTE = "mlflow.note.content"


def registered_model_name(provider: str) -> str:
    """The registered model whose ``baseline`` alias is provider P's baseline."""
    return f"extraction-eval-{provider}"


def provider_of_model(name: str) -> str | None:
    prefix = "extraction-eval-"
    return name[len(prefix) :] if name.startswith(prefix) else None
