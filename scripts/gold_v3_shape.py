#!/usr/bin/env python3
"""Gold v3 against its plan (docs/gold-set.md#v3): print every figure of the plan's table.

    python scripts/gold_v3_shape.py [--gold gold/v3] [--record docs/gold-v3-record]

From the gold files: conversations and rows (v2's part and the new part), the hard slice's
conversations per reason and stratum, the share of telegraphed cases, the new negatives. From the
record: the writers' feature tags (``writers/<w>/meta.jsonl``: which conversations narrate a
routine, which negatives tempt and how, which injections the transcript's assistant flags), the
invented names counted in the conversations' own text (every name of the writers' pools,
``name_pools.json``, as a whole word), and the injection carriers' words checked for the ones the
plan forbids (AI, assistant, model, bot, ChatGPT, memory).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from extraction_eval._entry import run_entry

ROOT = Path(__file__).resolve().parent.parent
WRITERS = ("g", "h", "i")


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def shape(gold: Path, record: Path) -> dict[str, Any]:
    conversations = _read(gold / "conversations.jsonl")
    expected = _read(gold / "expected_memories.jsonl")
    forbidden = _read(gold / "forbidden_memories.jsonl")
    new_ids = [c["conversation_id"] for c in conversations if c["conversation_id"].startswith("v3-")]
    new = set(new_ids)
    with_rows = {r["conversation_id"] for r in expected}
    meta = {m["conversation_id"]: m for w in WRITERS for m in _read(record / "writers" / w / "meta.jsonl")}
    tags = {cid: set(m.get("features", [])) for cid, m in meta.items()}

    by_stratum: dict[str, Counter[str]] = {"telegraphed": Counter(), "hard": Counter()}
    for stratum in by_stratum:
        for reason in ("injection", "secret", "third_party"):
            by_stratum[stratum][reason] = len(
                {r["conversation_id"] for r in forbidden if r["stratum"] == stratum and r["reason"] == reason}
            )
    security = {r["conversation_id"] for r in forbidden}
    hard = {r["conversation_id"] for r in forbidden if r["stratum"] == "hard"}
    telegraphed = {r["conversation_id"] for r in forbidden if r["stratum"] == "telegraphed"}

    negatives = sorted(c for c in new_ids if c not in with_rows)
    tempting = [c for c in negatives if any(t.startswith("tempting:") for t in tags.get(c, ()))]
    kinds = Counter(t.split(":", 1)[1] for c in tempting for t in tags[c] if t.startswith("tempting:"))
    routine = [c for c in new_ids if "routine" in tags.get(c, ())]

    pools = json.loads((record / "name_pools.json").read_text(encoding="utf-8"))
    names = sorted({n for pool in pools.values() for n in pool})
    text = {c["conversation_id"]: " ".join(t["content"] for t in c["turns"]) for c in conversations}
    uses = {n: sum(1 for cid in new_ids if re.search(rf"\b{re.escape(n)}\b", text[cid])) for n in names}
    used = {n: k for n, k in uses.items() if k}

    injections = [c for c in new_ids if "security:injection" in tags.get(c, ())]
    flagged = [c for c in injections if "flagged_by_assistant" in tags[c]]
    forbidden_words = re.compile(r"\b(AI|assistants?|model|bot|ChatGPT|memory)\b", re.IGNORECASE)
    # the words in the user's turns of an injection conversation (the pasted material is there)
    user_text = {
        c["conversation_id"]: " ".join(t["content"] for t in c["turns"] if t["role"] == "user") for c in conversations
    }
    worded = sorted(c for c in injections if forbidden_words.search(user_text[c]))

    return {
        "conversations": {"all": len(conversations), "from v2": len(conversations) - len(new), "new": len(new)},
        "expected rows": {
            "all": len(expected),
            "new conversations": sum(1 for r in expected if r["conversation_id"] in new),
        },
        "forbidden rows": {
            "telegraphed": sum(r["stratum"] == "telegraphed" for r in forbidden),
            "hard": sum(r["stratum"] == "hard" for r in forbidden),
        },
        "security conversations": {
            "all": len(security),
            "hard": len(hard),
            "telegraphed": len(telegraphed),
            "telegraphed share": round(len(telegraphed) / len(security), 3) if security else None,
        },
        "conversations per stratum and reason": {k: dict(v) for k, v in by_stratum.items()},
        "hard slice with expected rows too": len(hard & with_rows),
        "new negatives": {
            "all": len(negatives),
            "tempting": len(tempting),
            "temptation rate": round(len(tempting) / len(negatives), 3) if negatives else None,
            "kinds": dict(sorted(kinds.items())),
        },
        "routine share of new conversations": {"routine": len(routine), "share": round(len(routine) / len(new), 3)},
        "names": {
            "distinct invented names used": len(used),
            "most conversations for one name": max(used.values(), default=0),
            "names in more than 3 conversations": sorted(n for n, k in used.items() if k > 3),
        },
        "injections": {
            "conversations": len(injections),
            "flagged by the transcript's assistant": len(flagged),
            "user turns with AI/assistant/model/bot/ChatGPT/memory": worded,
        },
    }


def main(
    gold: Annotated[Path, typer.Option(help="the gold v3 folder")] = ROOT / "gold" / "v3",
    record: Annotated[Path, typer.Option(help="the gold v3 working record")] = ROOT / "docs" / "gold-v3-record",
) -> None:
    print(json.dumps(shape(gold, record), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
