"""``judgments.jsonl``: the judge matcher's recorded answers, beside the cassettes.

One row per judged pair: ``{"judge_model", "judge_prompt_sha256", "a_sha256", "b_sha256",
"a", "b", "same_fact": true|false|null, "response", "failure": null|{"reason", "detail"},
"recorded_at"}``, keyed by (judge model, judge prompt hash, sha256 of A, sha256 of B).
Written during ``record`` (and ``matcher record-judgments``), replayed for free.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._exceptions import GoldDataError
from .._jsonio import atomic_write_text, dumps_line, iter_jsonl, sha256_hex

JUDGMENTS_FILE = "judgments.jsonl"

JudgmentKey = tuple[str, str, str, str]


def text_sha256(text: str) -> str:
    return sha256_hex(text.encode("utf-8"))


def judgment_key(model: str, prompt_sha256: str, a: str, b: str) -> JudgmentKey:
    return (model, prompt_sha256, text_sha256(a), text_sha256(b))


@dataclass(frozen=True)
class Judgment:
    judge_model: str
    judge_prompt_sha256: str
    a: str
    b: str
    same_fact: bool | None
    response: str | None
    failure: Mapping[str, str] | None
    recorded_at: str

    @property
    def key(self) -> JudgmentKey:
        return judgment_key(self.judge_model, self.judge_prompt_sha256, self.a, self.b)

    def to_json(self) -> dict[str, Any]:
        _, _, a_sha, b_sha = self.key
        return {
            "judge_model": self.judge_model,
            "judge_prompt_sha256": self.judge_prompt_sha256,
            "a_sha256": a_sha,
            "b_sha256": b_sha,
            "a": self.a,
            "b": self.b,
            "same_fact": self.same_fact,
            "response": self.response,
            "failure": None if self.failure is None else dict(self.failure),
            "recorded_at": self.recorded_at,
        }


def _judgment(value: Mapping[str, Any], where: str) -> Judgment:
    fix = "the file is written by `extraction-eval run --mode record --matcher judge`; restore it from git"
    for name in ("judge_model", "judge_prompt_sha256", "a_sha256", "b_sha256", "a", "b", "recorded_at"):
        if not isinstance(value.get(name), str):
            raise GoldDataError(f"{where}: field {name!r} must be a string; {fix}.")
    same = value.get("same_fact")
    if same is not None and not isinstance(same, bool):
        raise GoldDataError(f"{where}: field 'same_fact' must be true, false or null; {fix}.")
    failure = value.get("failure")
    if failure is not None and not (isinstance(failure, dict) and {"reason", "detail"} <= set(failure)):
        raise GoldDataError(f"{where}: field 'failure' must be null or {{'reason', 'detail'}}; {fix}.")
    if (same is None) == (failure is None):
        raise GoldDataError(f"{where}: exactly one of 'same_fact' and 'failure' must be set; {fix}.")
    judgment = Judgment(
        judge_model=value["judge_model"],
        judge_prompt_sha256=value["judge_prompt_sha256"],
        a=value["a"],
        b=value["b"],
        same_fact=same,
        response=value.get("response"),
        failure=failure,
        recorded_at=value["recorded_at"],
    )
    if judgment.key[2:] != (value["a_sha256"], value["b_sha256"]):
        raise GoldDataError(f"{where}: 'a_sha256' or 'b_sha256' is not the sha256 of its text; {fix}.")
    return judgment


def read_judgments(path: Path) -> dict[JudgmentKey, Judgment]:
    """Every recorded judgment by key ({} when the file does not exist); a bad line names file and line."""
    if not path.is_file():
        return {}
    out: dict[JudgmentKey, Judgment] = {}
    for row in iter_jsonl(path):
        judgment = _judgment(row.value, f"{path}:{row.line}")
        out[judgment.key] = judgment  # a later row of the same key (a re-recording) wins
    return out


def write_judgments(path: Path, judgments: Iterable[Judgment]) -> None:
    """Add these judgments to the file (rewritten atomically, rows sorted by key)."""
    merged = read_judgments(path)
    for judgment in judgments:
        merged[judgment.key] = judgment
    rows = [merged[k].to_json() for k in sorted(merged)]
    atomic_write_text(path, "".join(dumps_line(r) + "\n" for r in rows))
