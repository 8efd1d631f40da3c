"""The judge matcher, as scoring sees it: a lookup of recorded judgments (pure, no network).

A model decided, pair by pair, whether two texts state the same fact (``contract/_judge.py``
holds its prompt; ``providers`` calls it; ``evaluation`` records and loads the judgments).
Here the answers are a plain mapping from (A, B) to ``same_fact`` (None: the judge gave no
usable answer). Texts equal after normalisation are the same fact without asking. A pair
with no recorded judgment fails closed: ``MissingJudgment`` names it and the command that
records it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .._exceptions import CassetteError
from ._matcher import normalize
from ._types import Case

JUDGE_NAME = "judge"


def judge_model_of(matcher_name: str) -> str | None:
    """The judge model a judge matcher id names: ``judge@1:gpt-4o-mini`` -> ``gpt-4o-mini``; None if none."""
    _, _, version = matcher_name.partition("@")
    model = version.partition(":")[2]
    return model or None


class MissingJudgment(CassetteError):
    """A pair the judge matcher was asked about has no recorded judgment."""


@dataclass(frozen=True)
class JudgeMatcher:
    """``judge@<prompt version>:<judge model>``: similarity 1.0 when the judge said the same fact, else 0.0.

    The id names the judge model, so runs judged by two models never compare as one matcher.
    """

    verdicts: Mapping[tuple[str, str], bool | None] = field(repr=False)
    judge_model: str
    record_command: str
    prompt_version: str = "1"
    name: str = JUDGE_NAME
    threshold: float = 0.5

    @property
    def version(self) -> str:
        return f"{self.prompt_version}:{self.judge_model}"

    def similarity(self, a: str, b: str) -> float:
        return self.explain(a, b)[0]

    def explain(self, a: str, b: str) -> tuple[float, str]:
        if normalize(a) == normalize(b):
            return 1.0, "equal after normalisation (not asked)"
        try:
            verdict = self.verdicts[(a, b)]
        except KeyError:
            raise MissingJudgment(
                f"no recorded judgment of judge model {self.judge_model!r} for the pair A={a!r} B={b!r}; "
                f"record the judgments with `{self.record_command}` (it needs the API key; docs/runbooks.md)."
            ) from None
        if verdict is None:
            return 0.0, f"judge {self.judge_model}: no usable answer (counted as a different fact)"
        return (
            (1.0, f"judge {self.judge_model}: same fact")
            if verdict
            else (0.0, f"judge {self.judge_model}: different fact")
        )


def candidate_pairs(cases: Iterable[Case]) -> list[tuple[str, str]]:
    """Every (A, B) the scorer may ask about, in a stable order: each expected memory against each
    prediction, and each expected memory's superseded text against each prediction and each
    prediction's ``supersedes``, and each forbidden text against each prediction
    (pairs equal after normalisation are left out: never asked)."""
    seen: dict[tuple[str, str], None] = {}
    for case in cases:
        predictions = case.outcome.predictions
        texts = [p.content for p in predictions]
        stale_targets = texts + [p.supersedes for p in predictions if p.supersedes is not None]
        for item in case.expected:
            for text in texts:
                seen[(item.memory.content, text)] = None
            if item.memory.supersedes is not None:
                for text in stale_targets:
                    seen[(item.memory.supersedes, text)] = None
        for forbidden in case.forbidden or ():
            for text in texts:
                seen[(forbidden.content, text)] = None
    return [pair for pair in seen if normalize(pair[0]) != normalize(pair[1])]
