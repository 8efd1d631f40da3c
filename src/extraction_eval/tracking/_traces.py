"""Log a run's conversations as MLflow traces with assessments, linked to the run.

Built as MLflow's own exporter builds them (``mlflow.tracing.export.mlflow_v3``), but for a
finished batch rather than one live span at a time, and through a ``TracingClient`` bound to
the run's tracking URI (never the process-global destination that ``mlflow.start_span`` and
``MlflowClient.start_trace`` export to):

1. each trace's ``TraceInfo`` with its assessments inline (``start_trace``: the trace, its
   tags, its metadata ``mlflow.sourceRun`` and its ``Feedback`` rows in one write, where
   ``mlflow.log_feedback`` would make one write per assessment);
2. every trace's root span, in batches of ``BATCH`` traces per ``log_spans`` call (on a
   database store in the same transaction as the batch's ``TraceInfo`` rows, which are flushed
   once per batch; one OTLP request to a server);
3. ``link_traces_to_run`` in batches of 100 (MLflow's limit), so that the run's Traces tab
   lists them.

The ``TraceInfo`` goes first: a ``start_trace`` for a trace that ``log_spans`` already created
takes the store's conflict path (a failed INSERT, a rollback, a locked re-read and a merge of
every tag, assessment and metadata row), which made the 125 calls of a gold v1 run about 1.7 s
slower against a server. In this order ``log_spans`` finds each trace finalized
(``mlflow.trace.infoFinalized``) and changes none of its fields (time, duration, state,
previews, tags, metadata, assessments), so the stored traces are the same.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from ..evaluation._traces import TraceRecord
from ._signals import signals_deferred

#: Traces per ``log_spans`` call and per ``link_traces_to_run`` call (MLflow allows 100).
BATCH = 100
SOURCE_ID = "extraction-eval"
PREVIEW_CHARS = 1000
#: The trace tag that links a trace to prompt versions (``mlflow.tracing.constant.TraceTagKey``).
LINKED_PROMPTS = "mlflow.linkedPrompts"
#: Trace tag naming the conversation, for search filters (``tag.conversation_id = 't01'``).
TAG_CONVERSATION = "conversation_id"


def _span(record: TraceRecord, trace_id: str, start_ns: int, end_ns: int) -> Any:
    from mlflow.entities import Span

    return Span.from_dict(
        {
            "trace_id": trace_id,
            "span_id": os.urandom(8).hex(),
            "parent_span_id": None,
            "name": record.name,
            "start_time_unix_nano": start_ns,
            "end_time_unix_nano": end_ns,
            "events": [],
            "status": {"code": "STATUS_CODE_ERROR" if record.failed else "STATUS_CODE_OK", "message": ""},
            "attributes": {
                "mlflow.traceRequestId": json.dumps(trace_id),
                "mlflow.spanType": json.dumps("PARSER"),
                "mlflow.spanInputs": json.dumps(record.inputs, ensure_ascii=False),
                "mlflow.spanOutputs": json.dumps(record.outputs, ensure_ascii=False),
            },
        }
    )


@dataclass(frozen=True)
class TraceContext:
    """What every trace of a run shares: who scored it (the matcher, shown as each Feedback's
    source), where its expectations come from (the gold set, each Expectation's source), and the
    prompt version that produced its answers (the trace tag MLflow's prompt page reads)."""

    scorer: str = SOURCE_ID
    gold: str = ""
    prompt: tuple[str, str] | None = None  # (name, version)


def _assessments(record: TraceRecord, trace_id: str, run_id: str, context: TraceContext) -> list[Any]:
    from mlflow.entities import AssessmentSource, Expectation, Feedback

    scorer = AssessmentSource(source_type="CODE", source_id=context.scorer)
    gold = AssessmentSource(source_type="HUMAN", source_id=f"gold {context.gold}".strip())
    out: list[Any] = []
    for a in record.assessments:
        metadata = {**a.metadata, "mlflow.assessment.sourceRunId": run_id}
        if a.expectation:
            out.append(Expectation(name=a.name, value=a.value, source=gold, trace_id=trace_id, metadata=metadata))
        else:
            out.append(
                Feedback(
                    name=a.name,
                    value=a.value,
                    source=scorer,
                    trace_id=trace_id,
                    rationale=a.rationale,
                    metadata=metadata,
                )
            )
    return out


def _info(
    record: TraceRecord, trace_id: str, experiment_id: str, run_id: str, start_ms: int, context: TraceContext
) -> Any:
    from mlflow.entities import TraceInfo, TraceLocation, TraceState

    tags = {"mlflow.traceName": record.name, TAG_CONVERSATION: record.conversation_id}
    if context.prompt is not None:
        tags[LINKED_PROMPTS] = json.dumps([{"name": context.prompt[0], "version": context.prompt[1]}])
    return TraceInfo(
        trace_id=trace_id,
        trace_location=TraceLocation.from_experiment_id(experiment_id),
        request_time=start_ms,
        execution_duration=int(record.latency_s * 1000),
        state=TraceState.ERROR if record.failed else TraceState.OK,
        request_preview=json.dumps(record.inputs, ensure_ascii=False)[:PREVIEW_CHARS],
        response_preview=json.dumps(record.outputs, ensure_ascii=False)[:PREVIEW_CHARS],
        trace_metadata={"mlflow.sourceRun": run_id, "mlflow.trace_schema.version": "3"},
        tags=tags,
        assessments=_assessments(record, trace_id, run_id, context),
    )


def _deferred(*_args: Any, **_kwargs: Any) -> None:
    """``Session.flush`` inside a batch's transaction: the batch's rows are flushed at its end."""


@contextmanager
def _one_transaction(store: Any) -> Iterator[Any]:
    """For a database store (SQLite, PostgreSQL, ...): every write inside shares one session and
    commits once, where each ``start_trace`` would commit on its own (about 7 ms a trace on
    SQLite, most of a gold v2 run's trace time). Yields the shared session, or None where it does
    not apply: an HTTP server's store (``RestStore``) writes one request per trace, as before.

    ``SqlAlchemyStore`` opens every write through its instance's ``ManagedSessionMaker``; inside
    this block that maker hands out the one session already open, so ``start_trace``'s own code
    (its tags, metadata, assessments and rollup markers) runs unchanged. A failure rolls the
    whole batch back and is raised: the run is then FAILED, as for any trace that cannot be
    written."""
    maker = getattr(store, "ManagedSessionMaker", None)
    if maker is None or not hasattr(store, "_start_trace_once"):
        yield None
        return
    with maker(read_only=False) as session:

        @contextmanager
        def shared(*_args: Any, **_kwargs: Any) -> Iterator[Any]:
            yield session

        # every start_trace reads its experiment again (2 ms each); inside one transaction it cannot change
        get_experiment = store.get_experiment
        experiments: dict[str, Any] = {}

        def cached(experiment_id: str) -> Any:
            if experiment_id not in experiments:
                experiments[experiment_id] = get_experiment(experiment_id)
            return experiments[experiment_id]

        # Each start_trace flushes its own rows at once, to catch a trace that already exists;
        # this batch's trace ids are new (random), so the rows are flushed together, once, at the
        # end of the batch (about 0.4 s less on gold v2's 630 traces; benchmarks.md, section 6)
        store.ManagedSessionMaker, store.get_experiment = shared, cached
        session.flush = _deferred
        try:
            yield session
            del session.flush
            session.flush()
        finally:
            store.ManagedSessionMaker = maker
            del store.get_experiment  # the class's method again
            if "flush" in vars(session):  # a write failed inside: the batch rolls back unflushed
                del session.flush


def _associate(session: Any, trace_ids: Sequence[str], prompt: Any) -> None:
    """What ``SqlAlchemyStore.link_prompts_to_trace`` adds for a new trace, for a batch at once."""
    import uuid

    from mlflow.entities.entity_type import EntityAssociationType
    from mlflow.store.tracking.dbmodels.models import SqlEntityAssociation

    association: Any = SqlEntityAssociation
    session.add_all(
        association(
            association_id=uuid.uuid4().hex,
            source_type=EntityAssociationType.TRACE,
            source_id=trace_id,
            destination_type=EntityAssociationType.PROMPT_VERSION,
            destination_id=f"{prompt.name}/{prompt.version}",
        )
        for trace_id in trace_ids
    )


def log_traces(
    client: Any,
    tracking_uri: str,
    experiment_id: str,
    run_id: str,
    records: Sequence[TraceRecord],
    context: TraceContext | None = None,
) -> list[str]:
    """Log ``records`` as traces of run ``run_id`` in ``experiment_id``; returns their ids."""
    from mlflow.tracing.client import TracingClient

    tracing = TracingClient(tracking_uri)
    context = context or TraceContext()
    # what link_prompts_to_trace reads of a PromptVersion: its name and version
    prompt = None if context.prompt is None else SimpleNamespace(name=context.prompt[0], version=context.prompt[1])
    now_ns = time.time_ns()
    ids: list[str] = []
    for start in range(0, len(records), BATCH):
        batch = records[start : start + BATCH]
        spans, infos = [], []
        for offset, record in enumerate(batch):
            trace_id = "tr-" + os.urandom(16).hex()
            start_ns = now_ns + (start + offset) * 1000  # gold order is the traces' time order
            end_ns = start_ns + int(record.latency_s * 1e9)
            spans.append(_span(record, trace_id, start_ns, end_ns))
            infos.append(_info(record, trace_id, experiment_id, run_id, start_ns // 1_000_000, context))
        with signals_deferred(), _one_transaction(tracing.store) as session:
            for info in infos:
                if session is not None:
                    tracing.store._start_trace_once(info)
                else:
                    tracing.start_trace(info)
            # the trace <-> prompt version association that the prompt version page's Traces view
            # searches by (the tag alone is not enough): in the same transaction on a database store
            # (the traces are new, so there is no association to merge with), else one call each
            if prompt is not None and session is not None:
                _associate(session, [info.trace_id for info in infos], prompt)
            elif prompt is not None:
                for info in infos:
                    tracing.store.link_prompts_to_trace(info.trace_id, [prompt])
            if session is not None:
                # the batch's traces written (flushed, not committed): its spans join the same
                # transaction, and log_spans finds every trace there, finalized
                type(session).flush(session)
            tracing.log_spans(experiment_id, spans)
        batch_ids = [info.trace_id for info in infos]
        with signals_deferred():
            client.link_traces_to_run(batch_ids, run_id)
        ids.extend(batch_ids)
    return ids
