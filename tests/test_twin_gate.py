"""scripts/twin_gate.py: a reworded twin gated against its set, under a matcher and under the
reviewers. The twin below rewords one memory so that fact-cover@2 can no longer pair it, and
keeps the reviewers' decisions (the same fact), so the matcher raises a false alarm and the
reviewers do not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from extraction_eval.cassettes._answers import write_answer_cassettes

from .conftest import REPO
from .evaluation.test_answer_sets import ANSWERS, write_set


def _twin(gold: Path) -> None:
    """blind-a-twin: blind-a with t06's memory reworded, and blind-a's decisions carried over by
    position (scripts/answers_assemble.py --carry-from)."""
    base = gold / "answers" / "blind-a"
    folder = gold / "answers" / "blind-a-twin"
    folder.mkdir(parents=True)
    rows = [json.loads(line) for line in (base / "answers.jsonl").read_text().splitlines()]
    for row in rows:
        if row["conversation_id"] == "t06":
            row["memories"][0]["content"] = "On 2026-03-01 the user completed a 21 km race in Portugal's capital."
    (folder / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_answer_cassettes(gold, "blind-a-twin")
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "answers_assemble.py"), "--set", "blind-a-twin", "--gold", str(gold),
         "--writer", f"tw={folder / 'answers.jsonl'}", "--carry-from", "blind-a"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip


def test_the_matcher_raises_a_false_alarm_and_the_reviewers_do_not(tiny_gold: Path, tmp_path: Path) -> None:
    assert len(ANSWERS["t06"]) == 1
    write_set(tiny_gold)
    _twin(tiny_gold)
    out = tmp_path / "twin_gate.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "twin_gate.py"), "--gold", str(tiny_gold), "--base", "blind-a",
         "--twin", "blind-a-twin", "--matcher", "fact-cover@2", "--out", str(out)],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = {r["matcher"]: r for r in json.loads(out.read_text())["results"]}
    assert set(results) == {"fact-cover@2", "reviewed"}
    # reviewers: the twin states the same facts, so every metric is unchanged
    assert results["reviewed"]["verdict"] == "pass" and results["reviewed"]["exit_code"] == 0
    assert results["reviewed"]["failing"] == []
    # fact-cover@2: t06's row (one of the two episodic rows; t05's answer lacks its date) is
    # paired in the set (equal text) and refused in the twin (Lisbon is not named): 1/2 -> 0/2
    matcher = results["fact-cover@2"]
    assert matcher["verdict"] == "fail" and matcher["exit_code"] == 1
    failing = {row["metric"]: row for row in matcher["failing"]}
    assert failing["recall/episodic"]["baseline"] == 0.5 and failing["recall/episodic"]["run"] == 0.0
    assert "reviewed: PASS (exit 0)" in done.stdout and "fact-cover@2: FAIL (exit 1)" in done.stdout
