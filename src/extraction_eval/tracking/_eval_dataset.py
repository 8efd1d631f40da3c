"""The gold set as an MLflow GenAI evaluation dataset, linked to the runs that used it.

One dataset per gold version and content (``gold-<v>``, tag ``gold_digest``; a store that
already holds a ``gold-<v>`` of other content gets ``gold-<v>-<digest>``), created in the run's
experiment the first time and reused after: one record per conversation, its inputs (the
conversation as the model reads it) and its expectations (the expected memories). The run
logs it as an input with context ``evaluation``, so the experiment's Datasets tab lists it and
the run page links it. Records are written through the run's own store (never MLflow's
process-global tracking URI).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import islice
from typing import Any, TypeVar

DIGEST_TAG = "gold_digest"
#: Records written per upsert request when the dataset is created.
RECORD_BATCH = 1_000

T = TypeVar("T")


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` (the last shorter); ``itertools.batched`` is Python 3.12."""
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _find(client: Any, experiment_id: str, name: str) -> Any | None:
    found = client.search_datasets(experiment_ids=[experiment_id], filter_string=f"name = '{name}'", max_results=10)
    return next((d for d in found if d.name == name), None)


def evaluation_dataset(
    client: Any,
    experiment_id: str,
    name: str,
    digest: str,
    records: Callable[[], Iterable[Mapping[str, Any]]],
    batch: int = RECORD_BATCH,
) -> Any:
    """The MLflow ``Dataset`` entity of the gold set's evaluation dataset (created when missing,
    its records made by ``records()`` and written ``batch`` at a time, so that a large gold set's
    records are never all held); None on a store without evaluation datasets (MLflow's file
    store)."""
    from mlflow.genai.datasets.evaluation_dataset import EvaluationDataset

    try:
        existing = _find(client, experiment_id, name)
    except NotImplementedError:
        return None
    if existing is not None and (existing.tags or {}).get(DIGEST_TAG) != digest:
        name = f"{name}-{digest[:12]}"
        existing = _find(client, experiment_id, name)
    if existing is None:
        existing = client.create_dataset(name=name, experiment_id=[experiment_id], tags={DIGEST_TAG: digest})
        store = client._tracking_client.store
        for chunk in batched(records(), batch):
            store.upsert_dataset_records(dataset_id=existing.dataset_id, records=[dict(r) for r in chunk])
        existing = client.get_dataset(existing.dataset_id)
    wrapper: Any = EvaluationDataset
    return wrapper(existing)._to_mlflow_entity()
