"""Fidelity input for a twin unit: python3 build_fidelity.py UNIT (original vs twin, memory by memory)."""
import json, pathlib, sys
u = sys.argv[1]
d = pathlib.Path(f"/work/blind/twin/{u}")
src = [json.loads(l) for l in open(d / "input.jsonl", encoding="utf-8")]
out = [json.loads(l) for l in open(d / "twin.jsonl", encoding="utf-8")]
(d / "fidelity").mkdir(exist_ok=True)
with open(d / "fidelity" / "input.jsonl", "w", encoding="utf-8") as fh:
    for s, t in zip(src, out, strict=True):
        assert s["conversation_id"] == t["conversation_id"]
        pairs = [{"k": k, "original": {"content": a["content"], "supersedes": a["supersedes"]},
                  "twin": {"content": b["content"], "supersedes": b["supersedes"]}}
                 for k, (a, b) in enumerate(zip(s["memories"], t["memories"], strict=True), 1)]
        if pairs:
            fh.write(json.dumps({"conversation_id": s["conversation_id"], "pairs": pairs}, ensure_ascii=False) + "\n")
print(u, "fidelity input written")
