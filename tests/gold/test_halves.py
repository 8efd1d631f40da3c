"""The tuning/held-out halves of the answer sets: a pure, seeded split, pinned by hash."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from extraction_eval import GoldDataError
from extraction_eval.gold import load_gold
from extraction_eval.gold._halves import Half, halves_document, load_halves, split_halves

from ..conftest import REPO


def test_split_is_a_function_of_ids_and_seed() -> None:
    ids = [f"c{i:03d}" for i in range(1, 12)]
    tuning, heldout = split_halves(ids, seed=7)
    assert len(tuning) == 6 and len(heldout) == 5  # ceil(11/2) tuning
    assert sorted(tuning + heldout) == ids and not set(tuning) & set(heldout)
    assert split_halves(list(reversed(ids)), seed=7) == (list(reversed(tuning)), list(reversed(heldout)))
    assert split_halves(ids, seed=8) != (tuning, heldout)


@pytest.mark.parametrize(("version", "tuning", "heldout"), [("v1", 63, 62), ("v2", 315, 315)])
def test_committed_halves_follow_the_rule(version: str, tuning: int, heldout: int) -> None:
    gold = load_gold(REPO / "gold" / version, require_manifest=False)
    halves = load_halves(gold)
    assert (len(halves.tuning), len(halves.heldout)) == (tuning, heldout)
    assert len(halves.ids(Half.ALL)) == len(gold.conversations)


def test_a_moved_split_is_refused(tmp_path: Path) -> None:
    gold_dir = tmp_path / "v1"
    shutil.copytree(REPO / "gold" / "v1", gold_dir)
    path = gold_dir / "answers" / "halves.json"
    doc = json.loads(path.read_text())
    doc["tuning"][0], doc["heldout"][0] = doc["heldout"][0], doc["tuning"][0]
    path.write_text(json.dumps(doc, indent=2) + "\n")
    with pytest.raises(GoldDataError, match="halves are pinned to cf5773df"):
        load_halves(load_gold(gold_dir, require_manifest=False))


def test_unpinned_halves_must_follow_the_rule(tmp_path: Path) -> None:
    gold_dir = tmp_path / "tiny"
    shutil.copytree(REPO / "tests" / "fixtures" / "gold" / "tiny", gold_dir)
    gold = load_gold(gold_dir, require_manifest=False)
    (gold_dir / "answers").mkdir()
    doc = halves_document(gold)
    (gold_dir / "answers" / "halves.json").write_text(json.dumps(doc))
    assert len(load_halves(gold).tuning) == 4
    doc["heldout"] = doc["heldout"][:-1]
    (gold_dir / "answers" / "halves.json").write_text(json.dumps(doc))
    with pytest.raises(GoldDataError, match="not the split its rule gives"):
        load_halves(gold)
