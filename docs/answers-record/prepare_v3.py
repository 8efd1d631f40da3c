"""Render gold v3's new conversations for blind answer writers: no gold rows, no guide.
One share per v3 writer file (60 conversations each): answer writers v3a, v3b, v3c."""
import json, pathlib, sys
sys.path.insert(0, "/work/main/src")
from extraction_eval.contract import render_conversation
from types import SimpleNamespace as NS

root = pathlib.Path("/work/blind")
for share, source in (("v3a", "g"), ("v3b", "h"), ("v3c", "i")):
    items = []
    for line in open(f"/work/v3work/writers/{source}/conversations.jsonl", encoding="utf-8"):
        row = json.loads(line)
        c = NS(conversation_id=row["conversation_id"], session_date=row["session_date"], turns=[NS(**t) for t in row["turns"]])
        items.append((row["conversation_id"], render_conversation(c)))
    d = root / "writers" / share / "input"
    d.mkdir(parents=True, exist_ok=True)
    for b in range(0, len(items), 15):
        with open(d / f"batch_{b // 15 + 1:02d}.txt", "w", encoding="utf-8") as f:
            for cid, text in items[b:b + 15]:
                f.write(f"##### conversation_id: {cid}\n{text}\n\n")
    (root / "writers" / share / "ids.txt").write_text("\n".join(c for c, _ in items) + "\n")
    print(share, len(items), items[0][0], items[-1][0], sum(len(t) for _, t in items))
