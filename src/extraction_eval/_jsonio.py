"""Bytes-level helpers: canonical JSON, sha256, atomic writes, line-numbered JSONL reading."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._exceptions import GoldDataError
from ._json import MAX_JSON_DEPTH, canonical_json, json_depth, loads_bounded, sha256_hex

__all__ = [  # the pure helpers stay importable from here
    "MAX_JSON_DEPTH",
    "MAX_LINE_BYTES",
    "JsonlRow",
    "atomic_write_bytes",
    "atomic_write_text",
    "canonical_json",
    "dumps_line",
    "iter_jsonl",
    "json_depth",
    "loads_bounded",
    "parse_json",
    "read_json",
    "sha256_file",
    "sha256_hex",
    "write_json",
]

#: The longest line of a JSONL file the harness reads (bytes). A gold conversation is tens of KB
#: and the longest cassette (an answer of MAX_RESPONSE_CHARS) under 8 MiB; a longer line is
#: refused with its file and line before it is read whole, so memory stays bounded per line.
MAX_LINE_BYTES = 8 * 1024 * 1024


def sha256_file(path: Path) -> str:
    """The sha256 of a file's bytes, read in 1 MiB chunks."""
    return sha256_files([path])


def sha256_files(paths: Iterable[Path], extra: bytes = b"") -> str:
    """The sha256 of the files' bytes one after another, then ``extra``: the digest of their
    concatenation, read in 1 MiB chunks and never held (a 100x gold set's files are 280 MB)."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    digest.update(extra)
    return digest.hexdigest()


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
    atomic_write_chunks(path, (data,))


def atomic_write_chunks(path: Path, chunks: Iterable[bytes]) -> None:
    """``atomic_write_bytes`` of the chunks' concatenation, written as they come: a large file
    (a run's per-conversation lines at 100x gold v2) is never held whole in memory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
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


def atomic_write_lines(path: Path, lines: Iterable[str]) -> None:
    """Each text line (with its newline) UTF-8 encoded and written as it comes, atomically."""
    atomic_write_chunks(path, (line.encode("utf-8") for line in lines))


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def write_json(path: Path, obj: Any) -> None:
    """Pretty JSON with a trailing newline, written atomically."""
    atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


@dataclass(frozen=True)
class JsonlRow:
    """One parsed line of a JSONL file, with where it came from."""

    path: Path
    line: int
    raw: bytes
    value: Any


def _lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, bytes without the newline, whether a newline ended it), one line at a time:
    a line longer than MAX_LINE_BYTES is refused before it is read whole."""
    with open(path, "rb") as handle:
        number = 0
        while True:
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            ended = raw.endswith(b"\n")
            if not ended and len(raw) > MAX_LINE_BYTES:
                raise GoldDataError(
                    f"{path}:{number}: the line is longer than {MAX_LINE_BYTES:,} bytes (MAX_LINE_BYTES); no row "
                    "of a gold or cassette file is that long, so it is refused before it is read. Restore the "
                    "file from git or regenerate it with the command that owns it."
                )
            yield number, raw[:-1] if ended else raw, ended


def iter_jsonl(path: Path) -> Iterator[JsonlRow]:
    """Yield every row of a JSONL file; raise GoldDataError naming file and line on bad bytes.

    Checks: the file exists, no line is longer than MAX_LINE_BYTES (checked before the line
    is read whole), each line is valid UTF-8, each line is one JSON object nested at most
    MAX_JSON_DEPTH deep, no empty line sits between rows, and a last line without a newline
    is complete. A zero-byte file holds zero rows (an all-negative ``expected_memories.jsonl``
    is one). The file is read one line at a time.
    """
    path = Path(path)
    if not path.is_file():
        raise GoldDataError(
            f"{path}: file not found. Every gold folder needs it; restore it from git "
            f"(`git checkout -- {path}`) or point --gold at the right folder."
        )
    for index, raw, ended in _lines(path):
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
            if not ended:
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
        except ValueError as exc:  # an integer longer than Python converts
            raise GoldDataError(
                f"{path}:{index}: unusable JSON ({str(exc)[:120]}). Fix or regenerate the line."
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
