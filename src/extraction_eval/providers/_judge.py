"""The judge's calls: one chat completion per pair of texts to an OpenAI-compatible endpoint.

The prompt, the request and how an answer is read are the contract's (``contract/_judge.py``);
this module only calls. Settings: ``OPENAI_API_KEY`` (required), ``OPENAI_BASE_URL`` (e.g. a
vLLM server or the stub provider), the model from ``EXTRACTION_EVAL_JUDGE_MODEL``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import httpx

from .._exceptions import ConfigurationError, ProviderError
from .._settings import OPENAI_BASE_URL_VAR, OPENAI_KEY_VAR, env_value
from ..contract._judge import JUDGE_SAMPLING, JUDGE_SCHEMA_NAME, judge_messages, judge_schema
from ._base import ProviderAnswer, Redactor
from ._openai import answer_from_completion

JUDGE_MODEL_VAR = "EXTRACTION_EVAL_JUDGE_MODEL"
DEFAULT_JUDGE_MODEL = "gpt-4o-mini"


def judge_model() -> str:
    return env_value(JUDGE_MODEL_VAR) or DEFAULT_JUDGE_MODEL


class JudgeClient:
    """Asks the judge model about pairs of texts, a few at a time."""

    def __init__(self, model: str, *, api_key: str, base_url: str | None, timeout_s: float = 60.0):
        from openai import AsyncOpenAI

        self.model = model
        self._client = AsyncOpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=2)
        self._url = str(self._client.base_url.join("chat/completions"))
        self._format = {
            "type": "json_schema",
            "json_schema": {"name": JUDGE_SCHEMA_NAME, "strict": True, "schema": judge_schema()},
        }

    async def ask(self, a: str, b: str) -> ProviderAnswer:
        started = time.perf_counter()
        response: httpx.Response = await self._client.post(
            self._url,
            cast_to=httpx.Response,
            body={
                "model": self.model,
                "messages": judge_messages(a, b),
                "response_format": self._format,
                **JUDGE_SAMPLING,
            },
        )
        try:
            completion = response.json()
        except ValueError:
            raise ProviderError(
                f"the judge endpoint {self._url} answered {response.status_code} with a body that is not JSON; "
                "check OPENAI_BASE_URL."
            ) from None
        return answer_from_completion(completion if isinstance(completion, dict) else {}, time.perf_counter() - started)

    async def ask_all(self, pairs: Sequence[tuple[str, str]], concurrency: int = 8) -> list[ProviderAnswer]:
        gate = asyncio.Semaphore(concurrency)

        async def one(pair: tuple[str, str]) -> ProviderAnswer:
            async with gate:
                return await self.ask(*pair)

        try:
            return list(await asyncio.gather(*(one(p) for p in pairs)))
        finally:
            await self._client.close()


def make_judge_client(model: str, command: str, *, timeout_s: float = 60.0) -> tuple[JudgeClient, Redactor]:
    """The judge client from the environment; ``command`` names what needs the key."""
    key = env_value(OPENAI_KEY_VAR)
    if key is None:
        raise ConfigurationError(
            f"`{command}` asks the judge model and needs {OPENAI_KEY_VAR} (never commit it); "
            f"{OPENAI_BASE_URL_VAR} points it at another OpenAI-compatible server. Replaying recorded "
            "judgments needs no key."
        )
    return JudgeClient(model, api_key=key, base_url=env_value(OPENAI_BASE_URL_VAR), timeout_s=timeout_s), Redactor(
        [key]
    )
