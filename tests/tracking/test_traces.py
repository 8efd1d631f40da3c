"""Each conversation of a run is an MLflow trace (the conversation in, the parsed memories
out) with an assessment per expected and per spurious memory, linked to the run; --no-traces
logs none. A real embedded store, no mocks; the outcomes are worked out by hand from the
tiny fixture (t01..t08, t08 negative) with the answers of tests/evaluation/test_run_records.py:
t01 answered nothing, t05 broken JSON, t07 one category and one temporal kind wrong, t08
(negative) predicted "User likes tea.", the rest as the oracle wrote them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mlflow import MlflowClient
from typer.testing import CliRunner

from extraction_eval import Mode, RunOptions, TrackingError, run_eval
from extraction_eval.cli import app

from ..evaluation.test_run_records import _worse
from ..helpers import assert_marked_failed, mutate_cassettes


def _traces(client: MlflowClient, run: Any) -> dict[str, Any]:
    traces = client.search_traces(locations=[run.info.experiment_id], run_id=run.info.run_id, max_results=100)
    return {t.info.tags["conversation_id"]: t for t in traces}


def _outcomes(trace: Any) -> list[tuple[str, str]]:
    return sorted((a.metadata["memory_id"], a.value) for a in trace.info.assessments if a.name == "outcome")


def test_each_conversation_is_a_trace_with_its_outcomes(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    mutate_cassettes(tiny_gold, _worse)
    result = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")
    client = MlflowClient(local_store)
    run = client.get_run(result.logged.run_id)
    assert run.data.tags["traces"] == "8"
    traces = _traces(client, run)
    assert sorted(traces) == [f"t0{i}" for i in range(1, 9)]

    status = {cid: next(a.value for a in t.info.assessments if a.name == "status") for cid, t in traces.items()}
    assert status == {
        "t01": "all_missed",
        "t02": "all_matched",
        "t03": "all_matched",
        "t04": "all_matched",
        "t05": "failed",
        "t06": "all_matched",
        "t07": "partial",
        "t08": "false_positive",
    }
    expected = {
        json.loads(line)["conversation_id"]: [] for line in (tiny_gold / "conversations.jsonl").read_text().splitlines()
    }
    for line in (tiny_gold / "expected_memories.jsonl").read_text().splitlines():
        row = json.loads(line)
        expected[row["conversation_id"]].append(row["memory_id"])
    by_hand = {
        "t01": "missed",  # nothing answered
        "t05": "missed",  # a failed conversation predicts nothing
        "t02": "matched",
        "t03": "matched",
        "t04": "matched",
        "t06": "matched",
    }
    for cid, outcome in by_hand.items():
        assert _outcomes(traces[cid]) == [(m, outcome) for m in sorted(expected[cid])], cid
    first, second = sorted(expected["t07"])
    assert _outcomes(traces["t07"]) == [(first, "category_mismatch"), (second, "temporal_mismatch")]
    assert _outcomes(traces["t08"]) == [("predicted[0]", "spurious")]

    # the conversation in, the parsed memories out, and the pair's similarity and rule
    t07 = client.get_trace(traces["t07"].info.trace_id)
    root = t07.data.spans[0]
    assert root.inputs["conversation_id"] == "t07" and root.inputs["turns"][0]["role"] == "user"
    assert root.outputs["memories"][0]["categories"] == ["procedural"]
    mismatch = next(a for a in t07.info.assessments if a.value == "category_mismatch")
    assert mismatch.metadata["expected_categories"] == "behavioral, procedural"
    assert mismatch.metadata["predicted_categories"] == "procedural"
    assert float(mismatch.metadata["similarity"]) == 1.0
    assert mismatch.metadata["rule"] == "equal after normalisation" and "similarity 1.000" in mismatch.rationale
    assert mismatch.metadata["mlflow.assessment.sourceRunId"] == run.info.run_id
    t05 = client.get_trace(traces["t05"].info.trace_id)
    assert t05.data.spans[0].outputs["failure"]["reason"] == "invalid_json" and t05.info.state.value == "ERROR"
    missed = next(a for a in traces["t01"].info.assessments if a.name == "outcome")
    assert missed.metadata["rule"] == "nothing predicted" and "similarity" not in missed.metadata
    spurious = next(a for a in traces["t08"].info.assessments if a.name == "outcome")
    assert spurious.metadata["predicted"] == "User likes tea."
    assert spurious.metadata["rule"] == "negative conversation: nothing is expected"

    # filterable by outcome (issue 13): the trace search the UI's search box runs takes the
    # assessments as `feedback.<name>`
    def found(where: str) -> list[str]:
        hits = client.search_traces(
            locations=[run.info.experiment_id], run_id=run.info.run_id, filter_string=where, max_results=100
        )
        return sorted(t.info.tags["conversation_id"] for t in hits)

    assert found("feedback.status = 'all_matched'") == ["t02", "t03", "t04", "t06"]
    assert found("feedback.status = 'all_missed'") == ["t01"]
    assert found("feedback.outcome = 'category_mismatch'") == ["t07"]
    # linked to the run: the run's Traces tab (sourceRun metadata) and the entity association
    assert all(t.info.trace_metadata["mlflow.sourceRun"] == run.info.run_id for t in traces.values())


def test_no_traces_logs_none(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    result = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out", RunOptions(traces=False))
    client = MlflowClient(local_store)
    run = client.get_run(result.logged.run_id)
    assert run.data.tags["traces"] == "off" and run.data.params["no_traces"] == "true"
    assert client.search_traces(locations=[run.info.experiment_id], max_results=100) == []

    cli = CliRunner().invoke(
        app, ["run", "--mode", "smoke", "--gold", str(tiny_gold), "--output-dir", str(tmp_path / "cli"), "--no-traces"]
    )
    assert cli.exit_code == 0, cli.output
    assert client.search_traces(locations=[run.info.experiment_id], max_results=100) == []


def test_a_database_store_writes_the_traces_in_one_transaction(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a database store every trace of a batch commits together: one that cannot be written
    rolls back the others (no half-logged run), the run ends FAILED, and the store's own session
    maker and experiment lookup are back afterwards."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    original = SqlAlchemyStore._start_trace_once
    calls: list[str] = []

    def third_fails(self: SqlAlchemyStore, info: Any) -> Any:
        calls.append(info.trace_id)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return original(self, info)

    monkeypatch.setattr(SqlAlchemyStore, "_start_trace_once", third_fails)
    out = tmp_path / "out"
    with pytest.raises(TrackingError, match=r"ended FAILED\): \[Errno 28\] No space left on device"):
        run_eval(Mode.CASSETTE, tiny_gold, out)
    marker = assert_marked_failed(out, "No space left on device")
    client = MlflowClient(local_store)
    run = client.get_run(marker["run_id"])
    assert run.info.status == "FAILED"
    assert client.search_traces(locations=[run.info.experiment_id], max_results=100) == []  # t01, t02 rolled back
    monkeypatch.setattr(SqlAlchemyStore, "_start_trace_once", original)
    result = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "again")  # the same process's store still writes
    again = client.get_run(result.logged.run_id)
    assert len(client.search_traces(locations=[again.info.experiment_id], run_id=again.info.run_id)) == 8


def test_traces_carry_expectations_numeric_feedback_the_scorer_and_the_prompt(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    """MLflow's GenAI objects as MLflow means them (issue 24, point 3): the gold rows as an
    Expectation sourced from the gold set, per-conversation rates as numeric Feedback sourced
    from the matcher, and the prompt version the answers came from."""
    mutate_cassettes(tiny_gold, _worse)
    result = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")
    client = MlflowClient(local_store)
    run = client.get_run(result.logged.run_id)
    traces = _traces(client, run)

    def numbers(cid: str) -> dict[str, float]:
        names = ("recall", "precision", "strict_recall")
        return {a.name: a.value for a in traces[cid].info.assessments if a.name in names}

    # by hand from the fixture and _worse (module docstring)
    # a zero denominator by the contract's rule: 1.0 when nothing expected and nothing predicted, else 0.0
    assert numbers("t01") == {"recall": 0.0, "precision": 0.0, "strict_recall": 0.0}  # nothing predicted
    assert numbers("t02") == {"recall": 1.0, "precision": 1.0, "strict_recall": 1.0}
    assert numbers("t05") == {"recall": 0.0, "precision": 0.0, "strict_recall": 0.0}  # failed: no predictions
    assert numbers("t07") == {"recall": 1.0, "precision": 1.0, "strict_recall": 0.0}  # both pairs off by a label
    assert numbers("t08") == {"recall": 0.0, "precision": 0.0, "strict_recall": 0.0}  # negative, one spurious

    expectations = {cid: [a for a in t.info.assessments if a.name == "expected_memories"] for cid, t in traces.items()}
    assert all(len(found) == 1 for found in expectations.values())
    t01 = expectations["t01"][0]
    assert t01.expectation.value == [
        {
            "memory_id": "t01-m1",
            "content": "User is allergic to penicillin.",
            "categories": ["factual"],
            "temporal_kind": "durable",
            "supersedes": None,
        }
    ]
    assert t01.source.source_type == "HUMAN" and t01.source.source_id == f"gold {run.data.tags['gold_version']}"
    assert expectations["t08"][0].expectation.value == []

    feedback = [a for a in traces["t07"].info.assessments if a.name != "expected_memories"]
    assert {(a.source.source_type, a.source.source_id) for a in feedback} == {("CODE", run.data.tags["matcher"])}
    linked = json.loads(traces["t02"].info.tags["mlflow.linkedPrompts"])
    assert linked == json.loads(run.data.tags["mlflow.linkedPrompts"])
    assert linked[0]["name"] == "extraction-eval-system-prompt"


def test_the_prompt_version_lists_the_run_traces(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    """The prompt version page's Traces view searches the trace <-> prompt version association."""
    result = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")
    client = MlflowClient(local_store)
    run = client.get_run(result.logged.run_id)
    (link,) = json.loads(run.data.tags["mlflow.linkedPrompts"])
    found = client.search_traces(
        locations=[run.info.experiment_id],
        filter_string=f'prompt = "{link["name"]}/{link["version"]}"',
        max_results=100,
    )
    assert sorted(t.info.tags["conversation_id"] for t in found) == [f"t0{i}" for i in range(1, 9)]


