"""The registered baselines: alias ``baseline-<gold version>`` of registered model
``extraction-eval-<provider>`` (``baseline-<gold version>-hand-written`` for hand-written
answer sets), so every gold version's baseline lives in one store (docs/decisions.md).

``register_baseline`` seeds a tracking store from a reviewed ``baseline_results.json``;
``promote`` moves the alias to a real run (and rewrites the file only when asked); both fix
the baseline's numbers on the model version (``baseline/<metric>`` tags), where the gate reads
them; ``migrate_legacy`` gives a store made before issue 22 (one ``baseline`` alias per
provider) the new aliases.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from .._exceptions import ConfigurationError, GoldDataError, TrackingError
from .._jsonio import atomic_write_text, dumps_line, write_json
from .._settings import hide_uri_password, mask_secrets, tracking_uri
from ..gold import (
    BASELINE_PER_CONVERSATION_FILE,
    BaselineCountsRow,
    BaselineFile,
    BaselineSource,
    ProviderBaseline,
    load_baseline_file,
    parse_baseline_counts,
)
from ..metric_keys import gated_or_default
from ..mlflow_names import (
    BASELINE_ALIAS,
    LEGACY_GOLD_VERSION,
    PROVIDERS,
    TAG_ANSWER_SET,
    TAG_BASELINE_METRIC_PREFIX,
    TAG_BASELINE_ORIGIN_RUN,
    TAG_BASELINE_SOURCE,
    TAG_BASELINE_SOURCE_REV,
    TAG_CASSETTE_KIND,
    TAG_CASSETTES_EDITED,
    TAG_ENFORCEMENT,
    TAG_GATED,
    TAG_GOLD_VERSION,
    TAG_LAST_REFRESHED,
    TAG_MATCHER,
    TAG_MEASURED,
    TAG_MODE,
    TAG_MODEL,
    TAG_NOTE,
    TAG_OVERRIDE,
    TAG_PROMOTION_REASON,
    TAG_PROVIDER,
    TAG_RUN_KIND,
    TAG_SUBSET,
    UNMEASURED,
    RunKind,
    baseline_alias,
    flag,
    provider_experiment,
    registered_model_name,
)
from ..vocab import CassetteKind, Enforcement, Mode, Subset
from ._connect import configure_mlflow_client, mlflow_client
from ._log import end_orphan
from ._refused import is_refusal, refusal


class BaselineAction(StrEnum):
    """What ``baseline register``, ``promote`` or ``refresh`` did to a provider's alias."""

    REGISTERED = "registered"
    KEPT = "kept"
    PROMOTED = "promoted"
    REPLAYED = "replayed"  # register --replay: a replayed eval run, promoted


@dataclass(frozen=True)
class Registered:
    """A provider's baseline version after the command, and what the command did."""

    provider: str
    version: str
    run_id: str
    action: BaselineAction
    alias: str = ""


def _client(uri: str) -> Any:
    from ._connect import wait_for_database

    wait_for_database(uri)  # a database server that is down: one line within the budget, not MLflow's retries
    configure_mlflow_client()
    return mlflow_client(uri, registry=True)


@contextlib.contextmanager
def _store_errors(uri: str, action: str) -> Iterator[None]:
    """A request the store refuses (or a store it cannot reach) is a TrackingError, not a traceback;
    a 401 or 403 names the account and the fix (``action`` completes "refused to ...")."""
    from mlflow.exceptions import MlflowException

    try:
        yield
    except MlflowException as exc:
        refused = refusal(exc, uri, action)
        if refused is not None:
            raise refused from None
        message = (
            f"the tracking store {uri!r} refused a request ({exc.error_code}: {exc.message}); "
            "check MLFLOW_TRACKING_URI and that the store is up."
        )
        raise TrackingError(mask_secrets(hide_uri_password(message, uri))) from None


def _registered_model(client: Any, name: str) -> Any | None:
    """The registered model, or None when there is none by that name (any other refusal raises)."""
    from mlflow.exceptions import MlflowException

    try:
        return client.get_registered_model(name)
    except MlflowException as exc:
        if exc.error_code == "RESOURCE_DOES_NOT_EXIST":
            return None
        raise


def _current_alias(client: Any, name: str, alias: str) -> Any | None:
    """The version behind ``alias``; None without the model or the alias. For gold v1, a store's
    legacy alias ``baseline`` (from before issue 22) counts as v1's."""
    model = _registered_model(client, name)
    aliases = dict(model.aliases or {}) if model is not None else {}
    version = aliases.get(alias)
    if version is None and alias == baseline_alias(LEGACY_GOLD_VERSION):
        version = aliases.get(BASELINE_ALIAS)
        found = None if version is None else client.get_model_version(name, str(version))
        if (
            found is not None
            and dict(found.tags or {}).get(TAG_GOLD_VERSION, LEGACY_GOLD_VERSION) == LEGACY_GOLD_VERSION
        ):
            return found
        return None
    return None if version is None else client.get_model_version(name, str(version))


