"""Live modes: ``record`` (writes cassettes), ``live`` and ``vllm`` (calls only)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from .._exceptions import ConfigurationError
from ..cassettes import build_manifest, now_iso, write_cassettes, write_manifest
from ..cassettes._store import new_cassette
from ..contract import prompt_sha256, request_sha256, schema_sha256
from ..evaluation._plan import RunPlan
from ..evaluation._records import PRICES_PER_MTOK, CallRecord, usage_tokens
from ..evaluation._run import Collected, RunOptions, replay_records
from ..gold import CASSETTES_FILE, MANIFEST_FILE, Cassette, Conversation, GoldSet, load_cassettes
from ..mlflow_names import TAG_BUDGET_EXHAUSTED, TAG_RECORDING_COMPLETE, flag
from ..scoring import FailureReason, Outcome, parse_response
from ..vocab import CassetteKind, Mode
from ._base import ProviderAnswer, Redactor
from ._calls import Budget, CallResult, call_all
from ._factory import make_provider
from ._openai import ChatCompletionsProvider
from ._progress import Progress
from ._retry import RetryPolicy


def _record(result: CallResult, recorded_at: str | None) -> CallRecord:
    cid = result.conversation_id
    if result.skipped:
        return CallRecord(cid, Outcome.failed(FailureReason.BUDGET_EXHAUSTED, "not attempted: the budget was reached"))
    if result.answer is None:
        return CallRecord(
            cid, Outcome.failed(FailureReason.TRANSPORT, result.transport_error or "transport"), retries=result.retries
        )
    answer = result.answer
    tokens_in, tokens_out = usage_tokens(answer.usage)
    return CallRecord(
        cid,
        parse_response(answer.content, finish_reason=answer.finish_reason, refusal=answer.refusal),
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        latency_s=answer.latency_s,
        system_fingerprint=answer.system_fingerprint,
        recorded_at=recorded_at,
        retries=result.retries,
    )


def _cassette(conversation: Conversation, model: str, answer: ProviderAnswer) -> Cassette:
    return new_cassette(
        conversation,
        model,
        CassetteKind.LIVE_RECORDED,
        recorded_at=now_iso(),
        response=answer.content,
        finish_reason=answer.finish_reason,
        refusal=answer.refusal,
        system_fingerprint=answer.system_fingerprint,
        usage=answer.usage,
    )


def _notes(results: dict[str, CallResult]) -> list[str]:
    notes = []
    transport = sorted(cid for cid, r in results.items() if r.transport_error)
    skipped = sorted(cid for cid, r in results.items() if r.skipped)
    if transport:
        notes.append(f"{len(transport)} call(s) failed in transport after retries: {transport[:10]!r}")
    if skipped:
        notes.append(f"budget reached: {len(skipped)} conversation(s) not attempted: {skipped[:10]!r}")
    return notes


def _call(
    provider: ChatCompletionsProvider,
    conversations: Sequence[Conversation],
    redactor: Redactor,
    policy: RetryPolicy,
    budget: Budget,
    options: RunOptions,
    on_answer: Callable[[str, ProviderAnswer], None] | None = None,
) -> dict[str, CallResult]:
    """Every conversation once through the provider, with progress on stderr."""
    return asyncio.run(
        call_all(
            provider,
            conversations,
            concurrency=options.concurrency,
            policy=policy,
            redactor=redactor,
            budget=budget,
            progress=Progress(len(conversations), bar=options.progress),
            on_answer=on_answer,
        )
    )


def collect_live(plan: RunPlan, gold: GoldSet, selected: Sequence[Conversation], options: RunOptions) -> Collected:
    """Call the provider for every selected conversation (and, in record mode, keep cassettes)."""
    if options.max_cost_usd is not None and plan.model not in PRICES_PER_MTOK:
        raise ConfigurationError(
            f"--max-cost-usd needs a price for model {plan.model!r}, and none is known "
            f"(known: {sorted(PRICES_PER_MTOK)!r}); use --max-tokens instead."
        )
    provider, redactor = make_provider(plan.provider, plan.model, plan.mode, timeout_s=options.timeout_s)
    policy = RetryPolicy(max_retries=options.max_retries)
    budget = Budget(plan.model, options.max_tokens, options.max_cost_usd)
    if plan.mode is Mode.RECORD:
        return _record_cassettes(plan, gold, provider, redactor, policy, budget, options)
    results = _call(provider, selected, redactor, policy, budget, options)
    stamp = now_iso()
    return Collected(
        records={cid: _record(r, stamp) for cid, r in results.items()},
        cassette_kind=CassetteKind.LIVE_CALL,
        notes=tuple(_notes(results)),
        tags={TAG_BUDGET_EXHAUSTED: flag(budget.exhausted())},
    )


def _record_cassettes(
    plan: RunPlan,
    gold: GoldSet,
    provider: ChatCompletionsProvider,
    redactor: Redactor,
    policy: RetryPolicy,
    budget: Budget,
    options: RunOptions,
) -> Collected:
    """Record what is missing or stale; keep finished entries byte-identical."""
    path = gold.path / CASSETTES_FILE
    model = plan.model
    existing = {c.conversation_id: (row.raw, c) for row, c in load_cassettes(path)} if path.exists() else {}
    current = {c.conversation_id: request_sha256(c, model) for c in gold.conversations}

    def finished(c: Cassette) -> bool:
        return (
            c.cassette_kind is CassetteKind.LIVE_RECORDED
            and c.model == model
            and c.request_sha256 == current.get(c.conversation_id)
            and c.prompt_sha256 == prompt_sha256()
            and c.schema_sha256 == schema_sha256()
        )

    keep = {cid: raw for cid, (raw, c) in existing.items() if finished(c)}
    stale = {cid: raw for cid, (raw, c) in existing.items() if cid not in keep and cid in current}
    order = [c.conversation_id for c in gold.conversations]
    todo = [c for c in gold.conversations if c.conversation_id not in keep]
    by_id = {c.conversation_id: c for c in gold.conversations}
    new: dict[str, Cassette] = {}

    def store(cid: str, answer: ProviderAnswer) -> None:
        new[cid] = _cassette(by_id[cid], model, answer)
        raw = {k: v for k, v in stale.items() if k not in new} | keep
        write_cassettes(path, order, new, keep_raw=raw)

    results = _call(provider, todo, redactor, policy, budget, options, on_answer=store)
    kept_cassettes = {cid: existing[cid][1] for cid in keep}
    records = replay_records(kept_cassettes)
    for cid, result in results.items():  # a new cassette holds the same answer, redacted alike
        records[cid] = _record(result, new[cid].recorded_at if cid in new else None)
    complete = all(cid in keep or cid in new for cid in order)
    notes = _notes(results)
    notes.insert(0, f"recorded {len(new)} cassette(s), kept {len(keep)} finished one(s) byte-identical.")
    if complete:
        all_cassettes = [kept_cassettes.get(cid) or new[cid] for cid in order]
        manifest = build_manifest(
            gold,
            provider=plan.provider.value,
            model=model,
            kind=CassetteKind.LIVE_RECORDED,
            cassettes=all_cassettes,
            previous=gold.manifest,
            version=gold.version,
        )
        written = write_manifest(gold.path / MANIFEST_FILE, manifest, gold.manifest)
        notes.append(
            f"{MANIFEST_FILE} {'refreshed' if written else 'already up to date'}: cassette_kind "
            f"{CassetteKind.LIVE_RECORDED.value}, prompt {manifest.prompt_sha256[:12]}…, schema "
            f"{manifest.schema_sha256[:12]}…. Re-run `run --mode cassette`, then `baseline promote` "
            "that run for review."
        )
    else:
        missing = [cid for cid in order if cid not in keep and cid not in new]
        notes.append(
            f"recording incomplete: {len(missing)} conversation(s) have no live cassette "
            f"({missing[:10]!r}); {MANIFEST_FILE} was left as it was. Rerun `run --mode record` "
            "to record only what is missing."
        )
    return Collected(
        records=records,
        cassette_kind=CassetteKind.LIVE_RECORDED,
        notes=tuple(notes),
        tags={TAG_RECORDING_COMPLETE: flag(complete), TAG_BUDGET_EXHAUSTED: flag(budget.exhausted())},
    )
