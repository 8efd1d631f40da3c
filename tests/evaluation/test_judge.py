"""--matcher judge against the stub provider over real HTTP: judgments recorded during `record`
(scripted same, different, malformed and refused answers), replayed for free, and a missing
judgment fails closed naming the pair and the command that records it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mlflow import MlflowClient
from typer.testing import CliRunner

from extraction_eval.cassettes._judgments import judgment_key, read_judgments
from extraction_eval.cli import app
from extraction_eval.contract._judge import judge_prompt_sha256, read_judgment
from extraction_eval.gold import load_gold
from extraction_eval.scoring import JudgeMatcher, MissingJudgment, candidate_pairs, normalize
from extraction_eval.scoring._types import Case, ExpectedItem, Memory, Outcome
from extraction_eval.stub_provider import StubProviderServer
from extraction_eval.stub_provider._script import gold_answer_set
from extraction_eval.vocab import Category, TemporalKind

from ..conftest import REPO

KEY = "sk-test-canary-judge-0000"
LISBON = "User lives in Lisbon."
PORTO = "User lives in Porto."
REWORDED = "The user is living in Lisbon now."
BULLETS = "User prefers answers in bullet points."
BULLETS_2 = "User wants bullet-point answers."
BREAKFAST = "User usually skips breakfast on weekdays."
BREAKFAST_2 = "User doesn't eat breakfast on weekdays."
BUGFIX = "User fixes a bug by writing a failing test first, then the fix, then rerunning the suite."
REVIEW = "User's team does code review on Tuesday."


@pytest.fixture
def stub(tiny_gold: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StubProviderServer]:
    answers: dict[str, Any] = gold_answer_set(load_gold(tiny_gold, require_manifest=False))
    answers["t02"] = [{**answers["t02"][0], "content": REWORDED}]
    answers["t03"] = [{**answers["t03"][0], "content": BULLETS_2}]
    answers["t04"] = [{**answers["t04"][0], "content": BREAKFAST_2}]
    judgments = {(LISBON, REWORDED): "same", (BULLETS, BULLETS_2): "malformed", (BREAKFAST, BREAKFAST_2): "refusal"}
    with StubProviderServer(tiny_gold, answers=answers, judgments=judgments) as server:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("EXTRACTION_EVAL_MODE", "record")
        yield server


def test_judgments_are_recorded_during_record_and_replayed_for_free(
    tiny_gold: Path, stub: StubProviderServer, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    out = tmp_path / "out"
    args = ["run", "--mode", "record", "--matcher", "judge", "--gold", str(tiny_gold), "--output-dir", str(out)]
    recorded = runner.invoke(app, args)
    assert recorded.exit_code == 0, recorded.output
    judge_requests = [
        r for r in stub.requests if r.body["response_format"]["json_schema"]["name"] == "SameFactJudgment"
    ]
    # the candidate pairs: t02's rewording against its text and its stale text (t02 supersedes Porto),
    # t03's and t04's rewordings, and t07's two memories against each other's prediction; a
    # prediction equal to its gold text is never asked
    asked = {tuple(r.body["messages"][-1]["content"].split("\n\nText B:\n")) for r in judge_requests}
    assert asked == {
        (f"Text A:\n{LISBON}", REWORDED),
        (f"Text A:\n{PORTO}", REWORDED),
        (f"Text A:\n{BULLETS}", BULLETS_2),
        (f"Text A:\n{BREAKFAST}", BREAKFAST_2),
        (f"Text A:\n{BUGFIX}", REVIEW),
        (f"Text A:\n{REVIEW}", BUGFIX),
    }
    assert all(r.body["model"] == "gpt-4o-mini" and r.body["temperature"] == 0.0 for r in judge_requests)
    rows = [json.loads(line) for line in (tiny_gold / "judgments.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and KEY not in (tiny_gold / "judgments.jsonl").read_text()
    by_pair = {(r["a"], r["b"]): r for r in rows}
    assert by_pair[(LISBON, REWORDED)]["same_fact"] is True
    assert by_pair[(PORTO, REWORDED)]["same_fact"] is False  # unscripted: the stub says different
    assert by_pair[(REVIEW, BUGFIX)]["same_fact"] is False
    assert by_pair[(BULLETS, BULLETS_2)]["same_fact"] is None
    assert by_pair[(BULLETS, BULLETS_2)]["failure"]["reason"] == "invalid_json"
    assert by_pair[(BREAKFAST, BREAKFAST_2)]["failure"]["reason"] == "refusal"
    assert all(r["judge_prompt_sha256"] == judge_prompt_sha256() and r["judge_model"] == "gpt-4o-mini" for r in rows)
    # 8 expected memories: t02 matched by the judge's yes, t03 and t04 lost to answers that are no judgment
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["micro/recall"] == pytest.approx(6 / 8)
    assert metrics["supersession/recall"] == pytest.approx(1.0)  # t02's stale text, predicted as its supersedes
    run_id = json.loads((out / "run.json").read_text())["run_id"]
    assert MlflowClient(local_store).get_run(run_id).data.tags["matcher"] == "judge@1:gpt-4o-mini"

    # replay: no key, no server, no call; the same numbers
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("EXTRACTION_EVAL_MODE")
    calls = len(stub.requests)
    replay_out = tmp_path / "replay"
    replay = runner.invoke(
        app, ["run", "--matcher", "judge", "--gold", str(tiny_gold), "--output-dir", str(replay_out)]
    )
    assert replay.exit_code == 0, replay.output
    assert len(stub.requests) == calls
    assert json.loads((replay_out / "metrics.json").read_text())["micro/recall"] == pytest.approx(6 / 8)

    # a missing judgment fails closed, naming the pair and the command that records it
    kept = [line for line in (tiny_gold / "judgments.jsonl").read_text().splitlines() if LISBON not in line]
    (tiny_gold / "judgments.jsonl").write_text("".join(line + "\n" for line in kept))
    missing = runner.invoke(
        app, ["run", "--matcher", "judge", "--gold", str(tiny_gold), "--output-dir", str(replay_out)]
    )
    assert missing.exit_code != 0
    assert (
        f"no recorded judgment of judge model 'gpt-4o-mini' for the pair A={LISBON!r} B={REWORDED!r}" in missing.output
    )
    assert f"`extraction-eval run --mode record --matcher judge --gold {tiny_gold}`" in missing.output
    assert len(stub.requests) == calls


def test_reading_a_judge_answer() -> None:
    assert read_judgment('{"same_fact": true}', "stop", None) == (True, None)
    assert read_judgment('{"same_fact": false}', "stop", None) == (False, None)
    assert read_judgment(None, "stop", "no")[1] == {"reason": "refusal", "detail": "no"}
    assert read_judgment("yes", "stop", None)[1]["reason"] == "invalid_json"  # type: ignore[index]
    assert read_judgment('{"same_fact": "yes"}', "stop", None)[1]["reason"] == "schema_invalid"  # type: ignore[index]
    assert read_judgment('{"same_fact": true', "length", None)[1]["reason"] == "length"  # type: ignore[index]


def test_the_judge_matcher_is_a_lookup() -> None:
    matcher = JudgeMatcher(verdicts={("a b", "c"): True, ("a b", "d"): None}, judge_model="m", record_command="rec")
    assert matcher.explain("a b", "c") == (1.0, "judge m: same fact")
    assert matcher.explain("a b", "d") == (0.0, "judge m: no usable answer (counted as a different fact)")
    assert matcher.explain("A  b.", "a b") == (1.0, "equal after normalisation (not asked)")
    with pytest.raises(MissingJudgment, match=r"A='a b' B='e'; record the judgments with `rec`"):
        matcher.similarity("a b", "e")
    memory = Memory("x", frozenset({Category.FACTUAL}), TemporalKind.CURRENT, supersedes="old")
    case = Case(
        "c", (ExpectedItem("m", memory),), Outcome(predictions=(memory, Memory("y", frozenset(), TemporalKind.CURRENT)))
    )
    assert candidate_pairs([case]) == [("x", "y"), ("old", "x"), ("old", "y")]
    assert judgment_key("m", "p", "a", "b")[0:2] == ("m", "p")


def test_calibrate_with_the_judge_fails_closed_without_judgments(tmp_path: Path) -> None:
    pairs = REPO / "gold" / "matcher-calibration"
    args = ["matcher", "calibrate", "--matcher", "judge", "--pairs", str(pairs), "--gold", str(REPO / "gold" / "v1")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0
    assert "no recorded judgment of judge model 'gpt-4o-mini' for the pair" in result.output
    assert f"record the judgments with `extraction-eval matcher record-judgments --pairs {pairs} --half heldout`" in (
        result.output
    )
    assert read_judgments(tmp_path / "none.jsonl") == {}


def test_calibrate_replays_the_judges_recorded_judgments(
    tiny_gold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stub, scripted to say "same" for every same-fact pair of the held-out half and to refuse
    one different-fact pair, is a judge with acceptance 1 and refusal 1 (the refusal counts as
    "different"): recorded once, then measured with no server."""
    import shutil

    from extraction_eval.gold._calibration import Half, load_pairs

    pairs = tmp_path / "pairs"
    shutil.copytree(REPO / "gold" / "matcher-calibration", pairs)
    gold_v1 = REPO / "gold" / "v1"
    rows = load_pairs(pairs, Half.HELDOUT, load_gold(gold_v1, require_manifest=False).memories)
    scripted = {(p.gold, p.candidate): "same" for p in rows if p.same_fact}
    refused = next(p for p in rows if not p.same_fact)
    scripted[(refused.gold, refused.candidate)] = "refusal"
    runner = CliRunner()
    with StubProviderServer(tiny_gold, judgments=scripted) as server:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        recorded = runner.invoke(app, ["matcher", "record-judgments", "--pairs", str(pairs), "--gold", str(gold_v1)])
        assert recorded.exit_code == 0, recorded.output
        asked = len({(p.gold, p.candidate) for p in rows if normalize(p.gold) != normalize(p.candidate)})
        assert f"asked the judge about {asked} pair(s) (1 without a usable answer)" in recorded.output
        assert len(server.requests) == asked
    monkeypatch.delenv("OPENAI_API_KEY")
    result = runner.invoke(
        app, ["matcher", "calibrate", "--matcher", "judge", "--pairs", str(pairs), "--gold", str(gold_v1)]
    )
    assert result.exit_code == 0, result.output
    overall = result.output.split("overall", 1)[1].splitlines()[2]
    cells = overall.split()
    assert cells[0] == "all" and cells[5] == "1.000" and cells[8] == "1.000", overall  # acceptance, refusal
    assert "misses (0)" in result.output


