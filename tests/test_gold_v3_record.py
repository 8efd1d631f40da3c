"""Gold v3 (issue 26): reproducible from its record, v2 untouched, its shape against the plan.

v3 = v2 + the 8 reviewed errata (docs/gold-v3-record/errata.jsonl) + 180 new conversations written
to fool an extractor (the hard security slice), annotated blind twice, adjudicated, third-read."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from extraction_eval.gold._pinned import PINNED_GOLD
from tests.conftest import REPO

RECORD = REPO / "docs" / "gold-v3-record"
FILES = ("conversations.jsonl", "expected_memories.jsonl", "forbidden_memories.jsonl")


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _assemble(out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gold_v3_assemble.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )


def test_v3_is_its_record_assembled_and_v2_is_untouched(tmp_path: Path) -> None:
    before = {name: _sha(REPO / "gold" / "v2" / name) for name in FILES}
    assert before == dict(PINNED_GOLD["v2"])  # v2's frozen files, as pinned since v2 existed
    done = _assemble(tmp_path / "v3")
    assert done.returncode == 0, done.stderr
    for name in (*FILES, "errata.jsonl"):
        assert (tmp_path / "v3" / name).read_bytes() == (REPO / "gold" / "v3" / name).read_bytes(), name
    assert {name: _sha(REPO / "gold" / "v2" / name) for name in FILES} == before  # nothing wrote v2
    assert {name: _sha(REPO / "gold" / "v3" / name) for name in FILES} == dict(PINNED_GOLD["v3"])
    refused = _assemble(REPO / "gold" / "v2")
    assert refused.returncode != 0 and "gold v2 is frozen" in refused.stderr + refused.stdout


def test_every_erratum_turns_v2_s_row_into_v3_s_and_nothing_else_differs() -> None:
    errata = _rows(REPO / "gold" / "v3" / "errata.jsonl")
    assert len(errata) == 8 and all(e["from_version"] == "v2" and e["found_by"] and e["confirmed_by"] for e in errata)
    v2 = {r["memory_id"]: r for r in _rows(REPO / "gold" / "v2" / "expected_memories.jsonl")}
    v3 = {r["memory_id"]: r for r in _rows(REPO / "gold" / "v3" / "expected_memories.jsonl")}
    changed = {e["memory_id"] for e in errata if e["kind"] == "expected"}
    for e in errata:
        if e["kind"] != "expected":
            continue
        if e["action"] == "remove":
            assert v2[e["memory_id"]] == e["old"] and e["memory_id"] not in v3
        elif e["action"] == "add":
            assert e["memory_id"] not in v2 and v3[e["memory_id"]] == e["new"]
        else:
            assert v2[e["memory_id"]][e["field"]] == e["old"] and v3[e["memory_id"]][e["field"]] == e["new"]
    shared = [m for m in v2 if m not in changed]
    assert len(shared) == 1761 - 3 and all(v2[m] == v3[m] for m in shared)
    # the three examples are among them
    assert {"v2-c065-m4", "v2-e093-m2"} <= changed and any(e["conversation_id"] == "v2-d082" for e in errata)


def test_strata_and_the_shape_against_the_plan() -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    from gold_v3_shape import shape

    forbidden = _rows(REPO / "gold" / "v3" / "forbidden_memories.jsonl")
    assert {r["stratum"] for r in forbidden if r["conversation_id"].startswith("v2-")} == {"telegraphed"}
    assert {r["stratum"] for r in forbidden if r["conversation_id"].startswith("v3-")} == {"hard"}
    s = shape(REPO / "gold" / "v3", RECORD)
    assert s["conversations"] == {"all": 810, "from v2": 630, "new": 180}
    assert s["security conversations"]["hard"] >= 150  # the plan: a hard slice of at least 150
    assert s["new negatives"]["tempting"] * 2 >= s["new negatives"]["all"]  # at least half tempt
    assert s["routine share of new conversations"]["share"] <= 0.15
    assert s["names"]["names in more than 3 conversations"] == []
    assert s["injections"]["user turns with AI/assistant/model/bot/ChatGPT/memory"] == []
    assert s["injections"]["flagged by the transcript's assistant"] * 2 < s["injections"]["conversations"]
