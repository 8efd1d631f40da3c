"""Test helpers that change gold folders the way a user or a bad recording would."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from extraction_eval._jsonio import sha256_file

CASSETTES = "openai_cassettes.jsonl"


def read_rows(gold_dir: Path, name: str = CASSETTES) -> list[dict[str, Any]]:
    """The rows of one of a gold folder's JSONL files."""
    return [json.loads(line) for line in (gold_dir / name).read_text(encoding="utf-8").splitlines()]


def resign(gold_dir: Path, name: str = CASSETTES) -> None:
    """Set the manifest's sha256 of ``name`` to the file's, as the harness's own commands would."""
    manifest_path = gold_dir / "cassette_manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["files"][name] = sha256_file(gold_dir / name)
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def write_rows(gold_dir: Path, rows: list[dict[str, Any]], name: str = CASSETTES, *, sign: bool) -> None:
    """Rewrite one of a gold folder's JSONL files; with ``sign``, the manifest agrees with it,
    so only the checks past the file hash can tell."""
    (gold_dir / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if sign:
        resign(gold_dir, name)


def mutate_cassettes(gold_dir: Path, fn: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
    """Rewrite each cassette row with ``fn`` and re-sign the manifest's file hash.

    This is what a worse re-recording looks like to the harness: valid files whose
    answers are worse. (Without the re-signing, the contract gate would stop it.)
    """
    rows = [changed if (changed := fn(row)) is not None else row for row in read_rows(gold_dir)]
    write_rows(gold_dir, rows, sign=True)


def drop_memories(conversation_ids: set[str]) -> Callable[[dict[str, Any]], dict[str, Any] | None]:
    """A mutation: these conversations' answers come back empty."""

    def fn(row: dict[str, Any]) -> dict[str, Any] | None:
        if row["conversation_id"] in conversation_ids:
            return {**row, "response": json.dumps({"memories": []})}
        return None

    return fn


def edit_manifest(gold_dir: Path, **fields: Any) -> None:
    """Set manifest fields by hand, without re-signing anything; ``a__b`` names a nested field."""
    path = gold_dir / "cassette_manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for dotted, value in fields.items():
        target = data
        *parents, last = dotted.split("__")
        for part in parents:
            target = target[part]
        target[last] = value
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` (with a throwaway identity) and return its stripped stdout."""
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    return subprocess.run(
        ["git", *identity, *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def committed_gold_repo(
    root: Path, gold_source: Path, gold_rel: str = "gold/tiny", files: dict[str, str] | None = None
) -> tuple[Path, str]:
    """A new git repository at ``root`` whose first commit holds a copy of ``gold_source``
    (with fresh oracle cassettes) and ``files`` (name: text).

    Returns the gold folder and the commit's sha.
    """
    from .conftest import copy_gold

    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for name, text in (files or {}).items():
        (root / name).write_text(text, encoding="utf-8")
    gold = copy_gold(gold_source, root / gold_rel)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return gold, git(root, "rev-parse", "HEAD")


def assert_marked_failed(out: Path, reason: str = "") -> dict[str, Any]:
    """The output folder of a run that failed: run.json marks it FAILED (with ``reason`` in its
    reason), and none of the run's numbers are there (docs/reliability.md)."""
    marker = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert marker["status"] == "FAILED", marker
    assert reason in marker["reason"], marker
    assert not (out / "metrics.json").exists() and not (out / "per_conversation.jsonl").exists()
    assert not list(out.glob(".run-staging-*"))
    return dict(marker)
