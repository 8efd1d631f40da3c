"""Pure JSON helpers, no I/O: the canonical form, hashes of bytes, and a nesting guard.

The scoring core and the I/O layer (``_jsonio``) both use them; nothing here opens a file.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

#: How deep a JSON value may nest (objects and arrays) in any file or answer the harness reads.
#: Real rows nest 4 levels; Python's parser overflows its stack near 1,000.
MAX_JSON_DEPTH = 64
#: One structural character, a quote or a backslash: the only characters the guard looks at.
_SPECIAL = re.compile(r'["\\\[\]{}]')


def canonical_json(obj: Any) -> bytes:
    """The contract's canonical form: sorted keys, no spaces, UTF-8, non-ASCII kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def json_depth(text: str, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of the JSON ``text`` (strings skipped), counted up to ``limit + 1``:
    cheap enough to run before ``json.loads`` on every line and every answer.

    One pass with a constant amount of state (depth, inside a string, after a backslash): each
    match is one character, so the memory does not grow with the text. (The earlier guard
    matched a whole string literal with a repeated group, which made the regex engine keep a
    backtracking frame per character: about 120 bytes per character of a long string.)"""
    depth = deepest = 0
    in_string = escaped = False
    last = -2
    for match in _SPECIAL.finditer(text):
        ch = match.group()
        at = match.start()
        if escaped and at == last + 1:
            escaped = False
            last = at
            continue
        escaped = False
        last = at
        if in_string:
            if ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def loads_bounded(text: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that refuses a value nested deeper than ``limit`` (ValueError, never a
    RecursionError: a nesting bomb is bad input, not a crash)."""
    if json_depth(text, limit) > limit:
        raise ValueError(f"JSON nested deeper than {limit} levels")
    try:
        return json.loads(text)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise ValueError(f"JSON nested deeper than {limit} levels") from None


def utf8_problem(value: Any, where: str = "") -> str | None:
    """Where a string inside ``value`` (a JSON value) cannot be encoded as UTF-8 (a lone
    surrogate such as ``\\ud800``, legal in JSON text), or None when every string can."""
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                bad = item[exc.start : exc.end]
                return f"{path or 'the value'} holds {bad!r} at character {exc.start}, which UTF-8 cannot encode"
        elif isinstance(item, dict):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in item.items())
            stack.extend((f"{path} key", k) for k in item if isinstance(k, str))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(item))
    return None
