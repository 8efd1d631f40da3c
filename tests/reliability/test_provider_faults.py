"""Issue 12, points 4 and 5: parse before you keep. Malformed 200 bodies, odd content, bad usage,
a nesting bomb and a TCP reset from the stub provider are typed failures of their conversation;
the run goes on, and record mode never writes such an answer to the cassette file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from extraction_eval import Mode, RunOptions, run_eval
from extraction_eval.stub_provider import StubProviderServer, StubScript

KEY = "sk-test-canary-1212"

FAULTS = {
    "t01": ({"answer": "html"}, "malformed_response", "with a body that is not JSON (content-type 'text/html'"),
    "t02": ({"answer": "empty_list"}, "malformed_response", "the body is a JSON list, not a chat.completion object"),
    "t03": ({"answer": "content_list"}, "malformed_response", "'message.content' is list"),
    "t04": ({"answer": "content_int"}, "malformed_response", "'message.content' is int '42', not text"),
    "t05": ({"answer": "usage_string"}, "malformed_response", "'usage.prompt_tokens' is 'many', not a count of tokens"),
    "t06": ({"answer": "deep_nesting"}, "too_nested", "the answer nests deeper than 64 levels"),
    "t07": ({"fail_first": ["reset", "reset"]}, "transport", "connection_reset after 2 attempt(s)"),
}


@pytest.fixture
def stub(tiny_gold: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StubProviderServer]:
    with StubProviderServer(tiny_gold) as server:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        server.script = StubScript.coerce({"conversations": {cid: b for cid, (b, _, _) in FAULTS.items()}})
        yield server


def _rows(out: Path) -> dict[str, dict[str, object]]:
    lines = (out / "per_conversation.jsonl").read_text().splitlines()
    return {row["conversation_id"]: row for row in map(json.loads, lines)}


@pytest.mark.parametrize("mode", [Mode.LIVE, Mode.RECORD])
def test_every_malformed_answer_is_a_typed_failure_and_the_run_goes_on(
    mode: Mode,
    stub: StubProviderServer,
    tiny_gold: Path,
    local_store: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if mode is Mode.RECORD:
        monkeypatch.setenv("EXTRACTION_EVAL_MODE", "record")
    before = (tiny_gold / "openai_cassettes.jsonl").read_bytes()
    result = run_eval(mode, tiny_gold, tmp_path / "out", RunOptions(max_retries=1, concurrency=4))
    rows = _rows(tmp_path / "out")
    for cid, (_, reason, detail) in FAULTS.items():
        assert rows[cid]["failure_reason"] == reason, rows[cid]
        assert detail in str(rows[cid]["error"]), rows[cid]
    assert rows["t08"]["failure_reason"] is None  # the one healthy conversation was scored
    assert result.metrics["failures/rate"] == 7 / 8
    if mode is Mode.RECORD:
        # only the healthy answer was kept; the rest stay as they were, asked for again next time
        cassettes = {
            row["conversation_id"]: row
            for row in map(json.loads, (tiny_gold / "openai_cassettes.jsonl").read_text().splitlines())
        }
        assert cassettes["t08"]["cassette_kind"] == "live_openai_recorded"
        assert {cassettes[cid]["cassette_kind"] for cid in FAULTS} == {"oracle_aligned_expected_json"}
        old = {row["conversation_id"]: row for row in map(json.loads, before.decode().splitlines())}
        assert all(cassettes[cid] == old[cid] for cid in FAULTS)
        # a second record asks only for the seven, and the healthy stub answers them now
        stub.script = StubScript.coerce({})
        calls = len(stub.requests)
        again = run_eval(Mode.RECORD, tiny_gold, tmp_path / "out")
        assert len(stub.requests) - calls == 7
        assert again.metrics["failures/rate"] == 0.0


POISON = {
    "t01": ({"answer": "lone_surrogate"}, "malformed_response", "which UTF-8 cannot encode"),
    "t02": (
        {"answer": "huge_refusal"},
        "malformed_response",
        "'message.refusal' has 1,500,000 characters (limit 10,000)",
    ),
    "t03": (
        {"answer": "huge_fingerprint"},
        "malformed_response",
        "'system_fingerprint' has 1,000,003 characters (limit 256)",
    ),
    "t04": (
        {"answer": "huge_usage"},
        "malformed_response",
        "'usage.prompt_tokens' is 1000000000000000000000000000000000000000",
    ),
}


def test_a_poisoned_answer_is_never_recorded_and_never_reaches_arithmetic(
    tiny_gold: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21, point 4: a lone surrogate, an oversized refusal or fingerprint and a 10**400 token
    count are typed failures of their conversation; the cassette file keeps none of them (it stays
    the size it was), the cost code never sees the number, and the run and every replay go on."""
    before = (tiny_gold / "openai_cassettes.jsonl").read_bytes()
    with StubProviderServer(tiny_gold) as server:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("EXTRACTION_EVAL_MODE", "record")
        server.script = StubScript.coerce({"conversations": {cid: b for cid, (b, _, _) in POISON.items()}})
        result = run_eval(Mode.RECORD, tiny_gold, tmp_path / "out", RunOptions(max_retries=0, concurrency=4))
    rows = _rows(tmp_path / "out")
    for cid, (_, reason, detail) in POISON.items():
        assert rows[cid]["failure_reason"] == reason, rows[cid]
        assert detail in str(rows[cid]["error"]), rows[cid]
    assert result.metrics["failures/rate"] == 4 / 8
    after = (tiny_gold / "openai_cassettes.jsonl").read_bytes()
    assert len(after) < 2 * len(before)  # no megabyte of refusal or fingerprint was kept
    after.decode("utf-8")  # and every byte is UTF-8
    kept = {row["conversation_id"]: row for row in map(json.loads, after.decode().splitlines())}
    assert {kept[cid]["cassette_kind"] for cid in POISON} == {"oracle_aligned_expected_json"}
    # every line of the file still reads back as a cassette (a replay's first step)
    from extraction_eval.gold import load_cassettes

    assert len(load_cassettes(tiny_gold / "openai_cassettes.jsonl")) == 8


def test_a_cassette_line_written_by_an_older_version_is_refused_with_its_line(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    """A cassette file that already holds a poisoned line (an older version recorded it) stops the
    replay with the file, the line and the field, never a UnicodeEncodeError or an OverflowError."""
    from extraction_eval import GoldDataError

    path = tiny_gold / "openai_cassettes.jsonl"
    lines = path.read_text().splitlines()
    row = json.loads(lines[2])
    row["usage"] = {"prompt_tokens": 10**400, "completion_tokens": 1}
    lines[2] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(GoldDataError, match=r"openai_cassettes.jsonl:3: .*usage.*beyond 1,000,000,000.*re-record"):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")
    row["usage"] = None
    row["response"] = row["response"].replace("User", "User\ud800", 1)
    lines[2] = json.dumps(row)  # ensure_ascii: the file holds the escape \ud800, legal JSON
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(GoldDataError, match=r"openai_cassettes.jsonl:3: .*response.*which UTF-8 cannot encode"):
        run_eval(Mode.CASSETTE, tiny_gold, tmp_path / "out")
