"""Replay never answers silently: missing, mismatched and unknown cassettes stop the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extraction_eval import CassetteError
from extraction_eval.cassettes import plan_replay, write_oracle_cassettes
from extraction_eval.gold import load_cassettes, load_gold
from extraction_eval.vocab import CassetteKind, Subset


def _plan(gold_dir: Path, subset: Subset = Subset.FULL, model: str = "gpt-4o-mini", kind=None):  # type: ignore[no-untyped-def]
    gold = load_gold(gold_dir)
    cassettes = [c for _, c in load_cassettes(gold_dir / "openai_cassettes.jsonl")]
    return plan_replay(
        gold_dir / "openai_cassettes.jsonl",
        cassettes,
        gold.conversations,
        gold.subset_conversations(subset),
        model,
        kind=kind,
    )


def _rewrite(gold_dir: Path, fn) -> None:  # type: ignore[no-untyped-def]
    path = gold_dir / "openai_cassettes.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows = fn(rows)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_full_replay_uses_every_cassette(tiny_gold: Path) -> None:
    plan = _plan(tiny_gold)
    assert sorted(plan.cassettes) == [f"t0{i}" for i in range(1, 9)]
    assert plan.unused == ()


def test_subset_reports_unused_entries(tiny_gold: Path) -> None:
    gold = load_gold(tiny_gold)
    assert gold.manifest is not None
    plan = _plan(tiny_gold, Subset.FAST)
    assert set(plan.cassettes) == set(gold.manifest.subsets.fast)
    assert set(plan.unused) == {f"t0{i}" for i in range(1, 9)} - set(gold.manifest.subsets.fast)


def test_missing_cassette_names_the_conversation_and_the_closest_recording(tiny_gold: Path) -> None:
    _rewrite(tiny_gold, lambda rows: [r for r in rows if r["conversation_id"] != "t03"])
    with pytest.raises(CassetteError) as info:
        _plan(tiny_gold)
    text = str(info.value)
    assert "conversation 't03': no cassette recorded." in text
    assert "recording 't0" in text and "conversation_id  DIFFERS" in text
    assert "request_sha256   DIFFERS (it is the request of conversation 't08', the one it is filed under)" in text
    assert "swapped" not in text  # the closest recordings are filed where they belong
    assert "no override lifts this" in text


def test_renamed_cassette_is_found_by_its_request(tiny_gold: Path) -> None:
    def rename(rows):  # type: ignore[no-untyped-def]
        for r in rows:
            if r["conversation_id"] == "t03":
                r["conversation_id"] = "t3"
        return rows

    _rewrite(tiny_gold, rename)
    with pytest.raises(CassetteError) as info:
        _plan(tiny_gold)
    text = str(info.value)
    assert (
        "1 conversation(s) cannot be replayed; cassettes for conversations the gold set does not have: ['t3']" in text
    )
    assert "conversation 't03': no cassette recorded." in text
    assert "line 3: cassette 't3': the gold set has no conversation 't3' (closest ['t03'])." in text
    assert "  the recording filed as 't3' has this request.\n" in text  # docs/data-format.md
    assert "  the cassette filed as 't3' has the request of gold conversation 't03': file it as 't03'" in text


def test_cassette_for_an_unknown_conversation_is_compared_with_the_closest(tiny_gold: Path) -> None:
    def copy(rows):  # type: ignore[no-untyped-def]
        return [*rows, {**next(r for r in rows if r["conversation_id"] == "t02"), "conversation_id": "t02b"}]

    lines = (tiny_gold / "openai_cassettes.jsonl").read_text().splitlines()
    recorded_at = next(row["recorded_at"] for row in map(json.loads, lines) if row["conversation_id"] == "t02")
    _rewrite(tiny_gold, copy)
    with pytest.raises(CassetteError) as info:
        _plan(tiny_gold)
    text = str(info.value)
    start = text.index("line 9: cassette 't02b'")
    assert text[start : text.index("\nFix the ids")].splitlines()[:4] == [
        "line 9: cassette 't02b': the gold set has no conversation 't02b' (closest ['t02']).",
        f"  recording 't02b' (recorded_at {recorded_at}):",
        "    conversation_id  DIFFERS",
        "    model            ok",
    ]
    assert "    request_sha256   ok\n" in text[start:]
    assert "  the cassette filed as 't02b' has the request of gold conversation 't02': file it as 't02'" in text
    assert "conversation(s) cannot be replayed" not in text  # t02 itself has its cassette


def test_unknown_cassette_with_no_known_request_says_so(tiny_gold: Path) -> None:
    def add(rows):  # type: ignore[no-untyped-def]
        return [*rows, {**rows[0], "conversation_id": "t09", "request_sha256": "f" * 64}]

    _rewrite(tiny_gold, add)
    with pytest.raises(CassetteError) as info:
        _plan(tiny_gold)
    text = str(info.value)
    assert "line 9: cassette 't09': the gold set has no conversation 't09' (closest ['t08', 't07'])." in text
    assert "request_sha256   DIFFERS (rendered messages or sampling differ" in text
    assert "  no gold conversation has its request: remove it, or fix its conversation id." in text


def test_the_fix_follows_the_cassette_kind(tiny_gold: Path) -> None:
    """Oracle cassettes are regenerated; live recordings are never replaced by `cassettes oracle`."""
    oracle = f"rewrite the cassettes with `extraction-eval cassettes oracle --gold {tiny_gold}`;"
    record = (
        f"rewrite the cassettes with `EXTRACTION_EVAL_MODE=record extraction-eval run --mode record --gold {tiny_gold}`"
    )
    _rewrite(tiny_gold, lambda rows: [r for r in rows if r["conversation_id"] != "t03"])
    for kind, rows_live, fix in [
        (CassetteKind.ORACLE_ALIGNED, False, oracle),
        (CassetteKind.LIVE_RECORDED, False, record),  # the manifest says live
        (CassetteKind.ORACLE_ALIGNED, True, record),  # a recording under way: rows already live
    ]:
        if rows_live:
            _rewrite(tiny_gold, lambda rows: [{**r, "cassette_kind": "live_openai_recorded"} for r in rows])
        with pytest.raises(CassetteError) as info:
            _plan(tiny_gold, kind=kind)
        assert fix in str(info.value)
        assert ("--mode record" in str(info.value)) is (fix == record)
        assert ("cassettes oracle --gold" in str(info.value)) is (fix == oracle)


def test_hash_mismatch_shows_what_differs(tiny_gold: Path) -> None:
    path = tiny_gold / "conversations.jsonl"
    path.write_text(path.read_text().replace("lisbon half marathon", "porto half marathon"))
    with pytest.raises(CassetteError) as info:
        _plan(tiny_gold)
    text = str(info.value)
    assert "conversation 't06': request hash mismatch" in text
    assert "model            ok" in text
    assert "request_sha256   DIFFERS (rendered messages or sampling differ" in text


def test_model_only_mismatch_is_diagnosed(tiny_gold: Path) -> None:
    with pytest.raises(CassetteError) as info:
        _plan(tiny_gold, model="gpt-4o")
    text = str(info.value)
    assert "8 conversation(s) cannot be replayed" in text
    assert "model            DIFFERS (recorded 'gpt-4o-mini', requested 'gpt-4o')" in text
    assert "(only the model name differs)" in text


def test_swapped_cassettes_are_diagnosed(tiny_gold: Path) -> None:
    def swap(rows):  # type: ignore[no-untyped-def]
        a = next(r for r in rows if r["conversation_id"] == "t01")
        b = next(r for r in rows if r["conversation_id"] == "t02")
        a["request_sha256"], b["request_sha256"] = b["request_sha256"], a["request_sha256"]
        return rows

    _rewrite(tiny_gold, swap)
    with pytest.raises(CassetteError, match="it is the request of conversation 't02'"):
        _plan(tiny_gold)


def test_oracle_regeneration_is_idempotent(tiny_gold: Path) -> None:
    before = {p.name: p.read_bytes() for p in tiny_gold.iterdir()}
    result = write_oracle_cassettes(tiny_gold)
    assert result.cassettes_written == 0 and result.cassettes_kept == 8 and not result.manifest_written
    assert {p.name: p.read_bytes() for p in tiny_gold.iterdir()} == before


def test_oracle_cassette_response_is_the_expected_json(tiny_gold: Path) -> None:
    rows = {c.conversation_id: c for _, c in load_cassettes(tiny_gold / "openai_cassettes.jsonl")}
    assert json.loads(rows["t08"].response or "") == {"memories": []}
    assert json.loads(rows["t02"].response or "") == {
        "memories": [
            {
                "content": "User lives in Lisbon.",
                "categories": ["factual"],
                "temporal_kind": "current",
                "supersedes": "User lives in Porto.",
            }
        ]
    }
    assert rows["t02"].cassette_kind.value == "oracle_aligned_expected_json"


def _rows(gold_dir: Path) -> dict[str, dict[str, str]]:
    return {
        r["conversation_id"]: r for r in map(json.loads, (gold_dir / "openai_cassettes.jsonl").read_text().splitlines())
    }


def _fix(gold_dir: Path) -> str:
    return (
        "Fix the ids or the files, or rewrite the cassettes with "
        f"`extraction-eval cassettes oracle --gold {gold_dir}`; no override lifts this."
    )


def test_swapped_cassettes_whole_message(tiny_gold: Path) -> None:
    def swap(rows):  # type: ignore[no-untyped-def]
        a = next(r for r in rows if r["conversation_id"] == "t01")
        b = next(r for r in rows if r["conversation_id"] == "t02")
        a["request_sha256"], b["request_sha256"] = b["request_sha256"], a["request_sha256"]
        return rows

    before = _rows(tiny_gold)
    h1, h2 = before["t01"]["request_sha256"], before["t02"]["request_sha256"]
    _rewrite(tiny_gold, swap)
    with pytest.raises(CassetteError) as info:
        _plan(tiny_gold)

    def block(cid: str, recorded: str, now: str, other: str, line: int) -> list[str]:
        return [
            f"conversation {cid!r}: request hash mismatch (recorded {recorded[:12]}…, now {now[:12]}…; line {line}).",
            f"  recording {cid!r} (recorded_at {before[cid]['recorded_at']}):",
            "    conversation_id  ok",
            "    model            ok",
            f"    request_sha256   DIFFERS (it is the request of conversation {other!r}: cassettes swapped or ids renamed)",
            "    prompt_sha256    ok",
            "    schema_sha256    ok",
        ]

    assert str(info.value).splitlines() == [
        f"{tiny_gold / 'openai_cassettes.jsonl'}: 2 conversation(s) cannot be replayed:",
        *block("t01", h2, h1, "t02", 1),
        *block("t02", h1, h2, "t01", 2),
        _fix(tiny_gold),
    ]


def test_only_five_problems_are_shown_and_the_rest_counted(tiny_gold: Path) -> None:
    with pytest.raises(CassetteError) as info:
        _plan(tiny_gold, model="gpt-4o")
    text = str(info.value)
    assert text.count("request hash mismatch") == 5
    assert [line[:30] for line in text.splitlines() if line.startswith("conversation ")] == [
        f"conversation 't0{i}': request hash mismatch"[:30] for i in range(1, 6)
    ]
    assert text.endswith("\n... and 3 more.\n" + _fix(tiny_gold))


@pytest.mark.parametrize(("part", "fixture"), [("prompt", "changed_prompt"), ("schema", "changed_schema")])
def test_a_contract_change_is_shown_on_its_own_line(
    tiny_gold: Path, request: pytest.FixtureRequest, part: str, fixture: str
) -> None:
    # the cassettes were recorded under the old contract; a model mismatch makes them print
    recorded_at = _rows(tiny_gold)["t01"]["recorded_at"]
    request.getfixturevalue(fixture)
    with pytest.raises(CassetteError) as info:
        _plan(tiny_gold, model="gpt-4o")
    first = str(info.value).split("\nconversation 't02'")[0].splitlines()
    assert first[2:] == [
        f"  recording 't01' (recorded_at {recorded_at}):",
        "    conversation_id  ok",
        "    model            DIFFERS (recorded 'gpt-4o-mini', requested 'gpt-4o')",
        "    request_sha256   DIFFERS (only the model name differs)",
        f"    prompt_sha256    {'DIFFERS' if part == 'prompt' else 'ok'}",
        f"    schema_sha256    {'DIFFERS' if part == 'schema' else 'ok'}",
    ]


def _recording(cid: str, recorded_at: str, request: str, *, model: str = "    model            ok") -> list[str]:
    return [
        f"  recording {cid!r} (recorded_at {recorded_at}):",
        "    conversation_id  DIFFERS",
        model,
        f"    request_sha256   {request}",
        "    prompt_sha256    ok",
        "    schema_sha256    ok",
    ]


def test_renamed_cassette_whole_message(tiny_gold: Path) -> None:
    def rename(rows):  # type: ignore[no-untyped-def]
        for r in rows:
            if r["conversation_id"] == "t03":
                r["conversation_id"] = "t3"
        return rows

    at = _rows(tiny_gold)["t03"]["recorded_at"]
    at8 = _rows(tiny_gold)["t08"]["recorded_at"]
    _rewrite(tiny_gold, rename)
    with pytest.raises(CassetteError) as info:
        _plan(tiny_gold)
    assert str(info.value).splitlines() == [
        f"{tiny_gold / 'openai_cassettes.jsonl'}: 1 conversation(s) cannot be replayed; "
        "cassettes for conversations the gold set does not have: ['t3']:",
        "conversation 't03': no cassette recorded.",
        *_recording("t3", at, "ok"),  # the closest recording has exactly this request
        *_recording("t08", at8, "DIFFERS (it is the request of conversation 't08', the one it is filed under)"),
        "  the recording filed as 't3' has this request.",
        "line 3: cassette 't3': the gold set has no conversation 't3' (closest ['t03']).",
        *_recording("t3", at, "ok"),
        "  the cassette filed as 't3' has the request of gold conversation 't03': file it as 't03', or remove it.",
        _fix(tiny_gold),
    ]


RENDERED = (
    "DIFFERS (rendered messages or sampling differ: the conversation's turns or session_date, "
    "the renderer, or SAMPLING changed since recording)"
)


def test_unknown_cassette_with_a_distant_id_and_no_known_request_whole_message(tiny_gold: Path) -> None:
    # 't0xx' is close to no gold id by the 0.6 default of difflib, but within the 0.5 cutoff (4/7)
    _rewrite(tiny_gold, lambda rows: [*rows, {**rows[0], "conversation_id": "t0xx", "request_sha256": "f" * 64}])
    at = _rows(tiny_gold)["t0xx"]["recorded_at"]
    with pytest.raises(CassetteError) as info:
        _plan(tiny_gold)
    assert str(info.value).splitlines() == [
        f"{tiny_gold / 'openai_cassettes.jsonl'}: cassettes for conversations the gold set does not have: ['t0xx']:",
        "line 9: cassette 't0xx': the gold set has no conversation 't0xx' (closest ['t08', 't07']).",
        *_recording("t0xx", at, RENDERED),
        *_recording("t0xx", at, RENDERED),
        "  no gold conversation has its request: remove it, or fix its conversation id.",
        _fix(tiny_gold),
    ]


def test_another_model_and_another_conversation_is_not_only_the_model(tiny_gold: Path) -> None:
    path = tiny_gold / "conversations.jsonl"
    path.write_text(path.read_text().replace("lisbon half marathon", "porto half marathon"))
    gold = load_gold(tiny_gold)
    cassettes = [c for _, c in load_cassettes(tiny_gold / "openai_cassettes.jsonl")]
    t06 = [c for c in gold.conversations if c.conversation_id == "t06"]
    with pytest.raises(CassetteError) as info:
        plan_replay(tiny_gold / "openai_cassettes.jsonl", cassettes, gold.conversations, t06, "gpt-4o")
    assert str(info.value).splitlines()[2:-1] == [
        f"  recording 't06' (recorded_at {_rows(tiny_gold)['t06']['recorded_at']}):",
        "    conversation_id  ok",
        "    model            DIFFERS (recorded 'gpt-4o-mini', requested 'gpt-4o')",
        f"    request_sha256   {RENDERED}",
        "    prompt_sha256    ok",
        "    schema_sha256    ok",
    ]


@pytest.mark.parametrize(("missing", "more"), [(2, ""), (5, ""), (6, "... and 1 more.")])
def test_every_missing_cassette_counts_and_at_most_five_are_shown(tiny_gold: Path, missing: int, more: str) -> None:
    gone = [f"t0{i}" for i in range(1, missing + 1)]
    _rewrite(tiny_gold, lambda rows: [r for r in rows if r["conversation_id"] not in gone])
    with pytest.raises(CassetteError) as info:
        _plan(tiny_gold)
    lines = str(info.value).splitlines()
    assert lines[0] == f"{tiny_gold / 'openai_cassettes.jsonl'}: {missing} conversation(s) cannot be replayed:"
    shown = [line for line in lines if line.endswith(": no cassette recorded.")]
    assert shown == [f"conversation {cid!r}: no cassette recorded." for cid in gone[:5]]
    assert [line for line in lines if line.startswith("... and")] == ([more] if more else [])
    assert lines[-1] == _fix(tiny_gold)
