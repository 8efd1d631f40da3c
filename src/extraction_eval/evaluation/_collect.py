"""Collecting answers: replayed from cassettes, or called live (``live``, ``vllm``, ``record``).

``record`` also keeps each answer as a cassette as soon as it arrives
(``cassettes.CassetteRecording``); ``live`` and ``vllm`` leave the cassettes untouched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence

from .._exceptions import ConfigurationError
from .._settings import MODE_VAR, OPENAI_KEY_VAR, env_value
from ..cassettes import CassetteRecording, ReplayPlan, now_iso
from ..gold import Conversation, GoldSet
from ..mlflow_names import TAG_BUDGET_EXHAUSTED, TAG_RECORDING_COMPLETE, flag
from ..providers import (
    PRICES_PER_MTOK,
    Budget,
    CallResult,
    Progress,
    ProviderAnswer,
    ProviderClient,
    RetryPolicy,
    call_all,
    make_client,
)
from ..vocab import CassetteKind, Mode
from ._answers import Answer, CollectedAnswers, answer_from_call, answer_from_cassette, keepable
from ._options import RunOptions
from ._plan import RunPlan


def collect_replay(plan: RunPlan, kind: CassetteKind, replay: ReplayPlan) -> CollectedAnswers:
    """Every selected conversation's answer from its (checked) cassette."""
    notes: tuple[str, ...] = ()
    if replay.unused:
        notes = (f"{len(replay.unused)} cassette(s) not used by subset {plan.subset.value!r}.",)
    answers = {cid: answer_from_cassette(c) for cid, c in replay.cassettes.items()}
    return CollectedAnswers(answers=answers, cassette_kind=kind, unused=replay.unused, notes=notes)


def check_record_settings() -> None:
    """Recording spends money: it needs both the key and the explicit mode variable."""
    missing = []
    if env_value(OPENAI_KEY_VAR) is None:
        missing.append(f"{OPENAI_KEY_VAR} (the budgeted key; never commit it)")
    if (env_value(MODE_VAR) or "").lower() != "record":
        missing.append(f"{MODE_VAR}=record (the explicit opt-in to spend on a recording)")
    if missing:
        raise ConfigurationError(
            "--mode record refuses to start; missing: " + "; ".join(missing) + ". Set both, "
            "then rerun `extraction-eval run --mode record`."
        )


def _call_notes(results: Mapping[str, CallResult]) -> list[str]:
    notes = []
    transport = sorted(cid for cid, r in results.items() if r.transport_error)
    skipped = sorted(cid for cid, r in results.items() if r.skipped)
    if transport:
        notes.append(f"{len(transport)} call(s) failed in transport after retries: {transport[:10]!r}")
    if skipped:
        notes.append(f"budget reached: {len(skipped)} conversation(s) not attempted: {skipped[:10]!r}")
    return notes


class _Caller:
    """The provider client, retry policy and budget of one run's live calls."""

    def __init__(self, plan: RunPlan, options: RunOptions, budget: Budget | None = None):
        if options.max_cost_usd is not None and plan.model not in PRICES_PER_MTOK:
            raise ConfigurationError(
                f"--max-cost-usd needs a price for model {plan.model!r}, and none is known "
                f"(known: {sorted(PRICES_PER_MTOK)!r}); use --max-tokens instead."
            )
        if plan.mode is Mode.RECORD:
            check_record_settings()
        self.client: ProviderClient
        self.client, self.redactor = make_client(plan.provider, plan.model, plan.mode, timeout_s=options.timeout_s)
        self.policy = RetryPolicy(max_retries=options.max_retries)
        self.budget = budget or Budget(plan.model, options.max_tokens, options.max_cost_usd)
        self.options = options

    def call(
        self,
        conversations: Sequence[Conversation],
        on_answer: Callable[[str, ProviderAnswer], None] | None = None,
    ) -> dict[str, CallResult]:
        """Every conversation once through the provider, with progress on stderr."""
        return asyncio.run(
            call_all(
                self.client,
                conversations,
                concurrency=self.options.concurrency,
                policy=self.policy,
                redactor=self.redactor,
                budget=self.budget,
                progress=None
                if self.options.progress is False
                else Progress(len(conversations), bar=self.options.progress),
                on_answer=on_answer,
            )
        )


def collect_live(plan: RunPlan, selected: Sequence[Conversation], options: RunOptions) -> CollectedAnswers:
    """``live`` and ``vllm``: call the provider for every selected conversation; no cassette is written."""
    caller = _Caller(plan, options)
    samples: list[dict[str, Answer]] = []
    notes: list[str] = []
    for index in range(options.repeat):
        if index:  # a pass closes its client; the next sample gets a new one and shares the budget
            caller = _Caller(plan, options, caller.budget)
        results = caller.call(selected)
        stamp = now_iso()
        samples.append({cid: answer_from_call(r, stamp) for cid, r in results.items()})
        prefix = f"sample {index + 1} of {options.repeat}: " if options.repeat > 1 else ""
        notes += [prefix + note for note in _call_notes(results)]
    return CollectedAnswers(
        answers=samples[0],
        cassette_kind=CassetteKind.LIVE_CALL,
        notes=tuple(notes),
        tags={TAG_BUDGET_EXHAUSTED: flag(caller.budget.exhausted())},
        extra_samples=tuple(samples[1:]),
    )


def collect_record(plan: RunPlan, gold: GoldSet, options: RunOptions) -> CollectedAnswers:
    """``record``: call the provider for every conversation without a finished live cassette,
    store each answer as a cassette as it arrives, and refresh the manifest when complete."""
    caller = _Caller(plan, options)
    recording = CassetteRecording(gold, plan.provider, plan.model)

    def store(cid: str, answer: ProviderAnswer) -> None:
        if not keepable(answer):
            return  # a typed failure of this conversation; the next `record` asks again
        recording.store(
            cid,
            response=answer.content,
            finish_reason=answer.finish_reason,
            refusal=answer.refusal,
            system_fingerprint=answer.system_fingerprint,
            usage=answer.usage,
        )

    results = caller.call(recording.todo, on_answer=store)
    answers: dict[str, Answer] = {cid: answer_from_cassette(c) for cid, c in recording.kept.items()}
    for cid, result in results.items():  # a new cassette holds the same answer, redacted alike
        new = recording.new.get(cid)
        answers[cid] = answer_from_call(result, new.recorded_at if new is not None else None)
    summary = recording.finish()
    notes = [
        f"recorded {summary.recorded} cassette(s), kept {summary.kept} finished one(s) byte-identical.",
        *_call_notes(results),
        summary.manifest_note,
    ]
    return CollectedAnswers(
        answers=answers,
        cassette_kind=CassetteKind.LIVE_RECORDED,
        notes=tuple(notes),
        tags={TAG_RECORDING_COMPLETE: flag(summary.complete), TAG_BUDGET_EXHAUSTED: flag(caller.budget.exhausted())},
    )
