"""Calling the provider for many conversations: bounded concurrency, retries, a budget."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..gold import Conversation
from ._base import ProviderAnswer, ProviderClient, Redactor
from ._pricing import cost_usd, usage_tokens
from ._progress import Progress
from ._retry import RetryPolicy, TransportFailure, call_with_retries

#: The oldest generation's threshold while calls are in flight: never reached.
NO_FULL_COLLECTION = 2**31 - 1


@dataclass(frozen=True)
class CallResult:
    """One conversation's call: an answer, a transport failure, or not attempted (budget)."""

    conversation_id: str
    answer: ProviderAnswer | None = None
    transport_error: str | None = None
    retries: int = 0
    skipped: bool = False


class Budget:
    """Stops new requests once the token or (estimated) dollar budget is reached."""

    def __init__(self, model: str, max_tokens: int | None, max_cost_usd: float | None):
        self.model = model
        self.max_tokens = max_tokens
        self.max_cost_usd = max_cost_usd
        self.tokens = 0
        self.cost = 0.0

    def exhausted(self) -> bool:
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            return True
        return self.max_cost_usd is not None and self.cost >= self.max_cost_usd

    def add(self, answer: ProviderAnswer) -> tuple[int, float]:
        tokens_in, tokens_out = usage_tokens(answer.usage)
        tokens = (tokens_in or 0) + (tokens_out or 0)
        cost = cost_usd(self.model, tokens_in or 0, tokens_out or 0) or 0.0
        self.tokens += tokens
        self.cost += cost
        return tokens, cost


async def call_all(
    client: ProviderClient,
    conversations: Sequence[Conversation],
    *,
    concurrency: int,
    policy: RetryPolicy,
    redactor: Redactor,
    budget: Budget,
    progress: Progress | None = None,
    on_answer: Callable[[str, ProviderAnswer], None] | None = None,
) -> dict[str, CallResult]:
    """Every conversation once, at most ``concurrency`` in flight.

    A call that cannot succeed (a bad key) cancels the rest; whatever ``on_answer``
    already stored stays stored.
    """
    semaphore = asyncio.Semaphore(concurrency)
    results: dict[str, CallResult] = {}

    async def one(conversation: Conversation) -> None:
        cid = conversation.conversation_id
        async with semaphore:
            if budget.exhausted():
                results[cid] = CallResult(cid, skipped=True)
                return
            try:
                answer, retries = await call_with_retries(lambda: client.complete(conversation), policy, redactor)
            except TransportFailure as exc:
                results[cid] = CallResult(cid, transport_error=exc.detail, retries=exc.attempts - 1)
                if progress is not None:
                    progress.update(failed=True, tokens=0, cost=0.0)
                return
            answer = redactor.answer(answer)
            tokens, cost = budget.add(answer)
            results[cid] = CallResult(cid, answer=answer, retries=retries)
            if on_answer is not None:
                on_answer(cid, answer)
            if progress is not None:
                failed = answer.content is None or answer.finish_reason not in ("stop", None)
                progress.update(failed=failed, tokens=tokens, cost=cost)

    # No full (oldest-generation) garbage collection while requests are in flight: one scans
    # every object of the process (the SDK's models, MLflow's if imported, the gold set) and
    # stalls every request for its length (0.36 s for one in the benchmark's process,
    # docs/benchmarks.md). Young collections go on; a full one that falls due runs after the
    # calls. Why not gc.freeze(): docs/decisions.md#scheduling-the-calls.
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], NO_FULL_COLLECTION)
    try:
        async with asyncio.TaskGroup() as group:
            for conversation in conversations:
                group.create_task(one(conversation))
                # One loop iteration per task started: each first request goes out as soon as
                # it is built. Started all at once, every first request would wait for all
                # ``concurrency`` to be built (each yields while its connection opens) and go out
                # as one burst, and the answers would come back, and every later round go out,
                # in bursts that queue on the event loop (docs/benchmarks.md, section 3).
                await asyncio.sleep(0)
    except* Exception as errors:  # surface the first real error, not the group wrapper
        raise errors.exceptions[0] from None
    finally:
        gc.set_threshold(*thresholds)
        if progress is not None:
            progress.close()
        await client.aclose()
    return results