def test_status_rationales_name_each_outcome_and_a_correct_negative_has_an_outcome(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    """A category mismatch is not "1 of 1 matched"; a correct negative conversation reads
    negative_ok in the outcome column, never null (issue 24, point 6)."""
    oracle = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "oracle")
    client = MlflowClient(local_store)
    traces = _traces(client, client.get_run(oracle.logged.run_id))
    assert _outcomes(traces["t08"]) == [("-", "negative_ok")]
    t08_status = next(a for a in traces["t08"].info.assessments if a.name == "status")
    assert (t08_status.value, t08_status.rationale) == (
        "negative_ok",
        "nothing expected and nothing predicted: a correct negative conversation",
    )
    mutate_cassettes(tiny_gold, _worse)
    worse = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "worse")
    traces = _traces(client, client.get_run(worse.logged.run_id))
    t07 = next(a for a in traces["t07"].info.assessments if a.name == "status")
    assert (t07.value, t07.rationale) == (
        "partial",
        "0 of 2 expected memories matched exactly; 1 with another category set, 1 with another temporal kind; "
        "0 missed, 0 spurious",
    )
    t01 = next(a for a in traces["t01"].info.assessments if a.name == "status")
    assert t01.rationale == "0 of 1 expected memories matched exactly; 1 missed, 0 spurious"


