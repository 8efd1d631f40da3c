"""The batch extraction system prompt, shipped as a package file, and its hash."""

from __future__ import annotations

from functools import cache
from importlib import resources

from .._jsonio import sha256_hex

PROMPT_FILE = "batch_extraction_system_prompt.md"


@cache
def _prompt_bytes() -> bytes:
    return resources.files(__package__).joinpath(PROMPT_FILE).read_bytes()


def system_prompt() -> str:
    """The system prompt sent with every extraction request."""
    return _prompt_bytes().decode("utf-8")


def prompt_sha256() -> str:
    """sha256 of the UTF-8 bytes of the system prompt."""
    return sha256_hex(_prompt_bytes())
