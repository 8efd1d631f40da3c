"""Bytes-level helpers: canonical JSON, sha256, atomic writes, line-numbered JSONL reading."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._exceptions import GoldDataError


def canonical_json(obj: Any) -> bytes:
    """The contract's canonical form: sorted keys, no spaces, UTF-8, non-ASCII kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    return sha256_hex(path.read_bytes())


def dumps_line(obj: Any) -> str:
    """One JSONL line (no trailing newline), stable across runs."""
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))


def current_umask() -> int:
    """The process's umask (read by setting it and setting it back: there is no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves the old or the new file, whole.

    Temp file in the same folder, fsync, rename over the target, fsync the folder. The file
    gets the mode a plain ``open()`` would give it (0666 less the umask), not mkstemp's 0600.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def write_json(path: Path, obj: Any) -> None:
    """Pretty JSON with a trailing newline, written atomically."""
    atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


#: How deep a JSON value may nest (objects and arrays) in any file or answer the harness reads.
#: Real rows nest 4 levels; Python's parser overflows its stack near 1,000.
MAX_JSON_DEPTH = 64
_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def json_depth(text: str, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of the JSON ``text`` (strings skipped), counted up to ``limit + 1``:
    cheap enough to run before ``json.loads`` on every line and every answer."""
    depth = deepest = 0
    for match in _STRUCTURE.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif token in "]}":
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


@dataclass(frozen=True)
class JsonlRow:
    """One parsed line of a JSONL file, with where it came from."""

    path: Path
    line: int
    raw: bytes
    value: Any


def iter_jsonl(path: Path) -> Iterator[JsonlRow]:
    """Yield every row of a JSONL file; raise GoldDataError naming file and line on bad bytes.

    Checks: the file exists, each line is valid UTF-8, each line is one JSON object,
    no empty line sits between rows, and a last line without a newline is complete.
    A zero-byte file holds zero rows (an all-negative ``expected_memories.jsonl`` is one).
    """
    path = Path(path)
    if not path.is_file():
        raise GoldDataError(
            f"{path}: file not found. Every gold folder needs it; restore it from git "
            f"(`git checkout -- {path}`) or point --gold at the right folder."
        )
    data = path.read_bytes()
    if not data:
        return
    ends_with_newline = data.endswith(b"\n")
    lines = data.split(b"\n")
    if ends_with_newline:
        lines = lines[:-1]
    last = len(lines)
    for index, raw in enumerate(lines, start=1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if raw.strip() == b"":
            raise GoldDataError(
                f"{path}:{index}: empty line. JSONL holds one JSON object per line; delete the empty line."
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise GoldDataError(
                f"{path}:{index}: invalid UTF-8 at byte {exc.start} of the line "
                f"({raw[max(0, exc.start - 10) : exc.start + 10]!r}). Save the file as UTF-8."
            ) from None
        if json_depth(text) > MAX_JSON_DEPTH:
            raise GoldDataError(
                f"{path}:{index}: JSON nested deeper than {MAX_JSON_DEPTH} levels; no row of this file "
                "nests more than a few. Restore the line from git or regenerate the file."
            )
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            if index == last and not ends_with_newline:
                raise GoldDataError(
                    f"{path}:{index}: truncated last line (no newline at the end of the file "
                    f"and the line is not complete JSON: {exc.msg} at column {exc.colno}). "
                    "The file was cut off while being written; restore it from git "
                    "(`git checkout -- <file>`) or regenerate it."
                ) from None
            raise GoldDataError(
                f"{path}:{index}: invalid JSON ({exc.msg} at column {exc.colno}): "
                f"{text[:80]!r}. Fix the line so it holds one JSON object."
            ) from None
        if not isinstance(value, dict):
            raise GoldDataError(
                f"{path}:{index}: expected a JSON object, got {type(value).__name__} "
                f"{text[:60]!r}. Each line must be one object."
            )
        yield JsonlRow(path=path, line=index, raw=raw, value=value)


def parse_json(data: bytes, where: str) -> Any:
    """A JSON document's value; GoldDataError naming ``where`` and the position when it is broken."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GoldDataError(f"{where}: invalid UTF-8 at byte {exc.start}. Save it as UTF-8.") from None
    if json_depth(text) > MAX_JSON_DEPTH:
        raise GoldDataError(
            f"{where}:1: JSON nested deeper than {MAX_JSON_DEPTH} levels; restore the file from git or "
            "regenerate it with the command that owns it."
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise GoldDataError(
            f"{where}:{exc.lineno}: invalid JSON ({exc.msg} at column {exc.colno}). "
            "Fix the file or regenerate it with the command that owns it."
        ) from None


def read_json(path: Path) -> Any:
    """A JSON document; GoldDataError naming the file and position when it is broken."""
    path = Path(path)
    if not path.is_file():
        raise GoldDataError(f"{path}: file not found.")
    return parse_json(path.read_bytes(), str(path))
