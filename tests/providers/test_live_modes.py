"""record, live and vllm modes over real HTTP against the project's stub provider on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mlflow import MlflowClient
from typer.testing import CliRunner

from extraction_eval import ConfigurationError, Mode, RunOptions, run_eval
from extraction_eval.cli import app
from extraction_eval.contract import prompt_sha256, schema_sha256
from extraction_eval.gold import load_cassettes, load_manifest
from extraction_eval.stub_provider import StubProviderServer, StubScript

KEY = "sk-test-canary-0000"


@pytest.fixture
def stub(tiny_gold: Path) -> Iterator[StubProviderServer]:
    with StubProviderServer(tiny_gold) as server:
        yield server


@pytest.fixture
def openai_env(stub: StubProviderServer, monkeypatch: pytest.MonkeyPatch) -> StubProviderServer:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    return stub


def record_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXTRACTION_EVAL_MODE", "record")


def cassettes(gold: Path) -> dict[str, Any]:
    return {c.conversation_id: c for _, c in load_cassettes(gold / "openai_cassettes.jsonl")}


def test_record_writes_live_cassettes_and_refreshes_the_manifest(
    tiny_gold: Path, openai_env: StubProviderServer, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_env(monkeypatch)
    before = load_manifest(tiny_gold / "cassette_manifest.json")
    result = run_eval(Mode.RECORD, tiny_gold, tmp_path / "out", RunOptions(concurrency=4))
    after = load_manifest(tiny_gold / "cassette_manifest.json")
    assert after.cassette_kind.value == "live_openai_recorded"
    assert (after.prompt_sha256, after.schema_sha256) == (prompt_sha256(), schema_sha256())
    assert after.subsets == before.subsets and after.label_review == before.label_review
    assert after.files["openai_cassettes.jsonl"] != before.files["openai_cassettes.jsonl"]
    rows = cassettes(tiny_gold)
    assert {c.cassette_kind.value for c in rows.values()} == {"live_openai_recorded"}
    assert rows["t01"].system_fingerprint == "fp_stub_1" and rows["t01"].usage["total_tokens"] > 0
    assert result.metrics["macro/recall"] == 1.0  # the stub answers with the gold
    tags = MlflowClient(local_store).get_run(result.logged.run_id).data.tags
    assert tags["cassette_kind"] == "live_openai_recorded" and tags["recording_complete"] == "true"
    assert tags["system_fingerprint"] == "fp_stub_1"
    assert {r.path for r in openai_env.requests} == {"/v1/chat/completions"}
    # every request carries strict structured outputs from the schema and the fixed sampling
    body = openai_env.requests[0].body
    assert body["response_format"]["json_schema"]["strict"] is True
    assert (body["temperature"], body["seed"]) == (0.0, 20260901)
    # then it replays like any cassette run, with the live kind and no new calls
    calls = len(openai_env.requests)
    replay = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out2")
    assert len(openai_env.requests) == calls
    assert replay.cassette_kind.value == "live_openai_recorded"
    assert replay.metrics["macro/recall"] == 1.0
    assert replay.metrics["usage/input_tokens"] == result.metrics["usage/input_tokens"]


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({"OPENAI_API_KEY": KEY}, "EXTRACTION_EVAL_MODE=record"),
        ({"EXTRACTION_EVAL_MODE": "record"}, "OPENAI_API_KEY"),
        ({}, "OPENAI_API_KEY (the budgeted key; never commit it); EXTRACTION_EVAL_MODE=record"),
    ],
)
def test_record_refuses_and_says_which_setting_is_missing(
    tiny_gold: Path,
    local_store: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    missing: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    before = (tiny_gold / "openai_cassettes.jsonl").read_bytes()
    with pytest.raises(ConfigurationError) as info:
        run_eval(Mode.RECORD, tiny_gold, tmp_path / "out")
    assert missing in str(info.value)
    if "OPENAI_API_KEY" in env:
        assert "OPENAI_API_KEY" not in str(info.value)
    assert (tiny_gold / "openai_cassettes.jsonl").read_bytes() == before


def test_record_rerun_records_only_what_is_missing(
    tiny_gold: Path, openai_env: StubProviderServer, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_env(monkeypatch)
    openai_env.script = StubScript.coerce(
        {"conversations": {"t03": {"fail_first": [500, 500, 500]}, "t06": {"fail_first": ["drop", "drop", "drop"]}}}
    )
    manifest_before = (tiny_gold / "cassette_manifest.json").read_bytes()
    first = run_eval(Mode.RECORD, tiny_gold, tmp_path / "out", RunOptions(max_retries=1, concurrency=2))
    assert first.metrics["counts/failed"] == 2
    reasons = {c.conversation_id: c.failure.reason.value for c in first.report.conversations if c.failure}
    assert reasons == {"t03": "transport", "t06": "transport"}
    assert any("recording incomplete: 2 conversation(s)" in n for n in first.notes)
    assert (tiny_gold / "cassette_manifest.json").read_bytes() == manifest_before  # left as it was
    rows = cassettes(tiny_gold)
    assert rows["t03"].cassette_kind.value == "oracle_aligned_expected_json"  # not a cassette yet
    lines_before = {
        json.loads(line)["conversation_id"]: line
        for line in (tiny_gold / "openai_cassettes.jsonl").read_text().splitlines()
    }

    openai_env.reset()
    openai_env.script = StubScript.coerce({})  # the provider is healthy again
    second = run_eval(Mode.RECORD, tiny_gold, tmp_path / "out2", RunOptions(max_retries=1))
    assert sorted({r.conversation_id for r in openai_env.requests}) == ["t03", "t06"]
    lines_after = {
        json.loads(line)["conversation_id"]: line
        for line in (tiny_gold / "openai_cassettes.jsonl").read_text().splitlines()
    }
    for cid in lines_before:
        if cid not in ("t03", "t06"):
            assert lines_after[cid] == lines_before[cid]  # finished entries byte-identical
    assert second.metrics["counts/failed"] == 0
    assert load_manifest(tiny_gold / "cassette_manifest.json").cassette_kind.value == "live_openai_recorded"


def test_typed_failures_are_recorded_and_replay_the_same_way(
    tiny_gold: Path, openai_env: StubProviderServer, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_env(monkeypatch)
    answers = {
        "t01": "invalid_json",
        "t02": "schema_invalid",
        "t03": "refusal",
        "t04": "length",
        "t05": "content_filter",
    }
    openai_env.script = StubScript.coerce({"conversations": {cid: {"answer": a} for cid, a in answers.items()}})
    recorded = run_eval(Mode.RECORD, tiny_gold, tmp_path / "out")
    # t01's prose is not JSON, t02's memory lacks temporal_kind, t03 answers with a refusal,
    # t04 stops at finish_reason 'length' and t05 at 'content_filter'; t06 to t08 answer the gold
    expected = {
        "t01": "invalid_json",
        "t02": "schema_invalid",
        "t03": "refusal",
        "t04": "length",
        "t05": "content_filter",
    }
    got = {c.conversation_id: c.failure.reason.value for c in recorded.report.conversations if c.failure}
    assert got == expected
    rows = cassettes(tiny_gold)
    assert rows["t03"].refusal and rows["t03"].response is None
    assert rows["t04"].finish_reason == "length" and rows["t05"].finish_reason == "content_filter"
    replay = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out2")
    assert {c.conversation_id: c.failure.reason.value for c in replay.report.conversations if c.failure} == expected
    assert replay.metrics["failures/rate"] == 5 / 8


def test_retries_honour_retry_after_and_recover(
    tiny_gold: Path, openai_env: StubProviderServer, local_store: str, tmp_path: Path
) -> None:
    openai_env.script = StubScript.coerce(
        {
            "default": {},
            "conversations": {
                "t01": {"fail_first": [429], "retry_after_s": 0.3},
                "t02": {"fail_first": [500, 503]},
                "t03": {"fail_first": ["hang"], "hang_s": 5},
                "t04": {"fail_first": ["drop"]},
            },
        }
    )
    result = run_eval(Mode.LIVE, tiny_gold, tmp_path / "out", RunOptions(timeout_s=1.0, max_retries=3))
    assert result.metrics["counts/failed"] == 0 and result.metrics["macro/recall"] == 1.0
    assert [openai_env.attempts(c) for c in ("t01", "t02", "t03", "t04", "t05")] == [2, 3, 2, 2, 1]
    assert result.metrics["usage/retries"] == 5
    t01 = [r.time for r in openai_env.requests if r.conversation_id == "t01"]
    assert t01[1] - t01[0] >= 0.3  # waited as long as Retry-After asked


def test_live_run_scores_a_known_answer_set_and_leaves_cassettes_alone(
    tiny_gold: Path, openai_env: StubProviderServer, local_store: str, tmp_path: Path
) -> None:
    gold_answers = {
        json.loads(line)["conversation_id"]: [] for line in (tiny_gold / "conversations.jsonl").read_text().splitlines()
    }
    for line in (tiny_gold / "expected_memories.jsonl").read_text().splitlines():
        row = json.loads(line)
        gold_answers[row["conversation_id"]].append(
            {k: row[k] for k in ("content", "categories", "temporal_kind", "supersedes")}
        )
    gold_answers["t02"][0]["supersedes"] = None  # supersession missed
    gold_answers["t03"][0]["categories"] = ["behavioral"]  # wrong category
    gold_answers["t08"] = [
        {
            "content": "User asked about Mount Elbrus.",
            "categories": ["factual"],
            "temporal_kind": "durable",
            "supersedes": None,
        }
    ]
    openai_env.answers = gold_answers
    before = (tiny_gold / "openai_cassettes.jsonl").read_bytes()
    result = run_eval(Mode.LIVE, tiny_gold, tmp_path / "out")
    m = result.metrics
    assert (m["counts/expected"], m["counts/predicted"], m["counts/matched"]) == (8, 9, 8)
    assert m["category_accuracy"] == 7 / 8
    assert m["negatives/false_positive_rate"] == 1.0
    assert m["supersession/recall"] == 0.0
    assert m["precision/factual"] == 3 / 4 and m["recall/factual"] == 1.0
    assert m["precision/preference"] == 0.0 and m["recall/preference"] == 0.0
    assert m["precision/behavioral"] == 2 / 3 and m["recall/behavioral"] == 1.0
    assert m["latency/p95_s"] >= m["latency/p50_s"] > 0
    assert m["usage/cost_usd"] > 0
    assert (tiny_gold / "openai_cassettes.jsonl").read_bytes() == before
    tags = MlflowClient(local_store).get_run(result.logged.run_id).data.tags
    assert (tags["cassette_kind"], tags["mode"], tags["enforcement"]) == ("live_call", "live", "ci")
    assert "live calls" in tags["mlflow.note.content"]
    # the pipeline writes the comparison, so a run started from Python has it too
    assert result.comparison is not None and result.comparison.startswith("## extraction-eval live run comparison")
    assert (tmp_path / "out" / "comparison.md").read_text() == result.comparison


def test_vllm_mode_is_manual_in_its_own_experiment(
    tiny_gold: Path, stub: StubProviderServer, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IBEX_WORKER_EXTRACTION_BASE_URL", stub.base_url)
    result = run_eval(Mode.VLLM, tiny_gold, tmp_path / "out")
    client = MlflowClient(local_store)
    run = client.get_run(result.logged.run_id)
    assert client.get_experiment(run.info.experiment_id).name == "extraction-eval-vllm"
    tags = run.data.tags
    assert (tags["provider"], tags["model"], tags["enforcement"], tags["cassette_kind"]) == (
        "vllm",
        "Qwen/Qwen2.5-14B-Instruct",
        "manual",
        "live_call",
    )
    assert stub.requests[0].body["model"] == "Qwen/Qwen2.5-14B-Instruct"
    assert stub.requests[0].headers["authorization"] == "Bearer EMPTY"


def test_vllm_needs_its_base_url_and_rejects_a_contradicting_provider(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigurationError, match="IBEX_WORKER_EXTRACTION_BASE_URL=http://127.0.0.1:8000/v1"):
        run_eval(Mode.VLLM, tiny_gold, tmp_path / "out")
    monkeypatch.setenv("IBEX_WORKER_EXTRACTION_PROVIDER", "openai")
    with pytest.raises(
        ConfigurationError, match="--mode vllm runs provider 'vllm' but IBEX_WORKER_EXTRACTION_PROVIDER='openai'"
    ):
        run_eval(Mode.VLLM, tiny_gold, tmp_path / "out")
    monkeypatch.setenv("IBEX_WORKER_EXTRACTION_PROVIDER", "vllm")
    monkeypatch.setenv("EXTRACTION_EVAL_MODE", "record")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with pytest.raises(ConfigurationError, match="vLLM comparisons are manual"):
        run_eval(Mode.RECORD, tiny_gold, tmp_path / "out")


def test_live_with_vllm_provider_goes_to_the_vllm_experiment(
    tiny_gold: Path, stub: StubProviderServer, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IBEX_WORKER_EXTRACTION_PROVIDER", "vllm")
    monkeypatch.setenv("IBEX_WORKER_EXTRACTION_BASE_URL", stub.base_url)
    result = run_eval(Mode.LIVE, tiny_gold, tmp_path / "out")
    assert result.logged.experiment_name == "extraction-eval-vllm"
    assert result.plan.enforcement.value == "manual"


def test_budget_stops_new_requests_and_keeps_what_was_done(
    tiny_gold: Path, openai_env: StubProviderServer, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_env(monkeypatch)
    result = run_eval(Mode.RECORD, tiny_gold, tmp_path / "out", RunOptions(concurrency=1, max_tokens=1))
    assert len(openai_env.requests) == 1  # the first answer used the budget up
    reasons = [c.failure.reason.value for c in result.report.conversations if c.failure]
    assert reasons == ["budget_exhausted"] * 7
    rows = cassettes(tiny_gold)
    assert sum(c.cassette_kind.value == "live_openai_recorded" for c in rows.values()) == 1
    assert any("budget reached: 7 conversation(s) not attempted" in n for n in result.notes)


def test_max_failure_rate_fails_the_run_through_the_cli(
    tiny_gold: Path, openai_env: StubProviderServer, local_store: str, tmp_path: Path
) -> None:
    openai_env.script = StubScript.coerce(
        {"conversations": {c: {"answer": "invalid_json"} for c in ("t01", "t02", "t03")}}
    )
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--mode",
            "live",
            "--gold",
            str(tiny_gold),
            "--output-dir",
            str(tmp_path / "out"),
            "--max-failure-rate",
            "0.25",
            "--no-progress",
        ],
    )
    assert result.exit_code == 1, result.output
    assert "failure rate 0.375 is above --max-failure-rate 0.25" in result.output
    run_id = json.loads((tmp_path / "out" / "run.json").read_text())["run_id"]
    assert MlflowClient(local_store).get_run(run_id).info.status == "FAILED"


def test_progress_prints_plain_lines_off_a_terminal(
    tiny_gold: Path,
    openai_env: StubProviderServer,
    local_store: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_eval(Mode.LIVE, tiny_gold, tmp_path / "out", RunOptions(concurrency=1))
    err = capsys.readouterr().err
    last = [line for line in err.splitlines() if line.startswith("progress: ")][-1]
    assert last.startswith("progress: 8/8 conversations | 0 failed | ")
    assert " tokens | $0.0" in last and "ETA 0:00" in last
    run_eval(Mode.LIVE, tiny_gold, tmp_path / "quiet", RunOptions(concurrency=1, progress=False))  # --no-progress
    err = capsys.readouterr().err
    assert "progress" not in err and "conversations |" not in err


def test_bad_key_stops_the_run_without_echoing_the_key(
    tiny_gold: Path, stub: StubProviderServer, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url.replace("/v1", "/v2"))  # 404: not retryable
    from extraction_eval import ProviderError

    with pytest.raises(ProviderError) as info:
        run_eval(Mode.LIVE, tiny_gold, tmp_path / "out")
    assert "will not get better by retrying: 404" in str(info.value)
    assert KEY not in str(info.value)


def test_live_run_prints_a_comparison_with_the_baseline_and_writes_the_summary(
    tiny_gold: Path, openai_env: StubProviderServer, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    openai_env.answers = {"t01": []}  # only t01 answered (with nothing); every other conversation too
    result = CliRunner().invoke(
        app, ["run", "--mode", "live", "--gold", str(tiny_gold), "--output-dir", str(tmp_path / "out"), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert "## extraction-eval live run comparison: REPORT ONLY (never fails the build)" in result.output
    # tiny has 3 factual rows (t01, t02, t07-m2): one memory moves recall/factual by 1/3.
    assert "| recall/factual | 1.0000 | 0.0000 | -1.0000 | — | 0.3333 | FAIL |" in result.output
    assert "No paired interval: baseline_results.json holds no per-conversation record to pair by." in result.output
    assert "never gated" in result.output
    assert (tmp_path / "out" / "comparison.md").read_text() in summary.read_text()


def test_refresh_publishes_a_vllm_run_and_keeps_enforcement_manual(
    tiny_gold: Path, stub: StubProviderServer, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IBEX_WORKER_EXTRACTION_BASE_URL", stub.base_url)
    runner = CliRunner()
    assert runner.invoke(app, ["baseline", "register", "--gold", str(tiny_gold)]).exit_code == 0
    result = run_eval(Mode.VLLM, tiny_gold, tmp_path / "out")
    refreshed = runner.invoke(
        app, ["baseline", "refresh", "vllm", "--run-id", result.logged.run_id, "--gold", str(tiny_gold)]
    )
    assert refreshed.exit_code == 0, refreshed.output
    block = json.loads((tiny_gold / "baseline_results.json").read_text())["providers"]["vllm"]
    assert block["enforcement"] == "manual" and block["cassette_kind"] == "live_call"
    assert block["mlflow_run_id"] == result.logged.run_id and block["last_refreshed"]
    assert block["metrics"]["macro/recall"] == 1.0 and set(block["metrics"]) == set(block["gated_metrics"])
    # the gate checks identity before enforcement (issue 12, point 2): a live run is reported by
    # the comparison, never judged by the gate, even for a manual provider
    gate = runner.invoke(app, ["gate", "--run-id", result.logged.run_id, "--output-dir", str(tmp_path / "out")])
    assert gate.exit_code == 2 and f"run {result.logged.run_id} is a live run (mode 'vllm')" in gate.output
    # refresh is for manual providers only; the openai block is never touched by it
    openai_run = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out2")
    bad = runner.invoke(
        app, ["baseline", "refresh", "openai", "--run-id", openai_run.logged.run_id, "--gold", str(tiny_gold)]
    )
    assert bad.exit_code == 2 and "publishes manual providers only" in bad.output
    assert json.loads((tiny_gold / "baseline_results.json").read_text())["providers"]["openai"]["enforcement"] == "ci"


def test_a_record_run_cannot_be_promoted_but_its_cassette_replay_can(
    tiny_gold: Path, openai_env: StubProviderServer, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_env(monkeypatch)
    recorded = run_eval(Mode.RECORD, tiny_gold, tmp_path / "out")
    runner = CliRunner()
    refused = runner.invoke(app, ["baseline", "promote", "--run-id", recorded.logged.run_id, "--gold", str(tiny_gold)])
    assert refused.exit_code == 2 and "it is a record run" in refused.output
    replay = run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out2")
    promoted = runner.invoke(
        app, ["baseline", "promote", "--run-id", replay.logged.run_id, "--gold", str(tiny_gold), "--write-file"]
    )
    assert promoted.exit_code == 0, promoted.output
    block = json.loads((tiny_gold / "baseline_results.json").read_text())["providers"]["openai"]
    assert block["cassette_kind"] == "live_openai_recorded"  # promoting keeps the run's kind
