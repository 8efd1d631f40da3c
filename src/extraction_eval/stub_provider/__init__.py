"""A local OpenAI-compatible provider for tests and benchmarks.

:class:`StubProviderServer` answers ``POST /v1/chat/completions`` for the conversations of a
gold folder, recognised by their rendered user message, with scripted latency, failures and
answer kinds. It is an aiohttp server on 127.0.0.1 whose event loop runs in one background
daemon thread, so concurrent requests overlap their latency and synchronous tests can use it
as a context manager.
"""

from ._schema_check import strict_schema_errors
from ._script import Behavior, StubScript, load_answer_set
from ._server import RecordedRequest, StubProviderServer, serve

__all__ = [
    "Behavior",
    "RecordedRequest",
    "StubProviderServer",
    "StubScript",
    "load_answer_set",
    "serve",
    "strict_schema_errors",
]