def _store_rows(db: Path, run_id: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every trace table, the run's id written as RUN, ids MLflow draws at random
    (assessment ids, association ids) and write times left out."""
    import sqlite3

    drop = {"assessment_id", "association_id", "created_timestamp", "last_updated_timestamp", "created_time"}
    out = {}
    with sqlite3.connect(db) as con:
        for table in (
            "trace_info",
            "trace_tags",
            "trace_request_metadata",
            "assessments",
            "spans",
            "entity_associations",
        ):
            cols = [r[1] for r in con.execute(f"pragma table_info({table})")]
            keep = [i for i, c in enumerate(cols) if c not in drop]
            rows = con.execute(f"select * from {table}").fetchall()
            out[table] = sorted(
                tuple(str(r[i]).replace(run_id, "RUN") if r[i] is not None else None for i in keep) for r in rows
            )
    return out


def test_a_batch_in_one_transaction_stores_what_mlflow_s_own_calls_store(tmp_path: Path) -> None:
    """The batched write (one transaction, the rows flushed once, the spans in the same
    transaction) leaves the store's trace tables row for row as MLflow's own calls do: one
    ``start_trace``, one ``link_prompts_to_trace`` and one ``log_spans`` per trace, each
    committing on its own. Ids and times are made the same on both sides."""
    import itertools
    from contextlib import nullcontext
    from types import SimpleNamespace

    import extraction_eval.tracking._traces as traces
    from extraction_eval.evaluation._traces import AssessmentRecord, TraceRecord

    def record(i: int, failed: bool = False) -> TraceRecord:
        return TraceRecord(
            name=f"extract t{i:02d}",
            conversation_id=f"t{i:02d}",
            inputs={"conversation_id": f"t{i:02d}", "turns": [{"role": "user", "content": f"Ich heiße Jörg {i}."}]},
            outputs={"memories": [{"content": f"User is called Jörg {i}.", "categories": ["factual"]}]},
            assessments=(
                AssessmentRecord("expected_memories", [{"memory_id": f"t{i:02d}-m1"}], "", {}, expectation=True),
                AssessmentRecord("status", "all_matched", "1 of 1", {"conversation_id": f"t{i:02d}"}),
                AssessmentRecord("recall", 1.0, "1 of 1", {}),
            ),
            latency_s=0.25 * i,
            failed=failed,
        )

    records = [record(i, failed=i == 3) for i in range(1, 6)]
    context = traces.TraceContext(scorer="fact-cover@2", gold="v9", prompt=("extraction-system-prompt", "1"))

    def log(where: str, batched: bool) -> dict[str, list[tuple[Any, ...]]]:
        counter = itertools.count()
        uri = f"sqlite:///{tmp_path / where}.db"
        client = MlflowClient(uri)
        experiment_id = client.create_experiment("traces", artifact_location=str(tmp_path / "artifacts"))
        run_id = client.create_run(experiment_id).info.run_id
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(traces, "BATCH", 2)  # three batches, the last one short
            patch.setattr(traces, "os", SimpleNamespace(urandom=lambda n: next(counter).to_bytes(n, "big")))
            patch.setattr(traces, "time", SimpleNamespace(time_ns=lambda: 1_700_000_000_000_000_000))
            if not batched:  # MLflow's own calls, one trace at a time
                patch.setattr(traces, "_one_transaction", lambda _store: nullcontext())
            traces.log_traces(client, uri, experiment_id, run_id, records, context)
        assert len(client.search_traces(locations=[experiment_id], run_id=run_id, max_results=10)) == 5
        return _store_rows(tmp_path / f"{where}.db", run_id)

    batched, one_by_one = log("batched", True), log("one-by-one", False)
    assert {table: len(rows) for table, rows in batched.items()} == {
        "trace_info": 5,
        "trace_tags": 5 * 4,  # name, conversation_id, linked prompts, artifact location
        "trace_request_metadata": 5 * 3,  # source run, schema version, finalized
        "assessments": 5 * 3,
        "spans": 5,
        "entity_associations": 5 * 2,  # trace -> prompt version, trace -> run
    }
    assert batched == one_by_one
