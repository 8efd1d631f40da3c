"""Gold set v1: the counts the seed promises, the distributions the issue asks for, frozen inputs."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter

import pytest
from typer.testing import CliRunner

from extraction_eval._jsonio import sha256_file
from extraction_eval.cli import app
from extraction_eval.gold import PINNED_GOLD, load_baseline_file, load_cassettes, load_gold
from extraction_eval.gold._subsets import SMOKE_REQUIREMENTS, smoke_coverage
from extraction_eval.scoring import DEFAULT_MATCHER
from extraction_eval.vocab import CATEGORIES, TEMPORAL_KINDS

from ..conftest import REPO

V1 = REPO / "gold" / "v1"


@pytest.fixture(scope="module")
def gold():  # type: ignore[no-untyped-def]
    return load_gold(V1)


def test_the_seed_counts(gold) -> None:  # type: ignore[no-untyped-def]
    stats = gold.stats()
    assert (stats["conversations"], stats["expected_memories"]) == (125, 130)
    assert (stats["multi_label"], stats["supersession"]) == (10, 10)
    assert all(stats[f"category/{c.value}"] > 0 for c in CATEGORIES)


def test_distributions(gold) -> None:  # type: ignore[no-untyped-def]
    per_category = Counter(c for m in gold.memories for c in m.categories)
    assert min(per_category[c] for c in CATEGORIES) >= 20, per_category
    per_kind = Counter(m.temporal_kind for m in gold.memories)
    assert min(per_kind[k] for k in TEMPORAL_KINDS) >= 15, per_kind
    assert len(gold.negative_ids) >= 10
    assert {len(c.turns) for c in gold.conversations} <= set(range(2, 13))
    assert min(len(c.turns) for c in gold.conversations) == 2
    assert max(len(c.turns) for c in gold.conversations) >= 8


def test_canonical_style_and_supersession_rules(gold) -> None:  # type: ignore[no-untyped-def]
    for memory in gold.memories:
        assert memory.content.startswith(("User ", "User's ")) and memory.content.endswith("."), memory.memory_id
        if memory.supersedes is not None:
            assert memory.supersedes.startswith(("User ", "User's ")), memory.memory_id
            # the stale fact is never also expected, and it is a different fact from the new one
            siblings = gold.by_conversation[memory.conversation_id]
            assert not any(
                DEFAULT_MATCHER.similarity(s.content, memory.supersedes) >= DEFAULT_MATCHER.threshold for s in siblings
            ), memory.memory_id


def test_frozen_inputs_match_the_pinned_table() -> None:
    pins = PINNED_GOLD["v1"]
    assert sha256_file(V1 / "conversations.jsonl") == pins["conversations.jsonl"]
    assert sha256_file(V1 / "expected_memories.jsonl") == pins["expected_memories.jsonl"]


def test_manifest_cassettes_and_review(gold) -> None:  # type: ignore[no-untyped-def]
    manifest = gold.manifest
    assert manifest.gold_version == "v1" and manifest.cassette_kind.value == "oracle_aligned_expected_json"
    assert manifest.label_review is not None and manifest.label_review.date == "2026-12-02"
    assert "independent" in manifest.label_review.summary
    cassettes = [c for _, c in load_cassettes(V1 / "openai_cassettes.jsonl")]
    assert len(cassettes) == 125
    assert smoke_coverage(manifest.subsets.smoke, gold.by_conversation) == SMOKE_REQUIREMENTS
    assert manifest.subsets.smoke == ("c014", "c017", "c036", "c078", "c091", "c100", "c109")  # docs/gold-set.md


def _stratum(gold, cid: str) -> str:  # type: ignore[no-untyped-def]
    """docs/gold-set.md's strata, written out again here rather than imported."""
    memories = gold.by_conversation.get(cid, ())
    if not memories:
        return "negative"
    if any(m.supersedes is not None for m in memories):
        return "supersession"
    if any(m.is_multi_label for m in memories):
        return "multi_label"
    return memories[0].categories[0].value


def test_fast_is_a_stratified_third(gold) -> None:  # type: ignore[no-untyped-def]
    strata = Counter(_stratum(gold, c.conversation_id) for c in gold.conversations)
    assert strata == {
        "episodic": 25,
        "preference": 20,
        "procedural": 19,
        "negative": 16,
        "factual": 14,
        "behavioral": 12,
        "supersession": 10,
        "multi_label": 9,
    }
    kept = Counter(_stratum(gold, cid) for cid in gold.manifest.subsets.fast)
    # ceil(n / 3) of each: 9 + 7 + 7 + 6 + 5 + 4 + 4 + 3 = 45
    assert kept == {
        "episodic": 9,
        "preference": 7,
        "procedural": 7,
        "negative": 6,
        "factual": 5,
        "behavioral": 4,
        "supersession": 4,
        "multi_label": 3,
    }
    assert len(gold.manifest.subsets.fast) == 45
    # the documented rule, recomputed here: in sha256 order of the id, every third of each stratum from the first
    groups: dict[str, list[str]] = {}
    for c in gold.conversations:
        groups.setdefault(_stratum(gold, c.conversation_id), []).append(c.conversation_id)
    chosen = {
        cid
        for members in groups.values()
        for cid in sorted(members, key=lambda i: hashlib.sha256(i.encode()).hexdigest())[::3]
    }
    assert chosen == set(gold.manifest.subsets.fast)


