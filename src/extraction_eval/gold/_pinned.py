"""The table of known gold versions: sha256 of their frozen inputs.

Once a version has a baseline, its ``conversations.jsonl`` and
``expected_memories.jsonl`` never change. Pinning their hashes here, in the
package, means an edit fails even when the manifest is regenerated. A change
of labels is a new version folder (``gold/v2``), added here with its hashes.
"""

from __future__ import annotations

from collections.abc import Mapping

FROZEN_FILES = ("conversations.jsonl", "expected_memories.jsonl")

PINNED_GOLD: Mapping[str, Mapping[str, str]] = {}
