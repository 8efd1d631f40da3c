"""The registered baseline: alias ``baseline`` of registered model ``extraction-eval-<provider>``.

``register`` seeds a tracking server from a reviewed ``baseline_results.json``;
``promote`` moves the alias to a real run and rewrites the file for review.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from .._exceptions import ConfigurationError, TrackingError
from .._jsonio import write_json
from .._settings import hide_uri_password
from ..gold import BaselineFile, ProviderBaseline
from ..metric_keys import gated_or_default
from ..vocab import CassetteKind, Enforcement, Mode, Subset
from ._names import (
    BASELINE_ALIAS,
    BASELINE_EXPERIMENT,
    TAG_CASSETTE_KIND,
    TAG_ENFORCEMENT,
    TAG_GATED,
    TAG_GOLD_VERSION,
    TAG_MATCHER,
    TAG_MEASURED,
    TAG_MODE,
    TAG_MODEL,
    TAG_NOTE,
    TAG_OVERRIDE,
    TAG_PROVIDER,
    TAG_RUN_KIND,
    TAG_SUBSET,
    registered_model_name,
)
from ._refused import is_refusal, refusal

_P = ParamSpec("_P")
_R = TypeVar("_R")


@dataclass(frozen=True)
class Registered:
    provider: str
    version: str
    run_id: str
    action: str  # "registered" | "kept" | "promoted"


def _store_errors(
    action: str,
) -> Callable[[Callable[Concatenate[str, _P], _R]], Callable[Concatenate[str, _P], _R]]:
    """An MLflow error while writing becomes a TrackingError: a refusal names the account and the fix."""

    def decorate(function: Callable[Concatenate[str, _P], _R]) -> Callable[Concatenate[str, _P], _R]:
        @functools.wraps(function)
        def wrapper(uri: str, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            from mlflow.exceptions import MlflowException

            try:
                return function(uri, *args, **kwargs)
            except MlflowException as exc:
                raise (
                    refusal(exc, uri, action)
                    or TrackingError(
                        hide_uri_password(f"tracking server {uri!r} failed to {action}: {exc.message}", uri)
                    )
                ) from None

        return wrapper

    return decorate


def _client(uri: str) -> Any:
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=uri, registry_uri=uri)


def _current_alias(client: Any, name: str) -> Any | None:
    from mlflow.exceptions import MlflowException

    try:
        return client.get_model_version_by_alias(name, BASELINE_ALIAS)
    except MlflowException:
        return None


def _ensure_model(client: Any, name: str) -> None:
    from mlflow.exceptions import MlflowException

    try:
        client.get_registered_model(name)
    except MlflowException:
        client.create_registered_model(
            name,
            description="Regression baseline of extraction-eval. The version behind alias "
            "'baseline' is the bar the gate compares runs of this provider with.",
        )


def _version_tags(block: ProviderBaseline, gold_version: str, provider: str, source: str) -> dict[str, str]:
    return {
        TAG_PROVIDER: provider,
        TAG_MODEL: block.model,
        TAG_GOLD_VERSION: gold_version,
        TAG_SUBSET: block.subset.value,
        TAG_MATCHER: block.matcher or "",
        TAG_ENFORCEMENT: block.enforcement.value,
        TAG_CASSETTE_KIND: block.cassette_kind.value if block.cassette_kind else "unmeasured",
        TAG_GATED: json.dumps(list(block.gated_metrics)),
        TAG_MEASURED: "true" if block.metrics is not None else "false",
        "baseline_source": source,
        "last_refreshed": block.last_refreshed or "",
    }


@_store_errors("seed the registered baseline")
def register_from_file(
    uri: str,
    baseline: BaselineFile,
    *,
    origin: str,
    source_rev: str,
    if_missing: bool,
    replace: bool,
) -> list[Registered]:
    """Seed each provider's baseline from the reviewed file, as a run tagged with its origin.

    ``origin`` names the file and where it was read (``path@sha``, or ``path (working-tree@sha)``);
    ``source_rev`` is the revision alone.
    """
    from mlflow.entities import Metric

    client = _client(uri)
    experiment = client.get_experiment_by_name(BASELINE_EXPERIMENT)
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(BASELINE_EXPERIMENT)
    out = []
    for provider, block in sorted(baseline.providers.items()):
        name = registered_model_name(provider)
        existing = _current_alias(client, name)
        if existing is not None and not replace:
            if if_missing:
                out.append(Registered(provider, str(existing.version), existing.run_id, "kept"))
                continue
            raise ConfigurationError(
                f"{name!r} already has a baseline (version {existing.version}, run "
                f"{existing.run_id}). Use `baseline register --if-missing` to keep it, "
                "`--replace` to seed over it, or `baseline promote --run-id ID`."
            )
        tags = {
            TAG_RUN_KIND: "baseline_seed",
            **_version_tags(block, baseline.gold_version, provider, origin),
            "baseline_source_rev": source_rev,
            "baseline_origin_run_id": block.mlflow_run_id or "",
            TAG_NOTE: (
                f"Baseline for provider {provider!r} seeded from {origin}. Its numbers were "
                f"measured as cassette_kind={block.cassette_kind.value if block.cassette_kind else 'none'}"
                + (
                    " (oracle-aligned: they prove the plumbing, not the model)."
                    if block.cassette_kind is CassetteKind.ORACLE_ALIGNED
                    else "."
                )
                + ("" if block.metrics is not None else " Not measured yet: metrics are null.")
            ),
        }
        # The client, not the fluent API: the fluent tracking URI is process-global state.
        run = client.create_run(experiment_id, tags=tags, run_name=f"baseline-{provider}")
        if block.metrics:
            now = int(time.time() * 1000)
            client.log_batch(run.info.run_id, metrics=[Metric(k, float(v), now, 0) for k, v in block.metrics.items()])
        client.set_terminated(run.info.run_id, "FINISHED")
        _ensure_model(client, name)
        version = client.create_model_version(
            name,
            source=f"runs:/{run.info.run_id}",
            run_id=run.info.run_id,
            tags=_version_tags(block, baseline.gold_version, provider, origin),
            description=f"seeded from {origin}",
        )
        client.set_registered_model_alias(name, BASELINE_ALIAS, version.version)
        out.append(Registered(provider, str(version.version), run.info.run_id, "registered"))
    return out


def _check_promotable(run: Any, run_id: str, *, manual_refresh: bool) -> None:
    tags = run.data.tags
    problems = []
    if run.info.status != "FINISHED":
        problems.append(f"its status is {run.info.status!r}, not 'FINISHED'")
    if tags.get(TAG_RUN_KIND) != "eval":
        problems.append("it is not an evaluation run (tag run_kind != 'eval')")
    if tags.get(TAG_OVERRIDE) == "true":
        problems.append("it ran past contract drift (contract_override=true)")
    if tags.get(TAG_SUBSET) != Subset.FULL.value:
        problems.append(f"it covers subset {tags.get(TAG_SUBSET)!r}; a baseline covers 'full'")
    if tags.get(TAG_MODE) == Mode.RECORD.value:
        problems.append(
            "it is a record run (a new evidence event, never gated): run `run --mode cassette` on the "
            "recorded cassettes and promote that run"
        )
    live = tags.get(TAG_CASSETTE_KIND) == CassetteKind.LIVE_CALL.value
    if live and not manual_refresh:
        problems.append(
            "it is a live run (cassette_kind=live_call): CI replays cassettes, so record them "
            "(`run --mode record`), run `run --mode cassette` and promote that run"
        )
    if problems:
        raise ConfigurationError(f"run {run_id!r} cannot become a baseline: " + "; ".join(problems) + ".")


@_store_errors("promote the run to the registered baseline")
def promote(
    uri: str,
    run_id: str,
    baseline_path: Path,
    *,
    manual_refresh: bool = False,
    expect_provider: str | None = None,
    today: dt.date | None = None,
) -> tuple[Registered, ProviderBaseline]:
    """Move the alias to ``run_id`` and rewrite the provider's block of the baseline file."""
    from mlflow.exceptions import MlflowException

    from ..gold import load_baseline_file

    client = _client(uri)
    try:
        run = client.get_run(run_id)
    except MlflowException as exc:
        if is_refusal(exc):
            raise  # the decorator names the account and the fix
        raise TrackingError(f"run {run_id!r} not found at {uri!r}: {exc.message}") from None
    _check_promotable(run, run_id, manual_refresh=manual_refresh)
    tags: Mapping[str, str] = run.data.tags
    provider = tags.get(TAG_PROVIDER, "")
    if expect_provider is not None and provider != expect_provider:
        raise ConfigurationError(f"run {run_id!r} is a run of provider {provider!r}, not {expect_provider!r}.")
    baseline = load_baseline_file(baseline_path)
    if tags.get(TAG_GOLD_VERSION) != baseline.gold_version:
        raise ConfigurationError(
            f"run {run_id!r} scored gold {tags.get(TAG_GOLD_VERSION)!r} but {baseline_path} is "
            f"for gold {baseline.gold_version!r}; comparisons name their version, so a new gold "
            "version gets its own baseline file."
        )
    block = baseline.providers.get(provider)
    if manual_refresh and (block is None or block.enforcement is not Enforcement.MANUAL):
        raise ConfigurationError(
            f"`baseline refresh` publishes manual providers only; {provider!r} is "
            f"{block.enforcement.value if block else 'not in the file'}. Use `baseline promote`."
        )
    gated = gated_or_default(block.gated_metrics if block else None)
    metrics = {}
    for key in gated:
        value = run.data.metrics.get(key)
        if value is None or math.isnan(value):
            raise ConfigurationError(f"run {run_id!r} has no value for gated metric {key!r}; it cannot be a baseline.")
        metrics[key] = value
    enforcement = block.enforcement if block else Enforcement(tags.get(TAG_ENFORCEMENT, "manual"))
    new_block = ProviderBaseline(
        model=tags.get(TAG_MODEL, block.model if block else ""),
        enforcement=enforcement,
        cassette_kind=CassetteKind(tags[TAG_CASSETTE_KIND]),
        subset=Subset.FULL,
        matcher=tags.get(TAG_MATCHER),
        gated_metrics=tuple(gated),
        metrics=metrics,
        last_refreshed=(today or dt.date.today()).isoformat(),
        mlflow_run_id=run_id,
    )
    name = registered_model_name(provider)
    _ensure_model(client, name)
    version = client.create_model_version(
        name,
        source=f"runs:/{run_id}",
        run_id=run_id,
        tags=_version_tags(new_block, baseline.gold_version, provider, f"run:{run_id}"),
        description=f"promoted from run {run_id}",
    )
    client.set_registered_model_alias(name, BASELINE_ALIAS, version.version)
    providers = dict(baseline.providers)
    providers[provider] = new_block
    updated = BaselineFile(gold_version=baseline.gold_version, providers=providers)
    write_json(baseline_path, updated.model_dump(mode="json"))
    return Registered(provider, str(version.version), run_id, "promoted"), new_block
