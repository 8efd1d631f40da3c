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


@pytest.mark.parametrize(("version", "tuning", "heldout"), [("v1", 63, 62), ("v2", 315, 315), ("v3", 405, 405)])
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


def test_v3_inherits_v2_s_halves_and_splits_only_its_new_conversations() -> None:
    """A conversation held out in v2 stays held out in v3 (a matcher tuned on v3's tuning half never
    saw v2's held-out half); v3's 180 new conversations are split by the rule among themselves: 90/90."""
    v2 = load_halves(load_gold(REPO / "gold" / "v2", require_manifest=False))
    v3 = load_halves(load_gold(REPO / "gold" / "v3", require_manifest=False))
    assert set(v2.heldout) <= set(v3.heldout) and set(v2.tuning) <= set(v3.tuning)
    new_tuning = [c for c in v3.tuning if c.startswith("v3-")]
    new_heldout = [c for c in v3.heldout if c.startswith("v3-")]
    assert (len(new_tuning), len(new_heldout)) == (90, 90)
    assert sorted(new_tuning) == sorted(split_halves(new_tuning + new_heldout)[0])


def test_inherited_halves_by_hand(tmp_path: Path) -> None:
    """The tiny fixture (t01..t08) inheriting a made-up earlier split of t01..t04 (t01, t02 tuning;
    t03, t04 held out): those keep their halves, and t05..t08 are split by the rule alone."""
    from extraction_eval.gold._halves import Halves

    gold = load_gold(REPO / "tests" / "fixtures" / "gold" / "tiny", require_manifest=False)
    doc = halves_document(gold, inherited=Halves(("t01", "t02"), ("t03", "t04")), inherits="v0")
    rest_tuning, rest_heldout = split_halves(["t05", "t06", "t07", "t08"])
    assert doc["tuning"] == ["t01", "t02", *rest_tuning]
    assert doc["heldout"] == ["t03", "t04", *rest_heldout]
    assert doc["inherits"] == "v0" and len(rest_tuning) == 2
