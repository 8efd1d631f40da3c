"""run_eval's steps called one by one, without MLflow: each is a function of its own, and an
answer keeps its raw response, so the answers can be scored again."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from extraction_eval.evaluation import (
    RunOptions,
    parse_responses,
    per_conversation_rows,
    plan_run,
    score_answers,
    write_outputs,
)
from extraction_eval.gold import load_gold
from extraction_eval.pipeline import check_contract, collect_answers
from extraction_eval.vocab import CassetteKind, Mode


def test_the_steps_run_alone_and_the_answers_score_again(tiny_gold: Path, tmp_path: Path) -> None:
    gold = load_gold(tiny_gold)
    plan = plan_run(Mode.CASSETTE, tiny_gold, tmp_path / "out", gold.manifest)
    selected = gold.subset_conversations(plan.subset)
    verdict = check_contract(plan, gold, selected)
    assert verdict is not None and not verdict.override
    collected = collect_answers(plan, gold, selected, RunOptions(), verdict)
    assert collected.cassette_kind is CassetteKind.ORACLE_ALIGNED and len(collected.answers) == 8

    scored = score_answers(gold, selected, collected.answers, model=plan.model)
    assert scored.metrics["counts/expected"] == 8 and scored.metrics["macro/recall"] == 1.0
    assert scored.metrics["failures/rate"] == 0.0 and not scored.failed

    # re-score from the raw responses: t02's answer cut off becomes one failed conversation of 8
    answers = dict(collected.answers)
    answers["t02"] = replace(answers["t02"], finish_reason="length")
    again = score_answers(gold, selected, answers, model=plan.model, max_failure_rate=0.1)
    assert again.metrics["counts/failed"] == 1.0 and again.metrics["failures/rate"] == 0.125  # 1/8
    assert again.failed and again.notes == (
        "failure rate 0.125 is above --max-failure-rate 0.1: the run is marked FAILED.",
    )

    files = write_outputs(tmp_path / "out", tiny_gold, again)
    assert [p.name for p in files.artifacts] == [
        "metrics.json",
        "per_conversation.jsonl",
        "responses.jsonl",
        "cassette_manifest.json",
    ]
    # responses.jsonl gives back the same answers, so scoring them again gives the same numbers
    stored = parse_responses((tmp_path / "out" / "responses.jsonl").read_text(), "responses.jsonl")
    assert stored == {cid: replace(a, latency_s=None, retries=0) for cid, a in answers.items()}
    assert stored["t02"].finish_reason == "length" and stored["t02"].input_tokens == answers["t02"].input_tokens
    rescored = score_answers(gold, selected, stored, model=plan.model)
    assert rescored.metrics == again.metrics
    rows = [json.loads(line) for line in (tmp_path / "out" / "per_conversation.jsonl").read_text().splitlines()]
    assert rows[1]["conversation_id"] == "t02" and rows[1]["failure_reason"] == "length"
    assert not (tmp_path / "out" / "run.json").exists()  # no MLflow step ran
    # the file's rows are written one at a time; only the table's flat rows are kept for MLflow
    assert rows == json.loads(json.dumps(list(per_conversation_rows(again))))
    assert [r["conversation_id"] for r in files.table] == [f"t0{i}" for i in range(1, 9)]
    assert files.table[1] == {
        "conversation_id": "t02",
        "status": "failed",
        **rows[1]["outcomes"],
        "expected": 1,
        "predicted": 0,
        "failure_reason": "length",
        "error": rows[1]["error"],
    }
