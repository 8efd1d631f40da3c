"""A cassette run never loads the OpenAI SDK: it costs about 0.4 s of import on a quiet
machine (docs/benchmarks.md, the eval's cost over `import mlflow`), and replay needs none of it."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_pipeline_and_cli_does_not_import_openai() -> None:
    code = (
        "import sys\n"
        "import extraction_eval.pipeline, extraction_eval.cli, extraction_eval.providers\n"
        "print(sorted(m for m in sys.modules if m == 'openai' or m.startswith('openai.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_retry_loop_still_classifies_sdk_errors_after_a_lazy_import() -> None:
    import asyncio

    import httpx
    import openai

    from extraction_eval.providers import Redactor, RetryPolicy, TransportFailure, call_with_retries

    calls = []

    async def refuse() -> None:
        calls.append(1)
        raise openai.APITimeoutError(request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions"))

    async def no_sleep(_: float) -> None:
        return None

    policy = RetryPolicy(max_retries=2, base_delay_s=0.0, max_delay_s=0.0)
    try:
        asyncio.run(call_with_retries(refuse, policy, Redactor(()), sleep=no_sleep))
    except TransportFailure as exc:
        assert str(exc) == "timeout after 3 attempt(s)"
    else:
        raise AssertionError("a timeout on every attempt must end in TransportFailure")
    assert len(calls) == 3
