"""The contract gate's whole results: its verdict, its drift error, `gold validate`'s report and
the live-input check, each asserted exactly (docs/gates.md, docs/data-format.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extraction_eval._exceptions import CassetteError, ConfigurationError, ContractDriftError, GoldDataError
from extraction_eval.cassettes import ReplayPlan
from extraction_eval.gates._contract_gate import (
    ContractVerdict,
    check_cassette_rows,
    check_live_inputs,
    contract_gate,
    validate_gold_folder,
)
from extraction_eval.gold import PINNED_GOLD, Cassette, GoldSet, load_gold, read_cassettes
from extraction_eval.vocab import CassetteKind

from ..helpers import read_rows, write_rows

IDS = ("t01", "t02", "t03", "t04", "t05", "t06", "t07", "t08")
DRIFT_VAR = "EXTRACTION_EVAL_ALLOW_CONTRACT_DRIFT"


def _load(gold_dir: Path) -> tuple[GoldSet, list[Cassette]]:
    gold = load_gold(gold_dir)
    assert gold.manifest is not None
    return gold, list(read_cassettes(gold, gold.manifest))


def _plan(cassettes: list[Cassette], used: tuple[str, ...]) -> ReplayPlan:
    by_id = {c.conversation_id: c for c in cassettes}
    return ReplayPlan(cassettes={cid: by_id[cid] for cid in used}, unused=tuple(i for i in IDS if i not in used))


# --- contract_gate -------------------------------------------------------------------------


def test_matching_contract_passes_without_override_and_plans_every_conversation(tiny_gold: Path) -> None:
    gold, cassettes = _load(tiny_gold)
    verdict = contract_gate(gold, gold.manifest, cassettes)  # type: ignore[arg-type]
    assert verdict == ContractVerdict(override=False, drift=(), replay=_plan(cassettes, IDS))


def test_the_plan_covers_only_the_selected_conversations(tiny_gold: Path) -> None:
    gold, cassettes = _load(tiny_gold)
    verdict = contract_gate(gold, gold.manifest, cassettes, gold.conversations[:2])  # type: ignore[arg-type]
    assert verdict == ContractVerdict(override=False, drift=(), replay=_plan(cassettes, ("t01", "t02")))


def _drift_message(lines: list[str]) -> str:
    return (
        "contract gate: the extraction contract changed since the cassettes were made:\n  "
        + "\n  ".join(lines)
        + "\nReplaying them would score answers to a request nobody sends any more. Fix: re-record live "
        "cassettes (`EXTRACTION_EVAL_MODE=record extraction-eval run --mode record`) or, while they are "
        "oracle-aligned, re-generate them (`extraction-eval cassettes oracle`) and mark the pull request "
        "EXTRACTION_EVAL_ORACLE_OK=1 for review. For a local look only: EXTRACTION_EVAL_ALLOW_CONTRACT_DRIFT=1 "
        "(never in CI; the regression gate refuses such runs)."
    )


def test_prompt_and_schema_drift_stop_the_run_with_both_hashes_and_the_fix(
    tiny_gold: Path, request: pytest.FixtureRequest
) -> None:
    recorded = json.loads((tiny_gold / "cassette_manifest.json").read_text())
    gold, cassettes = _load(tiny_gold)
    new_prompt = request.getfixturevalue("changed_prompt")
    new_schema = request.getfixturevalue("changed_schema")
    with pytest.raises(ContractDriftError) as err:
        contract_gate(gold, gold.manifest, cassettes)  # type: ignore[arg-type]
    assert str(err.value) == _drift_message(
        [
            f"system prompt: manifest {recorded['prompt_sha256']}, code {new_prompt}",
            f"BatchExtractionResult schema: manifest {recorded['schema_sha256']}, code {new_schema}",
        ]
    )


def test_schema_drift_alone_names_only_the_schema(tiny_gold: Path, changed_schema: str) -> None:
    recorded = json.loads((tiny_gold / "cassette_manifest.json").read_text())["schema_sha256"]
    gold, cassettes = _load(tiny_gold)
    with pytest.raises(ContractDriftError) as err:
        contract_gate(gold, gold.manifest, cassettes)  # type: ignore[arg-type]
    assert str(err.value) == _drift_message(
        [f"BatchExtractionResult schema: manifest {recorded}, code {changed_schema}"]
    )


def test_the_override_lets_a_local_run_go_on_and_says_what_drifted(
    tiny_gold: Path, changed_prompt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = json.loads((tiny_gold / "cassette_manifest.json").read_text())["prompt_sha256"]
    monkeypatch.setenv(DRIFT_VAR, "1")
    gold, cassettes = _load(tiny_gold)
    verdict = contract_gate(gold, gold.manifest, cassettes)  # type: ignore[arg-type]
    assert verdict == ContractVerdict(
        override=True,
        drift=(f"system prompt: manifest {recorded}, code {changed_prompt}",),
        replay=_plan(cassettes, IDS),
    )


def test_the_override_under_ci_is_an_error_even_without_drift(tiny_gold: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DRIFT_VAR, "1")
    monkeypatch.setenv("CI", "true")
    gold, cassettes = _load(tiny_gold)
    with pytest.raises(ConfigurationError, match="CI must never override the contract gate"):
        contract_gate(gold, gold.manifest, cassettes)  # type: ignore[arg-type]


def _mismatch_t08(gold_dir: Path) -> None:
    """The last cassette answers another request than t08's (signed, so only replay can tell)."""
    rows = read_rows(gold_dir)
    rows[7]["request_sha256"] = "0" * 64
    write_rows(gold_dir, rows, sign=True)


