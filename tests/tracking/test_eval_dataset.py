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


def test_records_are_written_a_batch_at_a_time_and_made_only_when_the_dataset_is_new(
    tiny_gold: Path, local_store: str
) -> None:
    """Issue 25, point 3: a large gold set's records are never all held. Written 3 at a time, the
    8 records are the same 8; a second call finds the dataset and never makes its records."""
    from extraction_eval.gold import load_gold
    from extraction_eval.tracking._eval_dataset import evaluation_dataset
    from extraction_eval.tracking._log import gold_dataset

    gold = load_gold(tiny_gold)
    info = gold_dataset(gold)
    assert info.records is not None
    client = MlflowClient(local_store)
    experiment_id = client.create_experiment("batches")
    made: list[int] = []

    def counted() -> object:
        for n, record in enumerate(info.records(), start=1):  # type: ignore[misc]
            made.append(n)
            yield record

    entity = evaluation_dataset(client, experiment_id, "gold-tiny", info.evaluation_digest, counted, batch=3)
    dataset = client.get_dataset(json.loads(entity.source)["dataset_id"])
    assert sorted(r.inputs["conversation_id"] for r in dataset.records) == [f"t0{i}" for i in range(1, 9)]
    assert made == list(range(1, 9))

    def never() -> object:
        raise AssertionError("the records of a dataset the store already holds were made again")

    again = evaluation_dataset(client, experiment_id, "gold-tiny", info.evaluation_digest, never)
    assert json.loads(again.source)["dataset_id"] == dataset.dataset_id


def test_the_digests_are_of_the_input_files_one_after_another(tiny_gold: Path) -> None:
    """Hashed a chunk at a time, the digests are those of the files' concatenation (and of the
    subset's ids after it, for a subset), as they were when the files were joined in memory."""
    import hashlib

    from extraction_eval.gold import load_gold
    from extraction_eval.tracking._log import gold_dataset

    gold = load_gold(tiny_gold)
    joined = b"".join((tiny_gold / name).read_bytes() for name in gold.input_files)
    whole = gold_dataset(gold)
    assert whole.evaluation_digest == hashlib.sha256(joined).hexdigest()
    assert whole.digest == whole.evaluation_digest[:16]
    some = gold.conversations[:3]
    subset = gold_dataset(gold, some, "dev")
    ids = "\n".join(c.conversation_id for c in some).encode()
    assert subset.digest == hashlib.sha256(joined + ids).hexdigest()[:16]
    assert subset.evaluation_digest == whole.evaluation_digest and subset.name.endswith("-dev")
