"""--repeat N: samples pooled, standard errors clustered by conversation, agreement and spread."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from extraction_eval import ConfigurationError, Mode, RunOptions, run_eval
from extraction_eval.cassettes import oracle_response
from extraction_eval.cli import app
from extraction_eval.evaluation import Answer, score_answers
from extraction_eval.gold import load_gold
from extraction_eval.scoring import Failure, FailureReason

from ..conftest import TINY


def _oracle_answers() -> dict[str, Answer]:
    gold = load_gold(TINY, require_manifest=False)
    return {
        c.conversation_id: Answer(c.conversation_id, response=oracle_response(gold.by_conversation[c.conversation_id]))
        for c in gold.conversations
    }


def test_two_samples_pooled_and_clustered_by_hand() -> None:
    gold = load_gold(TINY, require_manifest=False)
    first = _oracle_answers()
    second = {**first, "t01": Answer("t01", failure=Failure(FailureReason.TRANSPORT, "reset"))}
    scored = score_answers(gold, gold.conversations, first, model="gpt-4o-mini", extra_samples=[second])
    m = scored.metrics
    # 8 conversations x 2 samples; one failure: failures/rate 1/16.
    assert m["counts/conversations"] == 16.0 and m["failures/rate"] == 1 / 16
    assert m["n/failures/rate"] == 16.0
    # Clustered by conversation (8 clusters): t01 (a, b) = (1, 2), the others (0, 2); M = 1/16, Σb = 16.
    # u_t01 = (1 − 2/16)/16 = 0.0546875, u_other = (0 − 2/16)/16 = −0.0078125;
    # Σu² = 0.0546875² + 7·0.0078125² = 0.00341796875; se = sqrt(8/7 · 0.00341796875) = 0.0625.
    assert m["se/failures/rate"] == pytest.approx(0.0625, abs=1e-12)
    # The samples agree on 7 of 8 conversations; failures/rate is 0 in sample 0 and 1/8 in sample 1.
    assert m["repeat/samples"] == 2.0
    assert m["repeat/agreement"] == 7 / 8
    assert m["repeat/spread/failures/rate"] == 0.125
    assert m["repeat/sd/failures/rate"] == pytest.approx(0.125 / math.sqrt(2), abs=1e-12)
    # factual rows t01, t02, t07-m2 in each of the two samples: 5 of the 6 matched.
    assert m["recall/factual"] == 5 / 6
    assert scored.samples == (0,) * 8 + (1,) * 8


def test_repeat_is_refused_where_there_is_one_sample(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as record:
        run_eval(Mode.RECORD, tiny_gold, tmp_path / "o", RunOptions(repeat=2))
    assert str(record.value) == (
        "--repeat 2 works with --mode live and --mode vllm only: a cassette holds one recorded sample per "
        "conversation, so `record --repeat` would have nothing to keep the other samples in. Use "
        "`run --mode live --repeat N` to measure how far samples of the model agree."
    )
    with pytest.raises(ConfigurationError, match="a replay is deterministic"):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "o", RunOptions(repeat=3))
    assert not (tmp_path / "o").exists()  # refused before anything was written


def test_live_repeat_against_the_stub_provider(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from extraction_eval.stub_provider import StubProviderServer

    out = tmp_path / "out"
    with StubProviderServer(tiny_gold) as stub:
        monkeypatch.setenv("OPENAI_API_KEY", "canary-not-a-key-0000")
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        args = ["run", "--mode", "live", "--repeat", "3", "--gold", str(tiny_gold), "--output-dir", str(out)]
        result = CliRunner().invoke(app, [*args, "--no-progress"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "per_conversation.jsonl").read_text().splitlines()]
    assert [(r["conversation_id"], r["sample"]) for r in rows] == [(f"t0{i}", k) for k in range(3) for i in range(1, 9)]
    # the raw answers carry the same sample index, so each can be traced to its sample
    answers = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert [(r["conversation_id"], r["sample"]) for r in answers] == [
        (f"t0{i}", k) for k in range(3) for i in range(1, 9)
    ]
    metrics = json.loads((out / "metrics.json").read_text())
    # the stub answers every call with the same oracle answer: full agreement, no spread
    assert metrics["repeat/samples"] == 3.0 and metrics["repeat/agreement"] == 1.0
    assert metrics["repeat/spread/macro/recall"] == 0.0
    assert metrics["counts/conversations"] == 24.0 and metrics["n/failures/rate"] == 24.0
    # the tables MLflow shows tell the samples apart too: a `sample` column after conversation_id
    from mlflow import MlflowClient

    client = MlflowClient()
    run_id = json.loads((out / "run.json").read_text())["run_id"]
    table = json.loads(
        Path(client.download_artifacts(run_id, "per_conversation_table.json", str(tmp_path))).read_text()
    )
    assert table["columns"][:3] == ["conversation_id", "sample", "status"]
    assert [row[:2] for row in table["data"]] == [[f"t0{i}", k] for k in range(3) for i in range(1, 9)]
    memories = json.loads(Path(client.download_artifacts(run_id, "per_memory_table.json", str(tmp_path))).read_text())
    assert memories["columns"][:2] == ["conversation_id", "sample"]
    # tiny gold holds 8 expected memories (t01-t06 one each, t07 two, t08 none), each matched in
    # every sample by the stub's oracle answers
    rows = [dict(zip(memories["columns"], values, strict=True)) for values in memories["data"]]
    assert [r["sample"] for r in rows] == [0] * 8 + [1] * 8 + [2] * 8
    expected_ids = ["t01", "t02", "t03", "t04", "t05", "t06", "t07", "t07"]
    assert [r["conversation_id"] for r in rows] == expected_ids * 3
    assert {r["outcome"] for r in rows} == {"matched"}