def test_a_mismatched_cassette_is_a_replay_error(tiny_gold: Path) -> None:
    _mismatch_t08(tiny_gold)
    gold, cassettes = _load(tiny_gold)
    with pytest.raises(CassetteError) as err:
        contract_gate(gold, gold.manifest, cassettes)  # type: ignore[arg-type]
    message = str(err.value)
    assert message.startswith(
        f"{tiny_gold / 'openai_cassettes.jsonl'}: 1 conversation(s) cannot be replayed:\n"
        "conversation 't08': request hash mismatch (recorded 000000000000…, now "
    ), message
    assert message.endswith(
        f"Fix the ids or the files, or rewrite the cassettes with `extraction-eval cassettes oracle --gold {tiny_gold}`; "
        "no override lifts this."
    ), message


def test_a_live_manifest_picks_the_re_recording_fix_for_replay_problems(tiny_gold: Path) -> None:
    """The manifest's kind, not only the rows', chooses the fix: `cassettes oracle` would replace recordings."""
    _mismatch_t08(tiny_gold)
    gold, cassettes = _load(tiny_gold)
    assert gold.manifest is not None
    live = gold.manifest.model_copy(update={"cassette_kind": CassetteKind.LIVE_RECORDED})
    with pytest.raises(GoldDataError) as err:
        contract_gate(gold, live, cassettes)
    replay_part = str(err.value).split("conversation 't08': request hash mismatch", 1)[1]
    assert (
        f"rewrite the cassettes with `EXTRACTION_EVAL_MODE=record extraction-eval run --mode record --gold {tiny_gold}` "
        "(it keeps the finished live recordings; `cassettes oracle` would replace them); no override lifts this."
    ) in replay_part


def test_a_row_with_another_model_stops_the_gate(tiny_gold: Path) -> None:
    rows = read_rows(tiny_gold)
    rows[1]["model"] = "gpt-4o"
    write_rows(tiny_gold, rows, sign=True)
    gold, cassettes = _load(tiny_gold)
    with pytest.raises(GoldDataError) as err:
        contract_gate(gold, gold.manifest, cassettes)  # type: ignore[arg-type]
    assert str(err.value).startswith(
        f"{tiny_gold / 'openai_cassettes.jsonl'}:2: cassette 't02': model is 'gpt-4o' but the manifest says "
        f"'gpt-4o-mini'; the manifest must describe its cassettes: rewrite both with "
        f"`extraction-eval cassettes oracle --gold {tiny_gold}`."
    ), str(err.value)


# --- check_cassette_rows: how many rows differ, and which ----------------------------------


@pytest.mark.parametrize(
    ("changed", "count"),
    [
        ((2, 3), " (2 of 8 cassettes differ in model: lines 2, 3)"),
        ((1, 2, 3, 4, 5), " (5 of 8 cassettes differ in model: lines 1, 2, 3, 4, 5)"),
        ((1, 2, 3, 4, 5, 6), " (6 of 8 cassettes differ in model: lines 1, 2, 3, 4, 5 and 1 more)"),
    ],
)
def test_rows_differing_are_counted_and_listed_up_to_five(
    tiny_gold: Path, changed: tuple[int, ...], count: str
) -> None:
    rows = read_rows(tiny_gold)
    for line in changed:
        rows[line - 1]["model"] = "gpt-4o"
    write_rows(tiny_gold, rows, sign=True)
    gold, cassettes = _load(tiny_gold)
    assert gold.manifest is not None
    first = changed[0]
    assert [p.message for p in check_cassette_rows(tiny_gold, gold.manifest, cassettes)] == [
        f"{tiny_gold / 'openai_cassettes.jsonl'}:{first}: cassette 't0{first}': model is 'gpt-4o' but the manifest "
        f"says 'gpt-4o-mini'{count}; the manifest must describe its cassettes: rewrite both with "
        f"`extraction-eval cassettes oracle --gold {tiny_gold}`."
    ]


# --- gold validate: validate_gold_folder, GoldReport.lines and check -----------------------


def _report_lines(gold_dir: Path, frozen: str) -> list[str]:
    counts = [
        ("conversations", 8),
        ("expected_memories", 8),
        ("negative_conversations", 1),
        ("multi_label", 1),
        ("supersession", 1),
        ("category/factual", 3),
        ("category/procedural", 1),
        ("category/preference", 1),
        ("category/behavioral", 2),
        ("category/episodic", 2),
        ("temporal/durable", 3),
        ("temporal/current", 3),
        ("temporal/past", 1),
        ("temporal/future", 1),
        ("turns/min", 2),
        ("turns/max", 3),
        ("cassettes", "8 (oracle_aligned_expected_json)"),
        ("subset smoke", 8),
        ("subset fast", 7),
        ("frozen inputs", frozen),
    ]
    # Keys are padded to the longest, "negative_conversations" (22 characters).
    return [f"gold 'tiny' at {gold_dir}"] + [f"  {key}{' ' * (22 - len(key))}  {value}" for key, value in counts]


