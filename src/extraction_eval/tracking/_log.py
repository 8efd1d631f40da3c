"""Log one evaluation as one MLflow run: tags, params, metrics in one batch, dataset, artifacts.

Only ``MlflowClient`` is used, never the fluent API: the fluent tracking URI and
active run are process-global state, and its start-up (context providers, pandas
for datasets and tables) costs seconds that the eval does not need.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from .._exceptions import Terminated, TrackingError
from .._jsonio import sha256_files
from .._settings import mask_secrets
from ..evaluation._traces import TraceRecord
from ..gold import Conversation, GoldSet
from ..mlflow_names import TAG_GOLD_VERSION, TAG_LOGGED_ARTIFACTS, TAG_MATCHER, TAG_NOTE, TAG_RUN_NAME
from ._background import Background, WorkerFailed
from ._connect import configure_mlflow_client, mlflow_client
from ._refused import refusal
from ._signals import hold_signals, release_signals, signals_deferred

#: The run's tables (MLflow's ``log_table`` format), shown in the run's Artifacts view.
TABLE_FILE = "per_conversation_table.json"
MEMORY_TABLE_FILE = "per_memory_table.json"
PLOTS_DIR = "plots"


@dataclass(frozen=True)
class DatasetInfo:
    """The gold set as an MLflow dataset input."""

    name: str
    digest: str
    source: str
    rows: Sequence[Mapping[str, Any]]
    #: The gold version's evaluation dataset: its name, the digest of all its conversations and
    #: expected memories, and what makes its records, one per conversation (inputs and
    #: expectations), called only when the store does not hold the dataset yet.
    evaluation_name: str = ""
    evaluation_digest: str = ""
    records: Callable[[], Iterable[Mapping[str, Any]]] | None = None


@dataclass(frozen=True)
class LoggedRun:
    run_id: str
    experiment_id: str
    experiment_name: str
    tracking_uri: str
    status: str


def gold_dataset(gold: GoldSet, scored: Sequence[Conversation] | None = None, subset: str = "full") -> DatasetInfo:
    """The conversations a run scored as a dataset input: one row per conversation; the digest
    is of the gold folder's input files (the forbidden memories too, when it has them) for the
    full set, or of them and the subset's ids for a subset. The evaluation dataset's records are
    built only if the store has no such dataset yet, and a batch at a time (``records``)."""
    conversations = gold.conversations if scored is None else tuple(scored)
    files = [gold.path / name for name in gold.input_files]
    whole = len(conversations) == len(gold.conversations)
    full_digest = sha256_files(files)
    ids = b"" if whole else "\n".join(c.conversation_id for c in conversations).encode()
    rows = [
        {
            "conversation_id": c.conversation_id,
            "session_date": c.session_date,
            "turns": len(c.turns),
            "expected_memories": len(gold.by_conversation[c.conversation_id]),
        }
        for c in conversations
    ]
    return DatasetInfo(
        name=f"gold-{gold.version}" if whole else f"gold-{gold.version}-{subset}",
        digest=(full_digest if whole else sha256_files(files, ids))[:16],
        source=str(gold.path.resolve()),
        rows=rows,
        evaluation_name=f"gold-{gold.version}",
        evaluation_digest=full_digest,
        records=partial(evaluation_records, gold),
    )


def evaluation_records(gold: GoldSet) -> Iterator[dict[str, Any]]:
    """One record per conversation of the gold set (inputs and expectations), made one at a time."""
    for c in gold.conversations:
        yield {
            "inputs": {
                "conversation_id": c.conversation_id,
                "session_date": c.session_date,
                "turns": [{"role": t.role, "content": t.content} for t in c.turns],
            },
            "expectations": {
                "expected_memories": [
                    e.model_dump(mode="json", exclude={"conversation_id"})
                    for e in gold.by_conversation[c.conversation_id]
                ]
            },
            "tags": {"conversation_id": c.conversation_id},
        }


#: A table's rows, or what makes them (called twice: once for the columns, once for the rows), so
#: that a large run's rows are never all held (issue 25, point 3).
TableRows = Sequence[Mapping[str, Any]] | Callable[[], Iterable[Mapping[str, Any]]]


def table_chunks(rows: TableRows) -> Iterator[str]:
    """MLflow's table artifact format (pandas ``orient="split"``; nested values as JSON text), a row
    at a time: joined, the text of ``json.dumps({"columns": ..., "data": ...})``."""
    made = rows if callable(rows) else lambda: rows
    columns: list[str] = []
    for row in made():
        columns.extend(k for k in row if k not in columns)
    yield f'{{"columns": {json.dumps(columns, ensure_ascii=False)}, "data": ['
    for n, row in enumerate(made()):
        values = [
            value if isinstance(value, (str, int, float, type(None))) else json.dumps(value, ensure_ascii=False)
            for value in (row.get(c) for c in columns)
        ]
        yield (", " if n else "") + json.dumps(values, ensure_ascii=False)
    yield "]}"


def _dataset_entity(dataset: DatasetInfo) -> Any:
    from mlflow.entities import Dataset

    columns = sorted({k for row in dataset.rows for k in row})
    types = {k: "long" if all(isinstance(r.get(k), int) for r in dataset.rows) else "string" for k in columns}
    schema = {"mlflow_colspec": [{"type": types[c], "name": c, "required": True} for c in columns]}
    return Dataset(
        name=dataset.name,
        digest=dataset.digest,
        source_type="local",
        source=json.dumps({"uri": dataset.source}),
        schema=json.dumps(schema),
        profile=json.dumps({"num_rows": len(dataset.rows), "num_elements": len(dataset.rows) * len(columns)}),
    )


def log_eval_run(
    *,
    tracking_uri: str,
    experiment_name: str,
    run_id: str | None,
    run_name: str,
    tags: Mapping[str, str],
    params: Mapping[str, str],
    metrics: Mapping[str, float],
    description: str,
    artifacts: Sequence[Path],
    tables: Mapping[str, TableRows],
    dataset: DatasetInfo,
    failed: bool,
    plots: Sequence[Path] | Callable[[], Sequence[Path]] = (),
    prompt: tuple[str, str] | None = None,
    traces: Sequence[TraceRecord] = (),
) -> LoggedRun:
    """Create (or, under ``mlflow run``, continue) the run and log everything to it.

    ``tables`` maps an artifact name to its rows (MLflow table format); ``plots`` are
    logged under ``plots/``. ``plots`` may instead be a function that writes them and
    returns their paths: it then runs in a worker thread from the moment the run exists,
    while the rest is logged (drawing is CPU work here, logging mostly waits for the store),
    and its files are logged after the traces. An exception it raises ends the run FAILED
    like any other and propagates unchanged. Under ``mlflow run`` the run keeps the params
    MLflow already logged for it (the entry point's), and gets the harness's run name. ``prompt`` (text,
    sha256) is registered in the Prompt Registry and linked to the run. ``traces`` (one per
    conversation, with their assessments) are logged in batches and linked to the run
    (``tracking._traces``).

    Once the run exists, any failure (an exception, SIGINT, SIGTERM) ends it FAILED or
    KILLED and names it on stderr; nothing is left RUNNING without a word.
    """
    from mlflow.exceptions import MlflowException

    configure_mlflow_client()
    held: Any = None
    try:
        client = mlflow_client(tracking_uri, registry=prompt is not None)  # the prompt registry too
        existing_params: Mapping[str, str] = {}
        extra_tags: dict[str, str] = {}
        if run_id is not None:
            existing = client.get_run(run_id)
            experiment_id = existing.info.experiment_id
            existing_params = existing.data.params
            extra_tags[TAG_RUN_NAME] = run_name
            rid = run_id
        else:
            experiment = client.get_experiment_by_name(experiment_name)
            experiment_id = (
                experiment.experiment_id if experiment is not None else client.create_experiment(experiment_name)
            )
            source_tags = {
                "mlflow.user": getpass.getuser(),
                "mlflow.source.name": "extraction-eval",
                "mlflow.source.type": "LOCAL",
            }
            held = hold_signals()  # from here a signal waits until the run's id is known (below)
            rid = client.create_run(experiment_id, run_name=run_name, tags=source_tags).info.run_id
    except (MlflowException, OSError) as exc:
        release_signals(held)
        refused = refusal(exc, tracking_uri, f"log the run to experiment {experiment_name!r}")
        raise (refused or _tracking_error(tracking_uri, exc, None)) from None
    except BaseException:
        release_signals(held)
        raise
    try:
        release_signals(held)  # a signal that came during create_run is raised here, and ends the run
        drawing = Background(plots, "extraction-eval-plots") if callable(plots) else None
        drawn: Sequence[Path] = () if callable(plots) else plots
        # every write with SIGINT and SIGTERM held (tracking._signals): a signal never cuts one in half
        try:
            with signals_deferred():
                _log_everything(
                    client,
                    rid,
                    experiment_id=experiment_id,
                    tags={**tags, **extra_tags, TAG_NOTE: description},
                    params={k: v for k, v in params.items() if k not in existing_params},
                    metrics=metrics,
                    artifacts=artifacts,
                    plots=drawn,
                    tables=tables,
                    dataset=dataset,
                )
            prompt_uri = None
            if prompt is not None:
                from ._prompt import link_system_prompt

                with signals_deferred():
                    prompt_uri = link_system_prompt(client, rid, *prompt)
            if traces:
                from ._traces import TraceContext, log_traces

                context = TraceContext(
                    scorer=tags.get(TAG_MATCHER, "extraction-eval"),
                    gold=tags.get(TAG_GOLD_VERSION, ""),
                    prompt=_prompt_version(prompt_uri),
                )
                log_traces(client, tracking_uri, experiment_id, rid, traces, context)  # each batch held on its own
            if drawing is not None:
                for path in drawing.result():
                    with signals_deferred():
                        client.log_artifact(rid, str(path), PLOTS_DIR)
        finally:
            if drawing is not None:
                drawing.wait()  # never writing into the staging folder once this run has failed
        status = "FAILED" if failed else "FINISHED"
        with signals_deferred():
            client.set_terminated(rid, status)
        name = client.get_experiment(experiment_id).name
    except WorkerFailed as failure:
        error = failure.error  # the worker's own exception, unchanged (not a tracking error)
        end_orphan(client, rid, error)
        setattr(error, "run_id", rid)  # noqa: B010 - the output folder's marker names the run
        raise error from None
    except BaseException as exc:
        ended = end_orphan(client, rid, exc)
        setattr(exc, "run_id", rid)  # noqa: B010 - the output folder's marker names the run
        if isinstance(exc, (MlflowException, OSError)):
            refused = refusal(exc, tracking_uri, f"log the run to experiment {experiment_name!r}")
            if refused is not None:
                refused.run_id = rid
            raise (refused or _tracking_error(tracking_uri, exc, rid, ended)) from None
        raise
    return LoggedRun(rid, experiment_id, name, tracking_uri, status)


def _prompt_version(uri: str | None) -> tuple[str, str] | None:
    """``prompts:/<name>/<version>`` as (name, version)."""
    if not uri or not uri.startswith("prompts:/"):
        return None
    name, _, version = uri[len("prompts:/") :].rpartition("/")
    return (name, version) if name and version else None


def _log_everything(
    client: Any,
    rid: str,
    *,
    experiment_id: str,
    tags: Mapping[str, str],
    params: Mapping[str, str],
    metrics: Mapping[str, float],
    artifacts: Sequence[Path],
    plots: Sequence[Path],
    tables: Mapping[str, TableRows],
    dataset: DatasetInfo,
) -> None:
    from mlflow.entities import DatasetInput, InputTag, Metric, Param, RunTag

    now = int(time.time() * 1000)
    all_tags = {**tags, TAG_LOGGED_ARTIFACTS: json.dumps([{"path": name, "type": "table"} for name in tables])}
    client.log_batch(
        rid,
        metrics=[Metric(k, float(v), now, 0) for k, v in sorted(metrics.items())],
        params=[Param(k, v) for k, v in sorted(params.items())],
        tags=[RunTag(k, v) for k, v in sorted(all_tags.items())],
    )
    evaluation = [InputTag("mlflow.data.context", "evaluation")]
    inputs = [DatasetInput(_dataset_entity(dataset), tags=evaluation)]
    if dataset.records is not None:
        from ._eval_dataset import evaluation_dataset

        entity = evaluation_dataset(
            client, experiment_id, dataset.evaluation_name, dataset.evaluation_digest, dataset.records
        )
        if entity is not None:
            inputs.append(DatasetInput(entity, tags=evaluation))
    client.log_inputs(rid, datasets=inputs)
    for path in artifacts:
        client.log_artifact(rid, str(path))
    for path in plots:
        client.log_artifact(rid, str(path), PLOTS_DIR)
    with tempfile.TemporaryDirectory() as tmp:
        for name, rows in tables.items():
            table = Path(tmp) / name
            with open(table, "w", encoding="utf-8") as fh:
                fh.writelines(table_chunks(rows))
            client.log_artifact(rid, str(table))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (SIGINT)"
    if isinstance(exc, Terminated):
        return "terminated (SIGTERM)"
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first[:300]}" if first else type(exc).__name__


#: How long ending a run may retry a store that is locked or busy.
END_RETRY_S = 15.0


def _release_store(client: Any) -> None:
    """Close the idle pooled connections of a database store, so the next attempt opens a fresh one
    (best effort: a connection still checked out is not touched; the signal deferral around every
    write is what keeps a write from being cut in half)."""
    store = getattr(getattr(client, "_tracking_client", None), "store", None)
    engine = getattr(store, "engine", None)
    if engine is not None:
        with contextlib.suppress(Exception):
            engine.dispose()


def _set_terminated(client: Any, rid: str, status: str) -> None:
    """``set_terminated``, retried for END_RETRY_S while the store is locked or busy."""
    deadline = time.monotonic() + END_RETRY_S
    delay = 0.1
    while True:
        try:
            client.set_terminated(rid, status)
            return
        except Exception as exc:
            text = str(exc).lower()
            if not any(s in text for s in ("database is locked", "locked", "busy", "temporarily unavailable")):
                raise
            if time.monotonic() + delay > deadline:
                raise
            _release_store(client)
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


def end_orphan(client: Any, rid: str, exc: BaseException) -> str | None:
    """End run ``rid`` KILLED (a signal) or FAILED (anything else) and say so on stderr; when the
    store cannot be reached to end it, say that it is left RUNNING and how to end it. Returns
    the status it ended with, None when it could not be ended. A second signal waits until the
    status is written, and a store locked by the interrupted write is retried (END_RETRY_S)."""
    status = "FAILED" if isinstance(exc, Exception) else "KILLED"
    reason = _reason(exc)
    ended: str | None = status
    try:
        with signals_deferred():
            _set_terminated(client, rid, status)
        line = f"MLflow run {rid} ended {status}: {reason}"
    except Exception as end_exc:  # the store is gone too: name the run so it can be ended by hand
        ended = None
        line = (
            f"MLflow run {rid} is left RUNNING ({reason}; ending it failed: {type(end_exc).__name__}); "
            f"end it with `mlflow runs delete --run-id {rid}` or in the UI"
        )
    sys.stderr.write(mask_secrets(line) + "\n")
    sys.stderr.flush()
    return ended


def _tracking_error(uri: str, exc: BaseException, rid: str | None, ended: str | None = None) -> TrackingError:
    """What failed, named: a store that refused or could not be written, or a server that is down."""
    detail = str(getattr(exc, "message", None) or exc).strip().splitlines()
    first = detail[0][:300] if detail else type(exc).__name__
    run = "" if rid is None else f" (run {rid} ended {ended})" if ended else f" (run {rid} is left RUNNING)"
    unreachable = any(
        s in first for s in ("Connection refused", "Max retries exceeded", "Failed to establish", "timed out")
    )
    if unreachable:
        message = (
            f"cannot reach the MLflow tracking server at {uri!r}{run}: {first}. Start the server or fix "
            "MLFLOW_TRACKING_URI."
        )
    elif isinstance(exc, OSError) and not uri.startswith(("http://", "https://")):
        message = (
            f"cannot write the MLflow tracking store at {uri!r}{run}: {first}. Make the store writable, free "
            "space on its disk, or point MLFLOW_TRACKING_URI at another store."
        )
    else:
        message = (
            f"the MLflow tracking store at {uri!r} refused or could not store the run{run}: {first}. Check the "
            "server's log (a full or read-only disk on the server shows here) and MLFLOW_TRACKING_URI."
        )
    error = TrackingError(mask_secrets(message))
    error.run_id = rid
    return error


def discard_project_run(tracking_uri: str, run_id: str) -> bool:
    """Delete the run ``mlflow run`` made for an entry point whose arguments were refused.

    MLflow creates a project's run before the entry point's command starts, so a refused
    ``-P`` value cannot stop that; the command refuses it as its first step and deletes the
    run, which then holds only MLflow's own tags and params (never a metric). It is ended
    ``KILLED`` first, so that ``mlflow run`` does not try to end a deleted run. Returns
    whether the run was deleted: a run with metrics, or one not made by ``mlflow run``, is
    left alone.
    """
    from mlflow.exceptions import MlflowException

    configure_mlflow_client()
    try:
        client = mlflow_client(tracking_uri)
        run = client.get_run(run_id)
        if "mlflow.project.entryPoint" not in run.data.tags or run.data.metrics:
            return False
        client.set_terminated(run_id, "KILLED")
        client.delete_run(run_id)
        return True
    except (MlflowException, OSError):
        return False
