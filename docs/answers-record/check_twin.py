"""Check a twin writer's output: python3 check_twin.py WRITER"""
import json, pathlib, re, sys, unicodedata
who = sys.argv[1]
d = pathlib.Path(f"/work/blind/twin/{who}")
def norm(t):
    t = unicodedata.normalize("NFKC", t).casefold()
    return " ".join("".join(" " if unicodedata.category(c).startswith(("P", "S")) else c for c in t).split())
src = [json.loads(l) for l in open(d / "input.jsonl", encoding="utf-8")]
out = [json.loads(l) for l in open(d / "twin.jsonl", encoding="utf-8")] if (d / "twin.jsonl").exists() else []
errors, same = [], 0
for i, (s, t) in enumerate(zip(src, out), 1):
    if s["conversation_id"] != t.get("conversation_id"):
        errors.append(f"line {i}: conversation {t.get('conversation_id')!r}, expected {s['conversation_id']!r}"); continue
    if len(s["memories"]) != len(t.get("memories", [])):
        errors.append(f"line {i} ({s['conversation_id']}): {len(t.get('memories', []))} memories, expected {len(s['memories'])}"); continue
    for k, (a, b) in enumerate(zip(s["memories"], t["memories"]), 1):
        w = f"line {i} ({s['conversation_id']}) memory {k}"
        if set(b) != {"content", "categories", "temporal_kind", "supersedes"}:
            errors.append(f"{w}: keys {sorted(b)}"); continue
        if b["categories"] != a["categories"] or b["temporal_kind"] != a["temporal_kind"]:
            errors.append(f"{w}: categories/temporal_kind must stay {a['categories']} / {a['temporal_kind']}")
        if (a["supersedes"] is None) != (b["supersedes"] is None):
            errors.append(f"{w}: supersedes must stay {'null' if a['supersedes'] is None else 'a text'}")
        if norm(a["content"]) == norm(b["content"]):
            same += 1; errors.append(f"{w}: content not reworded")
        nums_a, nums_b = sorted(re.findall(r"\d+", a["content"])), sorted(re.findall(r"\d+", b["content"]))
        if nums_a != nums_b:
            errors.append(f"{w}: the numbers changed {nums_a} -> {nums_b}")
print(f"{len(out)} of {len(src)} conversations written")
for e in errors[:60]: print("ERROR", e)
sys.exit(1 if errors or len(out) != len(src) else 0)
