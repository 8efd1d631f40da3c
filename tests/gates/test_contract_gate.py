"""Cassette rows that disagree with their manifest: one problem per field, with file and lines."""

from __future__ import annotations

import json
from pathlib import Path

from extraction_eval.gates._contract_gate import check_cassette_rows
from extraction_eval.gold import load_cassettes, load_gold

from ..helpers import edit_manifest, read_rows, write_rows


def _problems(gold_dir: Path) -> list[str]:
    gold = load_gold(gold_dir)
    assert gold.manifest is not None
    cassettes = [c for _, c in load_cassettes(gold_dir / "openai_cassettes.jsonl")]
    return [p.message for p in check_cassette_rows(gold_dir, gold.manifest, cassettes)]


def test_one_field_differing_in_every_row_is_one_problem(tiny_gold: Path) -> None:
    recorded = json.loads((tiny_gold / "cassette_manifest.json").read_text())["prompt_sha256"]
    edit_manifest(tiny_gold, prompt_sha256="0" * 64)
    assert _problems(tiny_gold) == [
        f"{tiny_gold / 'openai_cassettes.jsonl'}:1: cassette 't01': prompt_sha256 is {recorded!r} but the manifest "
        f"says {'0' * 64!r} (8 of 8 cassettes differ in prompt_sha256: lines 1, 2, 3, 4, 5 and 3 more); the "
        f"manifest must describe its cassettes: rewrite both with `extraction-eval cassettes oracle --gold {tiny_gold}`."
    ]


def test_one_row_names_its_line(tiny_gold: Path) -> None:
    path = tiny_gold / "openai_cassettes.jsonl"
    rows = read_rows(tiny_gold)
    rows[3]["model"] = "gpt-4o"
    rows[5]["cassette_kind"] = "live_openai_recorded"  # a recording under way: the fix keeps it
    write_rows(tiny_gold, rows, sign=False)
    record = f"`EXTRACTION_EVAL_MODE=record extraction-eval run --mode record --gold {tiny_gold}`"
    assert _problems(tiny_gold) == [
        f"{path}:6: cassette 't06': cassette_kind is 'live_openai_recorded' but the manifest says "
        f"'oracle_aligned_expected_json'; the manifest must describe its cassettes: rewrite both with {record} "
        "(it keeps the finished live recordings; `cassettes oracle` would replace them).",
        f"{path}:4: cassette 't04': model is 'gpt-4o' but the manifest says 'gpt-4o-mini'; the manifest must "
        f"describe its cassettes: rewrite both with {record} (it keeps the finished live recordings; "
        "`cassettes oracle` would replace them).",
    ]
