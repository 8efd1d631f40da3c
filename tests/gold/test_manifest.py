"""Counts, subsets and sha256 must agree with the manifest and the pinned table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extraction_eval._jsonio import sha256_file
from extraction_eval.gold import _pinned, check_gold, load_cassettes, load_gold
from extraction_eval.gold._subsets import SMOKE_REQUIREMENTS, choose_subsets, smoke_coverage

from ..helpers import edit_manifest, read_rows, write_rows


def problems(gold: Path) -> list[str]:
    data = load_gold(gold)
    assert data.manifest is not None
    cassettes = [c for _, c in load_cassettes(gold / "openai_cassettes.jsonl")]
    return [p.kind + ": " + p.message for p in check_gold(data, data.manifest, cassettes)]


def test_fresh_oracle_manifest_is_consistent(tiny_gold: Path) -> None:
    assert problems(tiny_gold) == []
    manifest = json.loads((tiny_gold / "cassette_manifest.json").read_text())
    assert manifest["counts"] == {
        "conversations": 8,
        "expected_memories": 8,
        "cassettes": 8,
        "multi_label": 1,
        "supersession": 1,
        "negative_conversations": 1,
    }
    assert manifest["gold_version"] == "tiny"


def test_count_mismatch(tiny_gold: Path) -> None:
    edit_manifest(tiny_gold, counts__multi_label=3)
    assert problems(tiny_gold) == [
        f"data: {tiny_gold / 'cassette_manifest.json'}: field 'counts.multi_label' is 3 but the "
        f"files hold 1; regenerate the manifest with `extraction-eval cassettes oracle --gold {tiny_gold}`."
    ]


def test_subset_naming_unknown_conversation(tiny_gold: Path) -> None:
    edit_manifest(tiny_gold, subsets__fast=["t01", "t42"])
    (message,) = problems(tiny_gold)
    assert "subset 'fast' names conversations that do not exist: ['t42']" in message


def test_smoke_that_misses_a_requirement(tiny_gold: Path) -> None:
    edit_manifest(tiny_gold, subsets__smoke=["t01"])
    (message,) = problems(tiny_gold)
    assert "subset 'smoke' does not cover" in message and "'negative'" in message


def test_subset_that_is_not_the_rules_choice(tiny_gold: Path) -> None:
    chosen = load_gold(tiny_gold).manifest.subsets.fast
    other = next(f"t0{i}" for i in range(1, 9) if f"t0{i}" not in chosen)
    edit_manifest(tiny_gold, subsets__fast=[*chosen[1:], other])
    (message,) = problems(tiny_gold)
    assert "field 'subsets.fast' is not the subset the documented rule chooses" in message
    assert f"(not chosen: [{other!r}]; missing: [{chosen[0]!r}])" in message
    assert f"regenerate the manifest with `extraction-eval cassettes oracle --gold {tiny_gold}`." in message


def test_file_sha_mismatch_is_drift_with_both_hashes(tiny_gold: Path) -> None:
    path = tiny_gold / "expected_memories.jsonl"
    path.write_text(path.read_text().replace("penicillin", "amoxicillin"))
    (message,) = [p for p in problems(tiny_gold) if "sha256" in p]
    assert message.startswith("drift: ")
    recorded = json.loads((tiny_gold / "cassette_manifest.json").read_text())["files"]["expected_memories.jsonl"]
    assert recorded in message and "git checkout" in message


def test_pinned_table_catches_an_edit_even_after_the_manifest_is_regenerated(
    tiny_gold: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from extraction_eval.cassettes import write_oracle_cassettes

    pins = {name: sha256_file(tiny_gold / name) for name in _pinned.FROZEN_FILES}
    monkeypatch.setattr(_pinned, "PINNED_GOLD", {"tiny": pins})
    monkeypatch.setattr("extraction_eval.gold._check.PINNED_GOLD", {"tiny": pins})
    assert problems(tiny_gold) == []
    path = tiny_gold / "conversations.jsonl"
    path.write_text(path.read_text().replace("porto", "braga"))
    write_oracle_cassettes(tiny_gold)  # the manifest now agrees with the edited file...
    found = problems(tiny_gold)
    assert len(found) == 1  # ...but the pinned table does not
    assert "is pinned to" in found[0] and pins["conversations.jsonl"] in found[0]
    assert "new version folder" in found[0]


def test_subsets_are_deterministic_and_cover_smoke(tiny_gold: Path) -> None:
    data = load_gold(tiny_gold)
    first = choose_subsets(data.conversations, data.by_conversation)
    second = choose_subsets(tuple(reversed(data.conversations)), data.by_conversation)
    assert set(first.smoke) == set(second.smoke) and set(first.fast) == set(second.fast)
    assert smoke_coverage(first.smoke, data.by_conversation) == SMOKE_REQUIREMENTS


ORACLE_FIX = "`extraction-eval cassettes oracle --gold {gold}`"
RECORD_FIX = "`EXTRACTION_EVAL_MODE=record extraction-eval run --mode record --gold {gold}`"


@pytest.mark.parametrize(
    ("kind", "fix", "wrong"),
    [
        ("oracle_aligned_expected_json", ORACLE_FIX, "--mode record"),
        ("live_openai_recorded", RECORD_FIX, "`extraction-eval cassettes oracle"),
    ],
)
def test_every_fix_follows_the_manifests_cassette_kind(kind: str, fix: str, wrong: str, tiny_gold: Path) -> None:
    """A live folder is never told to run `cassettes oracle`: that would replace its recordings."""
    write_rows(tiny_gold, [{**r, "cassette_kind": kind} for r in read_rows(tiny_gold)], sign=True)
    chosen = load_gold(tiny_gold).manifest.subsets.fast
    other = next(f"t0{i}" for i in range(1, 9) if f"t0{i}" not in chosen)
    edit_manifest(tiny_gold, cassette_kind=kind, counts__multi_label=3, subsets__fast=[*chosen[1:], other])
    manifest = json.loads((tiny_gold / "cassette_manifest.json").read_text())
    del manifest["files"]["conversations.jsonl"]
    (tiny_gold / "cassette_manifest.json").write_text(json.dumps(manifest))
    path = tiny_gold / "expected_memories.jsonl"
    path.write_text(path.read_text().replace("penicillin", "amoxicillin"))
    found = problems(tiny_gold)
    assert [m.split(" ", 2)[1] for m in found] == [
        f"{tiny_gold / 'cassette_manifest.json'}:",  # files has no sha256 for conversations.jsonl
        f"{path}:",  # sha256 differs
        f"{tiny_gold / 'cassette_manifest.json'}:",  # counts.multi_label
        f"{tiny_gold / 'cassette_manifest.json'}:",  # subsets.fast is not the rule's choice
    ], found
    assert all(fix.format(gold=tiny_gold) in m and wrong not in m for m in found), found


def test_a_missing_cassette_file_is_named_even_when_the_manifest_lacks_its_hash(tiny_gold: Path) -> None:
    from extraction_eval import GoldDataError
    from extraction_eval.gold._check import read_cassettes

    data = json.loads((tiny_gold / "cassette_manifest.json").read_text())
    del data["files"]["openai_cassettes.jsonl"]
    (tiny_gold / "cassette_manifest.json").write_text(json.dumps(data))
    path = tiny_gold / "openai_cassettes.jsonl"
    path.unlink()
    gold = load_gold(tiny_gold)
    assert gold.manifest is not None
    with pytest.raises(GoldDataError) as info:
        read_cassettes(gold, gold.manifest)
    assert str(info.value) == (
        f"{path}: file not found; restore it with `git checkout -- {path}`, or write it again with "
        f"`extraction-eval cassettes oracle --gold {tiny_gold}`."
    )
