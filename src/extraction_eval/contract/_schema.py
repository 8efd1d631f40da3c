"""The output contract: ``BatchExtractionResult`` and the hash of its JSON schema."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._jsonio import canonical_json, sha256_hex
from ..vocab import Category, TemporalKind


class ExtractedMemory(BaseModel):
    """One memory as the extractor returns it; temporal_kind is durable, current, past or future."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(description="One fact about the user, one sentence, starting with 'User' or \"User's\".")
    categories: list[Category] = Field(
        min_length=1,
        max_length=3,
        description="One to three distinct categories; more than one only when the fact cannot be split.",
    )
    # No description here: OpenAI strict mode rejects a ``$ref`` with sibling keywords.
    temporal_kind: TemporalKind
    supersedes: str | None = Field(description="The stale fact this memory replaces, written as a memory, or null.")

    @field_validator("categories")
    @classmethod
    def _distinct(cls, value: list[Category]) -> list[Category]:
        if len(set(value)) != len(value):
            raise ValueError(f"categories must be distinct, got {[c.value for c in value]!r}")
        return value


class BatchExtractionResult(BaseModel):
    """Every memory extracted from one conversation."""

    model_config = ConfigDict(extra="forbid")

    memories: list[ExtractedMemory] = Field(
        description="The memories worth keeping; an empty list when there are none."
    )


@cache
def _schema_bytes() -> bytes:
    return canonical_json(BatchExtractionResult.model_json_schema())


def batch_extraction_schema() -> dict[str, Any]:
    """The JSON schema pydantic generates for ``BatchExtractionResult`` (a fresh copy)."""
    return BatchExtractionResult.model_json_schema()


def schema_sha256() -> str:
    """sha256 of the canonical JSON of the ``BatchExtractionResult`` schema."""
    return sha256_hex(_schema_bytes())
