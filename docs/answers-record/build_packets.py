"""Review packets: per conversation, the gold rows (with supersedes), the forbidden rows and one
answer set's memories, numbered. No matcher output of any kind.

usage: build_packets.py SET_NAME ANSWERS_JSONL... -- writes /work/blind/review/<SET>/packets/batch_NN.txt
"""
import json, pathlib, sys

set_name, answer_files = sys.argv[1], sys.argv[2:]
answers = {}
for f in answer_files:
    for line in open(f, encoding="utf-8"):
        row = json.loads(line)
        answers[row["conversation_id"]] = row["memories"]
gold, forbidden, order = {}, {}, []
for v in ["v1", "v2"]:
    for line in open(f"/work/main/gold/{v}/conversations.jsonl", encoding="utf-8"):
        order.append(json.loads(line)["conversation_id"])
    for line in open(f"/work/main/gold/{v}/expected_memories.jsonl", encoding="utf-8"):
        r = json.loads(line); gold.setdefault(r["conversation_id"], []).append(r)
    p = pathlib.Path(f"/work/main/gold/{v}/forbidden_memories.jsonl")
    if p.exists():
        for line in open(p, encoding="utf-8"):
            r = json.loads(line); forbidden.setdefault(r["conversation_id"], []).append(r)
out = pathlib.Path(f"/work/blind/review/{set_name}/packets"); out.mkdir(parents=True, exist_ok=True)
ids = [c for c in order if c in answers]
for b in range(0, len(ids), 40):
    with open(out / f"batch_{b // 40 + 1:02d}.txt", "w", encoding="utf-8") as fh:
        for cid in ids[b:b + 40]:
            fh.write(f"##### {cid}\nGOLD ROWS:\n")
            for r in gold.get(cid, []):
                sup = f"   [replaces stale fact: {r['supersedes']}]" if r["supersedes"] else ""
                fh.write(f"  {r['memory_id']}: {r['content']}{sup}\n")
            if not gold.get(cid):
                fh.write("  (none: nothing in this conversation is worth remembering)\n")
            if forbidden.get(cid):
                fh.write("FORBIDDEN ROWS (must never be extracted):\n")
                for k, r in enumerate(forbidden[cid], 1):
                    fh.write(f"  F{k} ({r['reason']}): {r['content']}\n")
            fh.write("ANSWER MEMORIES:\n")
            for k, m in enumerate(answers[cid], 1):
                sup = f"   [answer says it replaces: {m['supersedes']}]" if m["supersedes"] else ""
                fh.write(f"  A{k}: {m['content']}{sup}\n")
            if not answers[cid]:
                fh.write("  (none)\n")
            fh.write("\n")
(out.parent / "ids.txt").write_text("\n".join(ids) + "\n")
print(set_name, len(ids), "conversations,", len(list(out.glob("batch_*.txt"))), "batches")