def test_baseline_file(gold) -> None:  # type: ignore[no-untyped-def]
    baseline = load_baseline_file(V1 / "baseline_results.json")
    openai, vllm = baseline.providers["openai"], baseline.providers["vllm"]
    assert (openai.model, openai.enforcement.value, openai.cassette_kind.value) == (
        "gpt-4o-mini",
        "ci",
        "oracle_aligned_expected_json",
    )
    assert openai.metrics == {k: 1.0 for k in openai.gated_metrics} and openai.last_refreshed
    assert openai.matcher == "fact-cover@2" and openai.mlflow_run_id
    assert (vllm.model, vllm.enforcement.value) == ("Qwen/Qwen2.5-14B-Instruct", "manual")
    assert vllm.metrics is None and vllm.last_refreshed is None and vllm.cassette_kind is None


# Counted by hand from gold/v1's files. A memory with two categories counts under each:
# 30 + 25 + 26 + 27 + 32 = 140 = 130 memories + 10 multi-label ones with a second category.
# Each memory has one temporal kind: 61 + 37 + 16 + 16 = 130.
V1_TABLE = """\
  conversations           125
  expected_memories       130
  negative_conversations  16
  multi_label             10
  supersession            10
  category/factual        30
  category/procedural     25
  category/preference     26
  category/behavioral     27
  category/episodic       32
  temporal/durable        61
  temporal/current        37
  temporal/past           16
  temporal/future         16
  turns/min               2
  turns/max               12
  cassettes               125 (oracle_aligned_expected_json)
  subset smoke            7
  subset fast             45
  frozen inputs           pinned
ok
"""


def test_gold_validate_prints_the_table() -> None:
    result = CliRunner().invoke(app, ["gold", "validate", "--gold", str(V1)])
    assert result.exit_code == 0, result.output
    assert result.output == f"gold 'v1' at {V1}\n" + V1_TABLE


def test_the_table_agrees_with_a_count_of_the_raw_files() -> None:
    """The hand-written table, recounted from the JSON lines without the package's loaders."""
    conversations = [json.loads(line) for line in (V1 / "conversations.jsonl").read_text().splitlines()]
    memories = [json.loads(line) for line in (V1 / "expected_memories.jsonl").read_text().splitlines()]
    manifest = json.loads((V1 / "cassette_manifest.json").read_text())
    cassettes = [json.loads(line) for line in (V1 / "openai_cassettes.jsonl").read_text().splitlines()]
    with_memories = {m["conversation_id"] for m in memories}
    turns = [len(c["turns"]) for c in conversations]
    counted = {
        "conversations": len(conversations),
        "expected_memories": len(memories),
        "negative_conversations": sum(c["conversation_id"] not in with_memories for c in conversations),
        "multi_label": sum(len(m["categories"]) > 1 for m in memories),
        "supersession": sum(m["supersedes"] is not None for m in memories),
        **{f"category/{c}": n for c, n in Counter(c for m in memories for c in m["categories"]).items()},
        **{f"temporal/{k}": n for k, n in Counter(m["temporal_kind"] for m in memories).items()},
        "turns/min": min(turns),
        "turns/max": max(turns),
        "cassettes": f"{len(cassettes)} ({manifest['cassette_kind']})",
        "subset smoke": len(manifest["subsets"]["smoke"]),
        "subset fast": len(manifest["subsets"]["fast"]),
    }
    rows = dict(re.split(r"\s{2,}", line.strip()) for line in V1_TABLE.splitlines()[:-2])
    assert rows == {k: str(v) for k, v in counted.items()}
    assert {len(m["categories"]) for m in memories if len(m["categories"]) > 1} == {2}  # so 130 + 10 = 140


def test_an_edit_to_v1_fails_even_with_a_regenerated_manifest(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    copy = tmp_path / "v1"
    shutil.copytree(V1, copy)
    path = copy / "expected_memories.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["temporal_kind"] = "current" if rows[0]["temporal_kind"] != "current" else "durable"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    runner = CliRunner()
    assert runner.invoke(app, ["cassettes", "oracle", "--gold", str(copy)]).exit_code == 0
    result = runner.invoke(app, ["gold", "validate", "--gold", str(copy)])
    assert result.exit_code == 2 and "is pinned to" in result.output


def test_a_new_folder_adds_cases_without_touching_v1(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    v2 = tmp_path / "v9"  # a version not pinned (v1, v2 and v3 are)
    v2.mkdir()
    for name in ("conversations.jsonl", "expected_memories.jsonl"):
        shutil.copy(V1 / name, v2 / name)
    extra = {
        "conversation_id": "c126",
        "session_date": "2026-11-02",
        "turns": [
            {"role": "user", "content": "i switched to decaf last week, sleeping way better"},
            {"role": "assistant", "content": "Nice, that often helps."},
        ],
    }
    with (v2 / "conversations.jsonl").open("a") as handle:
        handle.write(json.dumps(extra) + "\n")
    runner = CliRunner()
    assert runner.invoke(app, ["cassettes", "oracle", "--gold", str(v2)]).exit_code == 0
    result = runner.invoke(app, ["gold", "validate", "--gold", str(v2)])
    assert result.exit_code == 0, result.output
    assert "gold 'v9'" in result.output and "not pinned (no baseline yet)" in result.output
    assert json.loads((v2 / "cassette_manifest.json").read_text())["gold_version"] == "v9"
    assert sha256_file(V1 / "conversations.jsonl") == PINNED_GOLD["v1"]["conversations.jsonl"]
