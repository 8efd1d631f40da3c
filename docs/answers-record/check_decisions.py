"""Check a reviewer's decisions.jsonl against the packets: python3 check_decisions.py SET REVIEWER"""
import json, pathlib, re, sys
set_name, who = sys.argv[1], sys.argv[2]
base = pathlib.Path(f"/work/blind/review/{set_name}")
want = {}  # cid -> (gold ids, n forbidden, n answers, stale gold ids)
for f in sorted((base / "packets").glob("batch_*.txt")):
    for block in f.read_text(encoding="utf-8").split("##### ")[1:]:
        cid = block.split("\n", 1)[0].strip()
        gold = re.findall(r"^  (\S+-m\d+): ", block, re.M)
        stale = [g for g in re.findall(r"^  (\S+-m\d+): .*\[replaces stale fact:", block, re.M)]
        nf = len(re.findall(r"^  F\d+ \(", block, re.M))
        na = len(re.findall(r"^  A\d+: ", block, re.M))
        want[cid] = (set(gold), nf, na, set(stale))
mine = base / who / "decisions.jsonl"
errors, seen, pairs = [], set(), 0
for no, line in enumerate(open(mine, encoding="utf-8"), 1):
    try:
        d = json.loads(line)
    except ValueError as e:
        errors.append(f"line {no}: not JSON ({e})"); continue
    cid = d.get("conversation_id")
    if cid not in want:
        errors.append(f"line {no}: unknown conversation {cid!r}"); continue
    if cid in seen:
        errors.append(f"line {no}: {cid} repeated")
    seen.add(cid)
    # a reviewer's one-line reason is `note`; an adjudicator's brief calls it `why`: either is accepted
    if set(d) - {"conversation_id", "pairs", "forbidden", "stale", "note", "why"} or not {"pairs", "forbidden", "stale"} <= set(d):
        errors.append(f"line {no}: keys must be conversation_id, pairs, forbidden, stale, and note (or why)")
        continue
    gold, nf, na, stale = want[cid]
    ok_a = {f"A{k}" for k in range(1, na + 1)}
    ok_f = {f"F{k}" for k in range(1, nf + 1)}
    gs, ans = set(), set()
    for p in d["pairs"]:
        if not (isinstance(p, list) and len(p) == 2 and p[0] in gold and p[1] in ok_a):
            errors.append(f"line {no} ({cid}): bad pair {p!r} (gold ids {sorted(gold)}, answers {sorted(ok_a)})"); continue
        if p[0] in gs or p[1] in ans:
            errors.append(f"line {no} ({cid}): pair {p!r} breaks one-to-one")
        gs.add(p[0]); ans.add(p[1]); pairs += 1
    for p in d["forbidden"]:
        if not (isinstance(p, list) and len(p) == 2 and p[0] in ok_f and p[1] in ok_a):
            errors.append(f"line {no} ({cid}): bad forbidden {p!r} (forbidden {sorted(ok_f)}, answers {sorted(ok_a)})")
    for p in d["stale"]:
        if not (isinstance(p, list) and len(p) == 3 and p[0] in stale and p[1] in ok_a and p[2] in ("content", "supersedes")):
            errors.append(f"line {no} ({cid}): bad stale {p!r} (rows with a stale fact {sorted(stale)})")
missing = [c for c in want if c not in seen]
print(f"{len(seen)} of {len(want)} conversations decided, {pairs} pairs")
if missing: print(f"not yet decided: {len(missing)} (first {missing[:5]})")
for e in errors[:50]: print("ERROR", e)
sys.exit(1 if errors or missing else 0)
