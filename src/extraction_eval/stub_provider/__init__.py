"""A local OpenAI-compatible provider for tests and benchmarks, over HTTP or in process.

:class:`StubProviderServer` answers ``POST /v1/chat/completions`` for the conversations of a
gold folder, recognised by their rendered user message, with scripted latency, failures and
answer kinds. It is an aiohttp server on 127.0.0.1 whose event loop runs in one background
daemon thread, so concurrent requests overlap their latency and synchronous tests can use it
as a context manager. :class:`FakeProvider` plays the same scripts at the provider seam,
without a socket, for unit tests.
"""

from typing import TYPE_CHECKING

from ._schema_check import strict_schema_errors
from ._script import Behavior, StubScript, load_answer_set
from ._server import RecordedRequest, StubProviderServer, serve

if TYPE_CHECKING:
    from ._fake import FakeCall, FakeProvider

__all__ = [
    "Behavior",
    "FakeCall",
    "FakeProvider",
    "RecordedRequest",
    "StubProviderServer",
    "StubScript",
    "load_answer_set",
    "serve",
    "strict_schema_errors",
]


def __getattr__(name: str) -> object:
    # Loaded on first use: the fake needs the openai SDK and the providers package, which the
    # server (``python -m extraction_eval.stub_provider``) does not.
    if name in ("FakeCall", "FakeProvider"):
        from . import _fake

        return getattr(_fake, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