def slot_alias(gold_version: str, cassette_kind: CassetteKind | str | None) -> str:
    """The alias a baseline of this gold version and evidence kind sits under."""
    kind = cassette_kind.value if isinstance(cassette_kind, CassetteKind) else cassette_kind
    return baseline_alias(gold_version, hand_written=kind == CassetteKind.HAND_WRITTEN_BLIND.value)


def _ensure_model(client: Any, name: str) -> None:
    if _registered_model(client, name) is None:
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
        TAG_CASSETTE_KIND: block.cassette_kind.value if block.cassette_kind else UNMEASURED,
        TAG_GATED: json.dumps(list(block.gated_metrics)),
        TAG_MEASURED: flag(block.metrics is not None),
        TAG_BASELINE_SOURCE: source,
        TAG_LAST_REFRESHED: block.last_refreshed or "",
    }


def _metric_tags(block: ProviderBaseline) -> dict[str, str]:
    """The baseline's numbers on its model version, ``baseline/<metric key>`` (unrounded), so the
    version page shows them without opening the run."""
    return {f"{TAG_BASELINE_METRIC_PREFIX}{k}": repr(float(v)) for k, v in sorted((block.metrics or {}).items())}


def register_baseline(
    source: BaselineSource, *, if_missing: bool, replace: bool, uri: str | None = None
) -> list[Registered]:
    """Seed each provider's baseline from the reviewed file, as a run tagged with where the file
    was read (``gold.read_baseline_source``)."""
    uri = uri or tracking_uri()
    with _store_errors(uri, "seed the registered baseline"):
        return _register(_client(uri), source, if_missing=if_missing, replace=replace)