def test_gold_validate_reports_the_counts_of_a_clean_folder(tiny_gold: Path) -> None:
    report = validate_gold_folder(tiny_gold)
    assert report.lines() == _report_lines(tiny_gold, "not pinned (no baseline yet)")
    assert report.problems == ()
    assert [c.conversation_id for c in report.cassettes] == list(IDS)
    assert report.gold.path == tiny_gold
    report.check()  # no problem, no error


def test_gold_validate_says_a_pinned_version_is_frozen(tiny_gold: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PINNED_GOLD, "tiny", {})
    assert validate_gold_folder(tiny_gold).lines()[-1] == "  frozen inputs           pinned"


def test_gold_validate_lists_every_problem_a_replay_and_the_baseline_would_refuse(tiny_gold: Path) -> None:
    rows = read_rows(tiny_gold)
    rows[1]["model"] = "gpt-4o"
    rows[7]["request_sha256"] = "0" * 64
    write_rows(tiny_gold, rows, sign=True)
    baseline = json.loads((tiny_gold / "baseline_results.json").read_text())
    baseline["gold_version"] = "tiny-old"
    (tiny_gold / "baseline_results.json").write_text(json.dumps(baseline, indent=2))
    report = validate_gold_folder(tiny_gold)
    assert report.lines() == _report_lines(tiny_gold, "not pinned (no baseline yet)")
    messages = [p.message for p in report.problems]
    assert len(messages) == 3, messages
    assert messages[0].startswith(f"{tiny_gold / 'openai_cassettes.jsonl'}:2: cassette 't02': model is 'gpt-4o'")
    assert messages[1].startswith(
        f"{tiny_gold / 'openai_cassettes.jsonl'}: 1 conversation(s) cannot be replayed:\n"
        "conversation 't08': request hash mismatch"
    )
    assert messages[2] == (
        f"{tiny_gold / 'baseline_results.json'}: field 'gold_version' is 'tiny-old' but the folder holds gold "
        "'tiny'; a baseline names the version it measured."
    )
    with pytest.raises(GoldDataError) as err:
        report.check()
    assert str(err.value) == "3 problem(s):\n" + "\n".join(messages)


# --- check_live_inputs -------------------------------------------------------------------


def test_live_inputs_pass_when_pinned_and_recorded_and_ignore_the_cassettes(tiny_gold: Path) -> None:
    """Live modes send the inputs, not the cassettes: an unsigned cassette edit is not theirs to refuse."""
    assert "tiny" not in PINNED_GOLD
    rows = read_rows(tiny_gold)
    rows[0]["recorded_at"] = "2020-01-01T00:00:00Z"
    write_rows(tiny_gold, rows, sign=False)
    check_live_inputs(load_gold(tiny_gold))  # no error


def test_an_edited_pinned_input_names_the_pin_and_the_manifest(
    tiny_gold: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from extraction_eval._jsonio import sha256_file

    conversations = tiny_gold / "conversations.jsonl"
    before = sha256_file(conversations)
    monkeypatch.setitem(PINNED_GOLD, "tiny", {"conversations.jsonl": before})
    # The same conversations, written without spaces: other bytes, other sha256.
    rows = read_rows(tiny_gold, "conversations.jsonl")
    conversations.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows), encoding="utf-8")
    after = sha256_file(conversations)
    with pytest.raises(ContractDriftError) as err:
        check_live_inputs(load_gold(tiny_gold))
    assert str(err.value) == (
        "contract gate: gold files drifted:\n"
        f"{conversations}: sha256 is {after} but gold 'tiny' is pinned to {before} "
        "(extraction_eval/gold/_pinned.py). Frozen inputs never change: restore the file with "
        f"`git checkout -- {conversations}`, or put the change in a new version folder.\n"
        f"{conversations}: sha256 is {after} but the manifest records {before}; restore the file with "
        f"`git checkout -- {conversations}`, or re-generate the manifest with "
        f"`extraction-eval cassettes oracle --gold {tiny_gold}` if the change is intended."
    )


def test_gold_validate_names_a_missing_cassette_file_with_its_recorded_hash(tiny_gold: Path) -> None:
    path = tiny_gold / "openai_cassettes.jsonl"
    recorded = json.loads((tiny_gold / "cassette_manifest.json").read_text())["files"]["openai_cassettes.jsonl"]
    path.unlink()
    with pytest.raises(GoldDataError) as err:
        validate_gold_folder(tiny_gold)
    assert str(err.value) == (
        f"{path}: file not found, but the manifest records its sha256 {recorded}; restore it with "
        f"`git checkout -- {path}`, or write it again with `extraction-eval cassettes oracle --gold {tiny_gold}`."
    )
