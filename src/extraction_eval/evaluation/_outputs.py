"""The run's files in the output folder: metrics.json, per_conversation.jsonl, responses.jsonl,
the manifest it used, and run.json (docs/tracking-reference.md)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._jsonio import atomic_write_bytes, atomic_write_lines, dumps_line, write_json
from .._settings import hide_uri_password
from ..gold import MANIFEST_FILE
from ..scoring import memory_rows, outcome_counts
from ._responses import write_responses
from ._score import ScoredRun

METRICS_FILE = "metrics.json"
PER_CONVERSATION_FILE = "per_conversation.jsonl"
RUN_FILE = "run.json"
COMPARISON_FILE = "comparison.md"


@dataclass(frozen=True)
class RunFiles:
    """What ``write_outputs`` wrote: the files to log as artifacts, and the per-conversation
    table's rows (``table_row``; the full rows are in per_conversation.jsonl, never all held)."""

    artifacts: tuple[Path, ...]
    table: tuple[dict[str, Any], ...]


def per_conversation_rows(scored: ScoredRun) -> Iterator[dict[str, Any]]:
    """One row per conversation: its score and what its answer cost (made one at a time)."""
    samples = scored.samples or (0,) * len(scored.answers)
    for conversation_score, answer, sample in zip(scored.report.conversations, scored.answers, samples, strict=True):
        row: dict[str, Any] = {"conversation_id": conversation_score.conversation_id, "sample": sample}
        row.update(conversation_score.to_json())
        row["outcomes"] = outcome_counts(conversation_score)
        row["usage"] = {
            "input_tokens": answer.input_tokens,
            "output_tokens": answer.output_tokens,
            "latency_s": answer.latency_s,
            "retries": answer.retries,
        }
        yield row


def table_row(row: Mapping[str, Any], *, repeated: bool) -> dict[str, Any]:
    """A row of the per-conversation table MLflow shows: flat columns a reviewer sorts by error.

    On a ``--repeat`` run (``repeated``) a conversation has a row per sample, told apart by a
    ``sample`` column (absent on a run of one sample, whose table is unchanged)."""
    return {
        "conversation_id": row["conversation_id"],
        **({"sample": row["sample"]} if repeated else {}),
        "status": row["status"],
        "expected": len(row["expected"]),
        "predicted": len(row["predicted"]),
        **row["outcomes"],
        "failure_reason": row["failure_reason"] or "",
        "error": row["error"] or "",
    }


def memory_table_rows(scored: ScoredRun) -> Iterator[dict[str, Any]]:
    """One row per expected or predicted memory of the run (``scoring.memory_rows``), made a
    conversation at a time as the run logs them; on a ``--repeat`` run each row says its
    conversation's ``sample``, after ``conversation_id``."""
    if not any(scored.samples):
        for conversation in scored.report.conversations:
            yield from memory_rows(conversation)
        return
    for conversation, sample in zip(scored.report.conversations, scored.samples, strict=True):
        for row in memory_rows(conversation):
            yield {"conversation_id": row["conversation_id"], "sample": sample, **row}


def write_outputs(output_dir: Path, gold_dir: Path, scored: ScoredRun) -> RunFiles:
    """metrics.json, per_conversation.jsonl, responses.jsonl and a copy of the gold folder's manifest."""
    output_dir.mkdir(parents=True, exist_ok=True)
    metrics_path = output_dir / METRICS_FILE
    write_json(metrics_path, dict(sorted(scored.metrics.items())))
    per_conversation = output_dir / PER_CONVERSATION_FILE
    repeated = any(scored.samples)
    table: list[dict[str, Any]] = []

    def lines() -> Iterator[str]:  # each full row written and dropped; only its table row is kept
        for row in per_conversation_rows(scored):
            table.append(table_row(row, repeated=repeated))
            yield dumps_line(row) + "\n"

    atomic_write_lines(per_conversation, lines())
    artifacts = [metrics_path, per_conversation, write_responses(output_dir, scored.answers, scored.samples)]
    # The manifest the run used, beside its numbers in the output folder too (and never
    # an older run's copy beside these numbers when this gold folder has none).
    manifest_copy = output_dir / MANIFEST_FILE
    if (gold_dir / MANIFEST_FILE).exists():
        atomic_write_bytes(manifest_copy, (gold_dir / MANIFEST_FILE).read_bytes())
        artifacts.append(manifest_copy)
    else:
        manifest_copy.unlink(missing_ok=True)
    return RunFiles(tuple(artifacts), tuple(table))


def write_run_json(
    output_dir: Path,
    *,
    run_id: str,
    experiment_id: str,
    experiment_name: str,
    tracking_uri: str,
    status: str,
    evidence: str,
    tags: Mapping[str, str],
) -> Path:
    """run.json: which MLflow run holds these numbers (the gate reads its run_id)."""
    path = output_dir / RUN_FILE
    write_json(
        path,
        {
            "run_id": run_id,
            "experiment_id": experiment_id,
            "experiment_name": experiment_name,
            "tracking_uri": hide_uri_password(tracking_uri, tracking_uri),
            "status": status,
            "evidence": evidence,
            "tags": dict(tags),
        },
    )
    return path