def _register(client: Any, source: BaselineSource, *, if_missing: bool, replace: bool) -> list[Registered]:
    from mlflow.entities import Metric

    baseline, origin, source_rev = source.baseline, source.origin, source.revision
    out = []
    for provider, block in sorted(baseline.providers.items()):
        # in the provider's own experiment, beside the runs it is compared with (the gate's
        # search for HEAD's run filters run_kind=eval, so a seed is never judged)
        experiment_name = provider_experiment(provider)
        experiment = client.get_experiment_by_name(experiment_name)
        experiment_id = experiment.experiment_id if experiment else client.create_experiment(experiment_name)
        name = registered_model_name(provider)
        alias = slot_alias(baseline.gold_version, block.cassette_kind)
        existing = _current_alias(client, name, alias)
        if existing is not None and not replace:
            if if_missing:
                out.append(Registered(provider, str(existing.version), existing.run_id, BaselineAction.KEPT, alias))
                continue
            raise ConfigurationError(
                f"{name!r} already has a baseline for gold {baseline.gold_version!r} (alias {alias!r}: version "
                f"{existing.version}, run {existing.run_id}). Use `baseline register --if-missing` to keep it, "
                "`--replace` to seed over it, or `baseline promote --run-id ID`."
            )
        tags = {
            TAG_RUN_KIND: RunKind.BASELINE_SEED.value,
            **_version_tags(block, baseline.gold_version, provider, origin),
            TAG_BASELINE_SOURCE_REV: source_rev,
            TAG_BASELINE_ORIGIN_RUN: block.mlflow_run_id or "",
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
        run = client.create_run(experiment_id, tags=tags, run_name=f"baseline-{provider}-{baseline.gold_version}")
        try:
            if block.metrics:
                now = int(time.time() * 1000)
                metrics = [Metric(k, float(v), now, 0) for k, v in block.metrics.items()]
                client.log_batch(run.info.run_id, metrics=metrics)
            rows = [r for r in source.counts if r.provider == provider]
            if rows:
                check_counts_reproduce(rows, block, source.counts_where)
                client.log_text(run.info.run_id, counts_jsonl(rows), BASELINE_PER_CONVERSATION_FILE)
            client.set_terminated(run.info.run_id, "FINISHED")
        except BaseException as exc:  # never a seed run left RUNNING
            end_orphan(client, run.info.run_id, exc)
            raise
        _ensure_model(client, name)
        version = client.create_model_version(
            name,
            source=f"runs:/{run.info.run_id}",
            run_id=run.info.run_id,
            tags={**_version_tags(block, baseline.gold_version, provider, origin), **_metric_tags(block)},
            description=f"seeded from {origin}",
        )
        client.set_registered_model_alias(name, alias, version.version)
        out.append(Registered(provider, str(version.version), run.info.run_id, BaselineAction.REGISTERED, alias))
    return out


def _check_promotable(run: Any, run_id: str, *, manual_refresh: bool, reason: str | None = None) -> None:
    tags = run.data.tags
    problems = []
    if tags.get(TAG_CASSETTES_EDITED) == flag(True) and not reason:
        problems.append(
            "it replayed edited cassettes (cassettes_edited=true: not what the manifest records), so its "
            "numbers describe hand-edited answers; restore the cassettes (`git checkout`) and run again, or "
            "name why this run should be the bar with --reason TEXT (recorded on the model version)"
        )
    if run.info.status != "FINISHED":
        problems.append(f"its status is {run.info.status!r}, not 'FINISHED'")
    if tags.get(TAG_RUN_KIND) != RunKind.EVAL:
        problems.append("it is not an evaluation run (tag run_kind != 'eval')")
    if tags.get(TAG_OVERRIDE) == flag(True):
        problems.append("it ran past contract drift (contract_override=true)")
    if tags.get(TAG_SUBSET) != Subset.FULL.value:
        problems.append(f"it covers subset {tags.get(TAG_SUBSET)!r}; a baseline covers 'full'")
    if tags.get(TAG_MODE) == Mode.RECORD.value:
        problems.append(
            "it is a record run (a new evidence event, never gated): run `run --mode cassette` on the "
            "recorded cassettes and promote that run"
        )
    live = tags.get(TAG_CASSETTE_KIND) == CassetteKind.LIVE_CALL.value
    if live and not manual_refresh and not reason:
        problems.append(
            "it is a live run (cassette_kind=live_call): CI replays cassettes, so record them "
            "(`run --mode record`), run `run --mode cassette` and promote that run (or name why with --reason TEXT)"
        )
    if problems:
        raise ConfigurationError(f"run {run_id!r} cannot become a baseline: " + "; ".join(problems) + ".")


def promote(
    run_id: str,
    baseline_path: Path,
    *,
    manual_refresh: bool = False,
    expect_provider: str | None = None,
    today: dt.date | None = None,
    uri: str | None = None,
    reason: str | None = None,
    write_file: bool = False,
) -> tuple[Registered, ProviderBaseline]:
    """Move the provider's alias for the run's gold version to ``run_id``, with the run's numbers
    and evidence fixed on the new model version. The tracked baseline file (and its
    per-conversation counts) is rewritten only with ``write_file``."""
    uri = uri or tracking_uri()
    with _store_errors(uri, "promote the run to the registered baseline"):
        return _promote(
            _client(uri),
            uri,
            run_id,
            baseline_path,
            manual_refresh,
            expect_provider,
            today or dt.date.today(),
            reason,
            write_file,
        )


def _promote(
    client: Any,
    uri: str,
    run_id: str,
    baseline_path: Path,
    manual_refresh: bool,
    expect_provider: str | None,
    today: dt.date,
    reason: str | None,
    write_file: bool,
) -> tuple[Registered, ProviderBaseline]:
    from mlflow.exceptions import MlflowException

    try:
        run = client.get_run(run_id)
    except MlflowException as exc:
        if is_refusal(exc):
            raise  # _store_errors names the account and the fix
        raise TrackingError(f"run {run_id!r} not found at {uri!r}: {exc.message}") from None
    _check_promotable(run, run_id, manual_refresh=manual_refresh, reason=reason)
    tags: Mapping[str, str] = run.data.tags
    provider = tags.get(TAG_PROVIDER, "")
    if expect_provider is not None and provider != expect_provider:
        raise ConfigurationError(f"run {run_id!r} is a run of provider {provider!r}, not {expect_provider!r}.")
    baseline = load_baseline_file(baseline_path)
    if tags.get(TAG_GOLD_VERSION) != baseline.gold_version:
        raise ConfigurationError(
            f"run {run_id!r} scored gold {tags.get(TAG_GOLD_VERSION)!r} but {baseline_path} is "
            f"for gold {baseline.gold_version!r}; comparisons name their version: promote it with "
            f"`extraction-eval baseline promote --run-id {run_id} --gold gold/{tags.get(TAG_GOLD_VERSION)}`."
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
        cassette_kind=CassetteKind(tags[TAG_CASSETTE_KIND]),  # the run's own evidence, never assumed
        subset=Subset.FULL,
        matcher=tags.get(TAG_MATCHER),
        gated_metrics=tuple(gated),
        metrics=metrics,
        last_refreshed=today.isoformat(),
        mlflow_run_id=run_id,
    )
    name = registered_model_name(provider)
    alias = slot_alias(baseline.gold_version, new_block.cassette_kind)
    _ensure_model(client, name)
    evidence = {k: tags[k] for k in (TAG_CASSETTES_EDITED, TAG_ANSWER_SET) if k in tags}
    if reason:
        evidence[TAG_PROMOTION_REASON] = reason
    version = client.create_model_version(
        name,
        source=f"runs:/{run_id}",
        run_id=run_id,
        tags={
            **_version_tags(new_block, baseline.gold_version, provider, f"run:{run_id}"),
            **evidence,
            **_metric_tags(new_block),
        },
        description=f"promoted from run {run_id}" + (f": {reason}" if reason else ""),
    )
    client.set_registered_model_alias(name, alias, version.version)
    if write_file:
        providers = dict(baseline.providers)
        providers[provider] = new_block
        updated = BaselineFile(gold_version=baseline.gold_version, providers=providers)
        write_json(baseline_path, updated.model_dump(mode="json"))
        _write_counts(client, run_id, provider, baseline_path.parent / BASELINE_PER_CONVERSATION_FILE)
    return Registered(provider, str(version.version), run_id, BaselineAction.PROMOTED, alias), new_block


def migrate_legacy(uri: str | None = None) -> list[tuple[str, str, str]]:
    """Give each provider's legacy ``baseline`` alias (one per provider, before issue 22) its
    gold version's alias (``baseline-<gold_version tag>``, v1 when untagged), unless that alias
    exists. Returns (model, new alias, version) for every alias set; the legacy alias stays."""
    uri = uri or tracking_uri()
    out = []
    with _store_errors(uri, "migrate the registered baselines"):
        client = _client(uri)
        for provider in PROVIDERS:
            name = registered_model_name(provider)
            model = _registered_model(client, name)
            aliases = dict(model.aliases or {}) if model is not None else {}
            if BASELINE_ALIAS not in aliases:
                continue
            version = client.get_model_version(name, str(aliases[BASELINE_ALIAS]))
            tags = dict(version.tags or {})
            alias = slot_alias(tags.get(TAG_GOLD_VERSION) or LEGACY_GOLD_VERSION, tags.get(TAG_CASSETTE_KIND))
            if alias in aliases:
                continue
            client.set_registered_model_alias(name, alias, version.version)
            out.append((name, alias, str(version.version)))
    return out


def counts_jsonl(rows: Sequence[BaselineCountsRow]) -> str:
    """Rows of ``baseline_per_conversation.jsonl``, one JSON object per line."""
    return "".join(
        dumps_line(
            {
                "provider": r.provider,
                "conversation_id": r.conversation_id,
                "sample": r.sample,
                "counts": {k: list(v) for k, v in sorted(r.counts.items())},
            }
        )
        + "\n"
        for r in rows
    )


def check_counts_reproduce(rows: Sequence[BaselineCountsRow], block: ProviderBaseline, where: str) -> None:
    """The counts must give the block's metrics back (every ratio and macro key it lists)."""
    from ..ratios import MACRO_PARTS, ratio_values, sum_counts

    values = ratio_values(sum_counts(r.counts for r in rows))
    for key, parts in MACRO_PARTS.items():
        if all(p in values for p in parts):
            values[key] = math.fsum(values[p] for p in parts) / len(parts)
    for key, recorded in sorted((block.metrics or {}).items()):
        if key not in values:
            continue
        if round(values[key] - recorded, 9) != 0:
            raise GoldDataError(
                f"{where}: the counts of provider {rows[0].provider!r} give {key} = {values[key]!r}, but "
                f"baseline_results.json says {recorded!r}; the two files must describe the same run. "
                "Rewrite both with `extraction-eval baseline promote --run-id ID`."
            )


def _write_counts(client: Any, run_id: str, provider: str, path: Path) -> None:
    """Replace ``provider``'s rows of the counts file with the promoted run's per-conversation counts."""
    import tempfile

    from mlflow.exceptions import MlflowException

    kept: list[BaselineCountsRow] = []
    if path.is_file():
        kept = [r for r in parse_baseline_counts(path.read_bytes(), str(path)) if r.provider != provider]
    new: list[BaselineCountsRow] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            local = Path(client.download_artifacts(run_id, "per_conversation.jsonl", tmp))
        except (MlflowException, OSError):
            local = None
        if local is not None and local.is_file():
            for line in local.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    counts = {k: (int(v[0]), int(v[1])) for k, v in row.get("counts", {}).items()}
                    new.append(BaselineCountsRow(provider, row["conversation_id"], int(row.get("sample", 0)), counts))
    rows = sorted(kept + new, key=lambda r: (r.provider, r.conversation_id, r.sample))
    if rows:
        atomic_write_text(path, counts_jsonl(rows))
    else:
        path.unlink(missing_ok=True)
