"""The table of known gold versions: sha256 of their frozen inputs.

Once a version has a baseline, its ``conversations.jsonl`` and
``expected_memories.jsonl`` (and, from v2 on, ``forbidden_memories.jsonl``) never
change: every file listed under a version is checked. Pinning their hashes here, in the
package, means an edit fails even when the manifest is regenerated. A change
of labels is a new version folder (``gold/v2``), added here with its hashes.
"""

from __future__ import annotations

from collections.abc import Mapping

FROZEN_FILES = ("conversations.jsonl", "expected_memories.jsonl")

PINNED_GOLD: Mapping[str, Mapping[str, str]] = {
    "v1": {
        "conversations.jsonl": "a05f9ae21f2a5e3b9f1ba4f0efca0f773a2fb6330777822157b77dfe2be7f025",
        "expected_memories.jsonl": "9ffd9f982f23eda8b520b694c8338b8a969a9993b92e8b02e51398067a25a0c0",
    },
    # scripts/gold_v2_assemble.py output (docs/gold-v2-record/README.md).
    "v2": {
        "conversations.jsonl": "43a12773979cd747743bb836e81ac52d3f160166e87dcae16e2e5da2f57ee59a",
        "expected_memories.jsonl": "278dedea5d802cca60b1d44726c0fb95868e4f6fa6f13440f1e4e9f8033f0701",
        "forbidden_memories.jsonl": "e5950e41eea402786ec8df147060e0dfc7817a6d6ea93c9077f4e2de24038cd8",
    },
    # scripts/gold_v3_assemble.py output: v2 with its errata + the hard security slice (docs/gold-v3-record/).
    "v3": {
        "conversations.jsonl": "58032f8c1167cd81119c9b13eebffccfacd33256d8a8b9c6e2eb0dcd426d0a3e",
        "expected_memories.jsonl": "1d466a613d7e2bfcb5afd36f6d876f5936b48245ca76ce506b63bdb92db2f416",
        "forbidden_memories.jsonl": "02ed29424aaa3757a0947f56649f7d1d22f68c1791620da4c449ac9e7a35b365",
    },
}

# The matcher calibration pairs (gold/matcher-calibration/): frozen like gold inputs; a
# changed pair is a new version of the set, added here with its hashes.
PINNED_CALIBRATION: Mapping[str, str] = {
    "tuning.jsonl": "b63543705ce189c52f07f9cd7dc40d321efed257f63b8171426fb2a2aba027f3",
    "heldout.jsonl": "daf0af1113690b972953c84225eedd8634fc3526aacd77cad0b75273734ff8b9",
}

# The tuning/held-out split of each gold version's answer sets (<gold>/answers/halves.json,
# written by scripts/answer_halves.py): a split that moved would let the held-out half leak.
ANSWER_HALVES: Mapping[str, str] = {
    "v1": "cf5773df4250132409df5df4abe734df5d5fef73d64334fed025607a4fbf3408",
    "v2": "ad10f71290be4ed24f571ab9a5e1717aae0eb75fb9cb3f19ef405994c58e8087",
    # v3 inherits v2's halves for v2's conversations; its 180 new ones are split by the rule
    "v3": "e0fdbc4a24270233539447fa233cfab0f1b5b6e41a757efef62d1505b9f219c1",
}
