"""The gold set is an MLflow GenAI evaluation dataset (issue 24, point 3): one per gold version and
content, created by the first run in an experiment and reused by the next, one record per
conversation (its inputs and expected memories), linked to every run as an evaluation input."""

from __future__ import annotations

import json
from pathlib import Path

from mlflow import MlflowClient

from extraction_eval import Mode, run_eval


def test_the_gold_set_is_one_evaluation_dataset_linked_to_each_run(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    first = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "one")
    second = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "two")
    client = MlflowClient(local_store)
    experiment_id = first.logged.experiment_id
    datasets = client.search_datasets(experiment_ids=[experiment_id])
    version = client.get_run(first.logged.run_id).data.tags["gold_version"]
    assert [d.name for d in datasets] == [f"gold-{version}"]  # the second run reused it
    dataset = client.get_dataset(datasets[0].dataset_id)
    records = {r.inputs["conversation_id"]: r for r in dataset.records}
    assert sorted(records) == [f"t0{i}" for i in range(1, 9)]
    assert records["t01"].expectations == {
        "expected_memories": [
            {
                "memory_id": "t01-m1",
                "content": "User is allergic to penicillin.",
                "categories": ["factual"],
                "temporal_kind": "durable",
                "supersedes": None,
            }
        ]
    }
    assert records["t08"].expectations == {"expected_memories": []}  # the negative conversation
    assert records["t01"].inputs["session_date"] and records["t01"].inputs["turns"][0]["role"] == "user"
    for result in (first, second):
        inputs = client.get_run(result.logged.run_id).inputs.dataset_inputs
        linked = [i for i in inputs if i.dataset.source_type == "mlflow_evaluation_dataset"]
        assert len(linked) == 1 and linked[0].dataset.name == f"gold-{version}"
        assert json.loads(linked[0].dataset.source)["dataset_id"] == dataset.dataset_id
        assert {t.key: t.value for t in linked[0].tags} == {"mlflow.data.context": "evaluation"}
