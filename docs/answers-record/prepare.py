"""Render gold v1 and v2 conversations for blind answer writers: no gold rows, no guide."""
import json, pathlib, sys
sys.path.insert(0, "/work/main/src")
from extraction_eval.contract import render_conversation, system_prompt, batch_extraction_schema
from types import SimpleNamespace as NS

root = pathlib.Path("/work/blind")
convs = []
for v in ["v1", "v2"]:
    for line in open(f"/work/main/gold/{v}/conversations.jsonl", encoding="utf-8"):
        row = json.loads(line)
        c = NS(conversation_id=row["conversation_id"], session_date=row["session_date"],
               turns=[NS(**t) for t in row["turns"]])
        convs.append((row["conversation_id"], render_conversation(c)))
# Eight shares: gold v1 in two (so its review can start first), gold v2 in six.
# (The first attempt, four shares w1-w4 of ~440 KB, produced nothing: see README.md.)
assign = {}
v1 = [c for c in convs if not c[0].startswith("v2")]
v2 = [c for c in convs if c[0].startswith("v2")]
def split(items, names):
    size = -(-len(items) // len(names))
    for k, n in enumerate(names):
        assign[n] = items[k * size:(k + 1) * size]
split(v1, ["v1a", "v1b"])
split(v2, ["v2a", "v2b", "v2c", "v2d", "v2e", "v2f"])
common = root / "common"
common.mkdir(parents=True, exist_ok=True)
(common / "system_prompt.md").write_text(system_prompt(), encoding="utf-8")
(common / "schema.json").write_text(json.dumps(batch_extraction_schema(), indent=2), encoding="utf-8")
for w, items in assign.items():
    d = root / "writers" / w / "input"
    d.mkdir(parents=True, exist_ok=True)
    for b in range(0, len(items), 15):
        batch = items[b:b + 15]
        with open(d / f"batch_{b // 15 + 1:02d}.txt", "w", encoding="utf-8") as f:
            for cid, text in batch:
                f.write(f"##### conversation_id: {cid}\n{text}\n\n")
    (root / "writers" / w / "ids.txt").write_text("\n".join(c for c, _ in items) + "\n")
    print(w, len(items), items[0][0], items[-1][0], sum(len(t) for _, t in items))
