"""A small HTTP/1.1 server-side codec over asyncio streams: what the stub provider needs.

It reads a request line, header fields and a ``Content-Length`` body (RFC 9112), and writes a
whole response (status line, headers and body) as one buffer. Persistent connections follow
the version's default and the ``Connection`` header. Bodies framed otherwise are refused:
``Transfer-Encoding: chunked`` with 411, any other transfer coding with 400; the connection
is then closed, as the request's framing is unknown.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus

SERVER_NAME = "stub-provider/1"

#: Longest request line or header line, and most header fields, a request may have.
MAX_LINE = 64 * 1024
MAX_HEADERS = 100
#: Largest request body accepted.
MAX_BODY = 64 * 1024 * 1024
#: Blank lines tolerated before a request line (RFC 9112 section 2.2: robustness).
MAX_LEADING_BLANK_LINES = 8

_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VERSION = re.compile(rb"HTTP/([0-9])\.([0-9])")
_DIGITS = re.compile(rb"[0-9]+")
_BAD_VALUE_BYTES = re.compile(rb"[\x00\r]")


class ProtocolError(Exception):
    """A request the codec cannot accept; answered with ``status`` and the connection closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)
class Request:
    """One request's head and body. Header names are lower-cased; a repeated name keeps its
    last value, as the recorded requests always did."""

    method: str
    target: str
    version: tuple[int, int]
    headers: dict[str, str]
    keep_alive: bool
    content_length: int
    expect_continue: bool
    body: bytes = b""
    #: The event loop's clock when the head was read: scripted latency counts from here.
    received_at: float = 0.0


async def _read_line(reader: asyncio.StreamReader, too_long: int, what: str) -> bytes:
    """One line without its terminator (LF, or CRLF). Raises IncompleteReadError at EOF."""
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.LimitOverrunError as exc:
        raise ProtocolError(too_long, f"The {what} is too long.") from exc
    if len(line) > MAX_LINE:
        raise ProtocolError(too_long, f"The {what} is too long.")
    return line[:-2] if line.endswith(b"\r\n") else line[:-1]


async def read_request_head(reader: asyncio.StreamReader) -> Request | None:
    """The next request's line and headers; None when the client closed between requests.

    Raises :class:`ProtocolError` for a malformed head, and ``asyncio.IncompleteReadError``
    when the connection ends inside one.
    """
    line = b""
    for _ in range(MAX_LEADING_BLANK_LINES + 1):
        try:
            line = await _read_line(reader, 414, "request line")
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                raise
            return None  # a clean close between requests
        if line:
            break
    else:
        raise ProtocolError(400, "Bad request line: only blank lines were received.")

    parts = line.split()
    if len(parts) != 3:
        raise ProtocolError(400, f"Bad request line {_show(line)}.")
    method, target, version_text = parts
    version = _VERSION.fullmatch(version_text)
    if not _TOKEN.fullmatch(method) or version is None:
        raise ProtocolError(400, f"Bad request line {_show(line)}.")
    major, minor = int(version[1]), int(version[2])
    if major != 1:
        raise ProtocolError(505, f"HTTP version {version_text.decode('latin-1')} is not supported.")

    headers: dict[str, str] = {}
    lengths: set[bytes] = set()
    transfer_encoding: list[str] = []
    connection: list[str] = []
    count = 0
    while True:
        field = await _read_line(reader, 431, "header field")
        if not field:
            break
        count += 1
        if count > MAX_HEADERS:
            raise ProtocolError(431, f"Too many header fields (more than {MAX_HEADERS}).")
        if field[:1] in (b" ", b"\t"):
            raise ProtocolError(400, "Obsolete header line folding is not accepted.")
        name, colon, raw_value = field.partition(b":")
        if not colon or not _TOKEN.fullmatch(name):
            raise ProtocolError(400, f"Bad header field {_show(field)}.")
        value = raw_value.strip(b" \t")
        if _BAD_VALUE_BYTES.search(value):
            raise ProtocolError(400, f"Bad header field {_show(field)}.")
        key = name.decode("ascii").lower()
        text = value.decode("latin-1")
        headers[key] = text
        if key == "content-length":
            lengths.update(v.strip(b" \t") for v in value.split(b","))
        elif key == "transfer-encoding":
            transfer_encoding.append(text.lower())
        elif key == "connection":
            connection.extend(t.strip().lower() for t in text.split(","))

    if transfer_encoding:
        codings = ",".join(transfer_encoding)
        if "chunked" in codings:
            raise ProtocolError(
                411,
                "Chunked request bodies are not supported by the stub provider; send the body "
                "with a Content-Length header.",
            )
        raise ProtocolError(400, f"Transfer-Encoding {codings!r} is not supported.")
    content_length = 0
    if lengths:
        if len(lengths) != 1 or not _DIGITS.fullmatch(next(iter(lengths))):
            raise ProtocolError(400, "Bad Content-Length header.")
        content_length = int(next(iter(lengths)))
        if content_length > MAX_BODY:
            raise ProtocolError(413, f"The request body is larger than {MAX_BODY} bytes.")

    if minor >= 1:
        keep_alive = "close" not in connection
    else:
        keep_alive = "keep-alive" in connection and "close" not in connection
    expect = headers.get("expect", "").lower() == "100-continue" and minor >= 1
    return Request(
        method=method.decode("ascii"),
        target=target.decode("latin-1"),
        version=(major, minor),
        headers=headers,
        keep_alive=keep_alive,
        content_length=content_length,
        expect_continue=expect and content_length > 0,
    )


CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


async def read_body(reader: asyncio.StreamReader, request: Request) -> bytes:
    """The request's Content-Length body. Raises IncompleteReadError when it is cut short."""
    if request.content_length == 0:
        return b""
    return await reader.readexactly(request.content_length)


def _show(line: bytes, limit: int = 80) -> str:
    text = line[:limit].decode("latin-1")
    return repr(text + ("..." if len(line) > limit else ""))


# responses -----------------------------------------------------------------------------------

_date_cache: tuple[int, str] = (0, "")


def http_date() -> str:
    """The current IMF-fixdate, formatted once per second."""
    global _date_cache
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache = (now, formatdate(now, usegmt=True))
    return _date_cache[1]


def reason_phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def encode_response(
    status: int,
    body: bytes,
    headers: Iterable[tuple[str, str]] = (),
    *,
    keep_alive: bool,
    version: tuple[int, int] = (1, 1),
    include_body: bool = True,
) -> bytes:
    """The whole response, status line to body, as one buffer."""
    lines = [
        f"HTTP/1.1 {status} {reason_phrase(status)}",
        f"Server: {SERVER_NAME}",
        f"Date: {http_date()}",
    ]
    lines.extend(f"{name}: {value}" for name, value in headers)
    lines.append(f"Content-Length: {len(body)}")
    if not keep_alive:
        lines.append("Connection: close")
    elif version < (1, 1):
        lines.append("Connection: keep-alive")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + body if include_body else head
