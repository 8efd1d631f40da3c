"""The judge matcher's I/O: record judgments for candidate pairs (live calls), load them for replay.

Scoring sees only ``scoring.JudgeMatcher``, a lookup; the calls are ``providers.JudgeClient``'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from ..cassettes import now_iso
from ..cassettes._judgments import JUDGMENTS_FILE, Judgment, judgment_key, read_judgments, write_judgments
from ..contract._judge import JUDGE_VERSION, judge_prompt_sha256, read_judgment
from ..providers._judge import judge_model, make_judge_client
from ..scoring import Matcher, normalize, resolve_matcher
from ..scoring._judge import JUDGE_NAME, JudgeMatcher, judge_model_of


def is_judge(name: str | None) -> bool:
    return name is not None and name.split("@", 1)[0] == JUDGE_NAME


def judge_matcher(judgments_path: Path, record_command: str, model: str | None = None) -> JudgeMatcher:
    """The recorded judgments of ``model`` under today's judge prompt, as a lookup matcher."""
    model = model or judge_model()
    prompt = judge_prompt_sha256()
    verdicts = {
        (j.a, j.b): j.same_fact
        for j in read_judgments(judgments_path).values()
        if j.judge_model == model and j.judge_prompt_sha256 == prompt
    }
    return JudgeMatcher(
        verdicts=verdicts, judge_model=model, record_command=record_command, prompt_version=JUDGE_VERSION
    )


def choose_matcher(name: str | None, judgments_path: Path, record_command: str) -> Matcher:
    """``--matcher NAME``: the judge's recorded judgments at ``judgments_path``, else the registry's.

    ``judge`` or ``judge@1`` is the judge model of the settings (``providers.judge_model``);
    ``judge@1:MODEL``, a judged run's matcher id, is that model's judgments."""
    if is_judge(name):
        return judge_matcher(judgments_path, record_command, judge_model_of(name or ""))
    return resolve_matcher(name)


def record_judgments(
    pairs: Sequence[tuple[str, str]], judgments_path: Path, command: str, *, concurrency: int = 8
) -> tuple[int, int]:
    """Ask the judge about every pair with no judgment yet; store the answers. Returns (asked, failed)."""
    model = judge_model()
    prompt = judge_prompt_sha256()
    known = read_judgments(judgments_path)
    todo = [
        p
        for p in dict.fromkeys(pairs)
        if normalize(p[0]) != normalize(p[1]) and judgment_key(model, prompt, *p) not in known
    ]
    if not todo:
        return 0, 0
    client, redactor = make_judge_client(model, command)
    answers = asyncio.run(client.ask_all(todo, concurrency=concurrency))
    stamp = now_iso()
    judged = []
    for (a, b), raw in zip(todo, answers, strict=True):
        answer = redactor.answer(raw)
        same, failure = read_judgment(answer.content, answer.finish_reason, answer.refusal)
        judged.append(Judgment(model, prompt, a, b, same, answer.content or answer.refusal, failure, stamp))
    write_judgments(judgments_path, judged)
    return len(judged), sum(j.failure is not None for j in judged)


__all__ = ["JUDGMENTS_FILE", "choose_matcher", "is_judge", "judge_matcher", "record_judgments"]
