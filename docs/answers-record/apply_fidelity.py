"""The final twin of a unit: the twin with every flagged memory replaced by the fidelity reviewer's fix.
python3 apply_fidelity.py UNIT  -> twin/UNIT/final.jsonl"""
import json, pathlib, sys
u = sys.argv[1]
d = pathlib.Path(f"/work/blind/twin/{u}")
out = [json.loads(l) for l in open(d / "twin.jsonl", encoding="utf-8")]
fixes = {}
for l in open(d / "fidelity" / "decisions.jsonl", encoding="utf-8"):
    r = json.loads(l)
    for c in r["changed"]:
        fixes[(r["conversation_id"], c["k"], c["field"])] = c["fixed"]
n = 0
with open(d / "final.jsonl", "w", encoding="utf-8") as fh:
    for row in out:
        for k, m in enumerate(row["memories"], 1):
            for field in ("content", "supersedes"):
                if (row["conversation_id"], k, field) in fixes:
                    m[field] = fixes[(row["conversation_id"], k, field)]; n += 1
        fh.write(json.dumps(row, ensure_ascii=False) + "\n")
print(u, f"{n} memories fixed of {sum(len(r['memories']) for r in out)}")