def test_the_judge_matcher_id_names_the_judge_model(tmp_path: Path) -> None:
    """Runs judged by two models never compare as one matcher: the id is judge@<prompt>:<model>."""
    from extraction_eval.cassettes._judgments import Judgment, write_judgments
    from extraction_eval.evaluation._judging import choose_matcher
    from extraction_eval.scoring import matcher_id

    path = tmp_path / "judgments.jsonl"
    prompt = judge_prompt_sha256()
    write_judgments(
        path,
        [
            Judgment(model, prompt, "User likes tea.", "User enjoys tea.", same, "{}", None, "2026-12-03T00:00:00Z")
            for model, same in (("model-a", True), ("model-b", False))
        ],
    )
    a, b = choose_matcher("judge@1:model-a", path, "rec"), choose_matcher("judge@1:model-b", path, "rec")
    assert (matcher_id(a), matcher_id(b)) == ("judge@1:model-a", "judge@1:model-b")
    assert (
        a.similarity("User likes tea.", "User enjoys tea."),
        b.similarity("User likes tea.", "User enjoys tea."),
    ) == (
        1.0,
        0.0,
    )
    bare = JudgeMatcher(verdicts={}, judge_model="gpt-4o-mini", record_command="rec")
    assert matcher_id(bare) == "judge@1:gpt-4o-mini" and bare.version == "1:gpt-4o-mini"
