"""A run's trace records are built when they are logged, a batch at a time, never all at once
(issue 25: a run at 100x gold v2 must not hold 63,000 traces' payloads). The tiny fixture
(t01..t08) run for real; the records the run hands to ``log_traces`` are captured."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import extraction_eval.evaluation._traces as traces_module
import extraction_eval.tracking._traces as logging_module
from extraction_eval import Mode, RunOptions, run_eval
from extraction_eval.evaluation import TraceRecord, trace_records
from extraction_eval.evaluation._traces import TraceRecords


def test_records_are_built_a_batch_at_a_time_and_equal_the_eager_ones(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    original = traces_module._record

    def counted(score: Any, *args: Any) -> TraceRecord:
        built.append(score.conversation_id)
        return original(score, *args)

    monkeypatch.setattr(traces_module, "_record", counted)
    monkeypatch.setattr(logging_module, "BATCH", 3)
    seen: dict[str, Any] = {}
    log = logging_module.log_traces

    def capture(client: Any, uri: str, experiment_id: str, run_id: str, records: Any, context: Any = None) -> Any:
        seen["records"], seen["built_before"] = records, list(built)
        ids = log(client, uri, experiment_id, run_id, records, context)
        seen["built_after"] = list(built)
        return ids

    monkeypatch.setattr(logging_module, "log_traces", capture)
    run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out", RunOptions(traces=True, progress=False))

    records = seen["records"]
    assert isinstance(records, TraceRecords)
    assert seen["built_before"] == []  # nothing built before logging starts
    ids = [f"t0{i}" for i in range(1, 9)]
    assert seen["built_after"] == ids  # each built once, in gold order, in batches of 3
    assert len(records) == 8
    # the same records as building them all at once
    eager = trace_records(records._scores, records._conversations, records._latencies, records._matcher)
    assert [r.conversation_id for r in eager] == ids
    assert records[0:8] == eager
    assert records[6:] == eager[6:] and len(records[6:]) == 2  # the last, short batch
    assert records[-1] == eager[7] and records[2] == eager[2]
    with pytest.raises(IndexError):
        records[8]
