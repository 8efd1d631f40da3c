"""What a run will do: mode, provider, model, subset, enforcement, experiment.

Provider selection follows the contract: ``--mode vllm`` means provider vllm; for
``record`` and ``live``, ``IBEX_WORKER_EXTRACTION_PROVIDER`` picks it (default
openai); replay modes use the provider that recorded the cassettes. A provider
that contradicts the mode is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .._exceptions import ConfigurationError
from .._settings import MODEL_VAR, PROVIDER_VAR, env_value
from ..gold import CassetteManifest, baseline_block
from ..mlflow_names import EXPERIMENT, VLLM_EXPERIMENT
from ..vocab import DEFAULT_MODELS, CassetteKind, Enforcement, Mode, Provider, Subset

DEFAULT_ENFORCEMENT = {Provider.OPENAI: Enforcement.CI, Provider.VLLM: Enforcement.MANUAL}


@dataclass(frozen=True)
class RunPlan:
    mode: Mode
    provider: Provider
    model: str
    subset: Subset
    enforcement: Enforcement
    experiment: str
    cassette_kind: CassetteKind | None  # None: taken from the manifest at replay time
    gold_dir: Path
    output_dir: Path


def _provider_from_env() -> Provider | None:
    raw = env_value(PROVIDER_VAR)
    if raw is None:
        return None
    try:
        return Provider(raw.lower())
    except ValueError:
        raise ConfigurationError(
            f"{PROVIDER_VAR}={raw!r} is not a provider; use one of {[p.value for p in Provider]!r}."
        ) from None


def choose_provider(mode: Mode, manifest: CassetteManifest | None) -> Provider:
    from_env = _provider_from_env()
    if mode is Mode.VLLM:
        if from_env not in (None, Provider.VLLM):
            raise ConfigurationError(
                f"--mode vllm runs provider 'vllm' but {PROVIDER_VAR}={str(from_env)!r}; unset it or set it to 'vllm'."
            )
        return Provider.VLLM
    if mode is Mode.RECORD:
        provider = from_env or Provider.OPENAI
        if provider is not Provider.OPENAI:
            raise ConfigurationError(
                f"--mode record writes openai_cassettes.jsonl, but {PROVIDER_VAR}="
                f"{provider.value!r}. vLLM comparisons are manual and live: use --mode vllm."
            )
        return provider
    if mode is Mode.LIVE:
        return from_env or Provider.OPENAI
    recorded = Provider(manifest.provider) if manifest is not None else Provider.OPENAI
    if from_env is not None and from_env is not recorded:
        raise ConfigurationError(
            f"--mode {mode.value} replays cassettes recorded from {recorded.value!r}, but "
            f"{PROVIDER_VAR}={from_env.value!r}. Unset it, or use --mode vllm / live."
        )
    return recorded


def enforcement_for(gold_dir: Path, provider: Provider) -> Enforcement:
    """The provider's enforcement in the gold folder's baseline file (default by provider)."""
    block = baseline_block(gold_dir, provider.value)
    return block.enforcement if block is not None else DEFAULT_ENFORCEMENT[provider]


def plan_run(mode: Mode, gold_dir: Path, output_dir: Path, manifest: CassetteManifest | None) -> RunPlan:
    provider = choose_provider(mode, manifest)
    if mode.is_replay:
        model = manifest.model if manifest is not None else DEFAULT_MODELS[provider]
        kind = None
    else:
        model = env_value(MODEL_VAR) or DEFAULT_MODELS[provider]
        kind = CassetteKind.LIVE_RECORDED if mode is Mode.RECORD else CassetteKind.LIVE_CALL
    return RunPlan(
        mode=mode,
        provider=provider,
        model=model,
        subset=mode.subset,
        enforcement=enforcement_for(gold_dir, provider),
        experiment=VLLM_EXPERIMENT if provider is Provider.VLLM else EXPERIMENT,
        cassette_kind=kind,
        gold_dir=gold_dir,
        output_dir=output_dir,
    )
