"""Check a writer's answers.jsonl: one line per conversation id of ids.txt, each a valid answer."""
import json, sys, pathlib
CATS = {"factual", "procedural", "preference", "behavioral", "episodic"}
KINDS = {"durable", "current", "past", "future"}
wdir = pathlib.Path(sys.argv[1])
ids = [l.strip() for l in open(wdir / "ids.txt") if l.strip()]
seen, errors, n_mem = {}, [], 0
path = wdir / "answers.jsonl"
for no, line in enumerate(open(path, encoding="utf-8"), 1):
    try:
        row = json.loads(line)
    except json.JSONDecodeError as e:
        errors.append(f"line {no}: not JSON: {e}"); continue
    if set(row) != {"conversation_id", "memories"}:
        errors.append(f"line {no}: keys must be conversation_id, memories: {sorted(row)}")
    cid = row.get("conversation_id")
    if cid in seen:
        errors.append(f"line {no}: {cid} repeated (first on line {seen[cid]})")
    seen[cid] = no
    for k, m in enumerate(row.get("memories", [])):
        n_mem += 1
        where = f"line {no} ({cid}) memory {k}"
        if set(m) != {"content", "categories", "temporal_kind", "supersedes"}:
            errors.append(f"{where}: keys {sorted(m)}")
            continue
        if not isinstance(m["content"], str) or not m["content"].strip():
            errors.append(f"{where}: empty content")
        cats = m["categories"]
        if not (isinstance(cats, list) and 1 <= len(cats) <= 3 and len(set(cats)) == len(cats) and set(cats) <= CATS):
            errors.append(f"{where}: categories {cats!r}")
        if m["temporal_kind"] not in KINDS:
            errors.append(f"{where}: temporal_kind {m['temporal_kind']!r}")
        if m["supersedes"] is not None and not isinstance(m["supersedes"], str):
            errors.append(f"{where}: supersedes must be a string or null")
missing = [c for c in ids if c not in seen]
extra = [c for c in seen if c not in set(ids)]
print(f"{len(seen)} of {len(ids)} conversations answered, {n_mem} memories")
if missing: print(f"not yet answered: {len(missing)} (first: {missing[:5]})")
if extra: errors.append(f"ids not in ids.txt: {extra[:10]}")
for e in errors: print("ERROR", e)
sys.exit(1 if errors else 0)
