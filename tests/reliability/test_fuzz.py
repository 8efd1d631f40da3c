"""Issue 12, point 8: property-based fuzzing of every loader and of the response parser.

Whatever the bytes, a loader returns rows or raises GoldDataError naming the file (and the line
for JSONL); the parser returns an Outcome; the completion reader returns a ProviderAnswer. Never
a traceback: RecursionError, TypeError, KeyError or ValueError escaping is a failure here.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extraction_eval import GoldDataError
from extraction_eval._jsonio import MAX_JSON_DEPTH, iter_jsonl, parse_json
from extraction_eval.gold import parse_baseline
from extraction_eval.gold._load import load_cassettes, load_conversations, load_expected, load_manifest
from extraction_eval.providers._openai import answer_from_completion
from extraction_eval.scoring import Outcome, parse_response

FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
#: Text that looks like JSON, or nearly: brackets, quotes, escapes, numbers, a nesting bomb.
jsonish = st.one_of(
    json_values.map(json.dumps),
    st.text(alphabet='{}[]":,\\ 0123456789abcnulltrue-.eE\n', max_size=200),
    st.integers(min_value=MAX_JSON_DEPTH - 2, max_value=5000).map(lambda n: "[" * n + "]" * n),
    st.integers(min_value=MAX_JSON_DEPTH - 2, max_value=5000).map(lambda n: '{"a":' * n + "1" + "}" * n),
)
#: A field a real row has, with a fuzzed value, or a fuzzed row altogether.
real_keys = st.sampled_from(
    [
        "conversation_id",
        "session_date",
        "turns",
        "memories",
        "content",
        "categories",
        "temporal_kind",
        "supersedes",
        "response",
        "usage",
        "finish_reason",
        "request_sha256",
        "files",
        "providers",
        "metrics",
    ]
)
rows = st.one_of(jsonish, st.dictionaries(real_keys, json_values, max_size=6).map(json.dumps))


def _file(data: bytes) -> Path:
    folder = Path(tempfile.mkdtemp(dir=Path.cwd()))
    path = folder / "file.jsonl"
    path.write_bytes(data)
    return path


@FUZZ
@given(st.lists(rows, max_size=4), st.binary(max_size=40))
def test_the_jsonl_loaders_raise_only_gold_data_errors_naming_file_and_line(lines: list[str], noise: bytes) -> None:
    data = "\n".join(lines).encode("utf-8") + noise
    path = _file(data)
    for load in (
        lambda p: list(iter_jsonl(p)),
        load_conversations,
        lambda p: load_expected(p, {"c1": None}),
        load_cassettes,
    ):
        try:
            load(path)
        except GoldDataError as exc:
            assert str(exc).startswith(f"{path}"), str(exc)


@FUZZ
@given(st.one_of(rows, st.binary(max_size=60).map(lambda b: b.decode("latin-1"))))
def test_the_json_document_loaders_raise_only_gold_data_errors(text: str) -> None:
    data = text.encode("utf-8")
    path = _file(data)
    for load in (
        lambda: parse_json(data, "doc.json"),
        lambda: parse_baseline(data, "baseline_results.json"),
        lambda: load_manifest(path),
    ):
        with contextlib.suppress(GoldDataError):
            load()


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_a_nesting_bomb_in_a_gold_or_cassette_file_is_refused_with_file_and_line(depth: int, tiny_gold: Path) -> None:
    path = tiny_gold / "openai_cassettes.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = '{"conversation_id": ' + "[" * depth + "]" * depth + "}"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(GoldDataError) as info:
        load_cassettes(path)
    assert str(info.value).startswith(f"{path}:3: JSON nested deeper than {MAX_JSON_DEPTH} levels")


@FUZZ
@given(jsonish | st.text(max_size=300), st.sampled_from([None, "stop", "length", "content_filter", "tool_calls"]))
def test_the_response_parser_always_returns_an_outcome(response: str, finish: str | None) -> None:
    outcome = parse_response(response, finish_reason=finish)
    assert isinstance(outcome, Outcome)
    assert outcome.failure is None or outcome.predictions == ()  # a failure predicts nothing


def _completion_like(content: Any, usage: Any, choices: Any) -> Any:
    return {"choices": choices if choices is not None else [{"message": {"content": content}}], "usage": usage}


@FUZZ
@given(
    st.one_of(json_values, st.builds(_completion_like, json_values, json_values, st.none() | json_values)),
)
def test_the_completion_reader_types_any_body(body: Any) -> None:
    answer = answer_from_completion(body, 0.1)
    if answer.malformed is None:
        assert answer.content is None or isinstance(answer.content, str)
        assert answer.usage is None or isinstance(answer.usage, dict)
    else:
        assert answer.content is None and answer.usage is None
        outcome = parse_response(answer.content)
        assert outcome.failure is not None


#: Strings a provider may send as legal JSON that UTF-8 cannot hold, and numbers no count reaches.
poison_text = st.one_of(
    st.text(max_size=20),
    st.builds(lambda a, b: a + "\ud800" + b, st.text(max_size=5), st.text(max_size=5)),
    st.integers(min_value=0, max_value=3).map(lambda n: "x" * (10 ** (n + 2))),
)
poison_number = st.one_of(st.integers(), st.integers(min_value=10**9, max_value=10**400), st.floats())
completions = st.fixed_dictionaries(
    {
        "choices": st.lists(
            st.fixed_dictionaries(
                {
                    "message": st.fixed_dictionaries(
                        {"content": poison_text | st.none(), "refusal": poison_text | st.none()}
                    ),
                    "finish_reason": poison_text | st.none(),
                }
            ),
            max_size=2,
        ),
        "system_fingerprint": poison_text | st.none(),
        "usage": st.none()
        | st.dictionaries(
            st.sampled_from(["prompt_tokens", "completion_tokens", "total_tokens", "details"]),
            poison_number | json_values,
        ),
    }
)


@FUZZ
@given(completions)
def test_whole_completion_bodies_are_kept_only_when_they_can_be_written_back(completion: dict[str, Any]) -> None:
    """Issue 21, point 4: whatever a whole completion body holds (surrogates, huge integers, huge
    strings), reading it never raises, and what it keeps can be written as a cassette line and
    read back: UTF-8, within every field's limit, with no number beyond 10**9."""
    from extraction_eval.cassettes import cassette_line, now_iso
    from extraction_eval.contract import prompt_sha256, schema_sha256
    from extraction_eval.gold import Cassette

    answer = answer_from_completion(completion, 0.1)
    if answer.malformed is not None:
        return
    cassette = Cassette(
        conversation_id="c1",
        request_sha256="0" * 64,
        prompt_sha256=prompt_sha256(),
        schema_sha256=schema_sha256(),
        model="m",
        cassette_kind="live_openai_recorded",
        recorded_at=now_iso(),
        response=answer.content,
        finish_reason=answer.finish_reason,
        refusal=answer.refusal,
        system_fingerprint=answer.system_fingerprint,
        usage=answer.usage,
    )
    line = cassette_line(cassette)
    assert Cassette.model_validate_json(line) == cassette
