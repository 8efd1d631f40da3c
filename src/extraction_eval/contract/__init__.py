"""The extraction contract: system prompt, output schema, request rendering and their hashes."""

from ._prompt import prompt_sha256, system_prompt
from ._request import (
    SAMPLING,
    RequestKey,
    full_messages,
    render_conversation,
    request_key,
    request_messages,
    request_sha256,
)
from ._schema import BatchExtractionResult, ExtractedMemory, batch_extraction_schema, schema_sha256

__all__ = [
    "SAMPLING",
    "BatchExtractionResult",
    "ExtractedMemory",
    "RequestKey",
    "batch_extraction_schema",
    "full_messages",
    "prompt_sha256",
    "render_conversation",
    "request_key",
    "request_messages",
    "request_sha256",
    "schema_sha256",
    "system_prompt",
]
