#!/usr/bin/env python3
"""Agreement of two blind annotations of a gold set, before adjudication.

    python scripts/gold_agreement.py --conversations F.jsonl [...] --a A.jsonl [...] --b B.jsonl [...]
        [--negatives-a NOTES.md ...] [--out DIR]

Rows of the two annotators are matched one-to-one per conversation with the harness's
default matcher (the same Hungarian assignment the scorer uses). Reported, per field:

- expected rows: matched-row precision/recall/F1 (A as reference; F1 is symmetric);
- categories: Cohen's kappa over matched rows, the category *set* as one nominal label,
  and per category (present/absent) kappa;
- temporal kind: Cohen's kappa over matched rows;
- supersedes: agreement on whether a matched row has one;
- negatives: conversations both call negative, either calls negative;
- forbidden rows: matched F1 and reason agreement;
- conversations in full agreement (same rows, same fields, same forbidden rows).

It also writes the adjudication worklist: per conversation, the rows only one annotator
wrote and the matched pairs whose fields differ.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any


def read_jsonl(paths: Sequence[Path]) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise SystemExit(f"{path}:{number}: not JSON ({exc.msg})") from None
    return rows


def kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's kappa of two raters' nominal labels (None when undefined)."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(1 for a, b in pairs if a == b) / n
    ca = Counter(a for a, _ in pairs)
    cb = Counter(b for _, b in pairs)
    expected = sum(ca[k] * cb.get(k, 0) for k in ca) / (n * n)
    if expected == 1.0:
        return 1.0 if observed == 1.0 else None
    return (observed - expected) / (1 - expected)


def match_rows(a_texts: list[str], b_texts: list[str]) -> list[tuple[int, int, float]]:
    from extraction_eval.scoring import DEFAULT_MATCHER, assign

    return [(p.expected_index, p.predicted_index, p.similarity) for p in assign(DEFAULT_MATCHER, a_texts, b_texts)]


def compare(
    conversation_ids: list[str],
    a_rows: list[dict[str, Any]],
    b_rows: list[dict[str, Any]],
) -> dict[str, Any]:
    by = {"A": defaultdict(list), "B": defaultdict(list)}
    forb = {"A": defaultdict(list), "B": defaultdict(list)}
    for name, rows in (("A", a_rows), ("B", b_rows)):
        for row in rows:
            target = forb if row.get("row_type") == "forbidden" else by
            target[name][row["conversation_id"]].append(row)
    matched = a_only = b_only = 0
    cat_pairs: list[tuple[Hashable, Hashable]] = []
    per_cat: dict[str, list[tuple[Hashable, Hashable]]] = defaultdict(list)
    kind_pairs: list[tuple[Hashable, Hashable]] = []
    sup_agree = sup_total = 0
    f_matched = f_a_only = f_b_only = f_reason_agree = 0
    neg_both = neg_either = 0
    full = 0
    worklist: list[dict[str, Any]] = []
    categories = ("factual", "procedural", "preference", "behavioral", "episodic")
    for cid in conversation_ids:
        ra, rb = by["A"][cid], by["B"][cid]
        pairs = match_rows([r["content"] for r in ra], [r["content"] for r in rb])
        ia = {i for i, _, _ in pairs}
        ib = {j for _, j, _ in pairs}
        matched += len(pairs)
        a_only += len(ra) - len(ia)
        b_only += len(rb) - len(ib)
        diffs = []
        for i, j, sim in pairs:
            x, y = ra[i], rb[j]
            cat_pairs.append((tuple(sorted(x["categories"])), tuple(sorted(y["categories"]))))
            for c in categories:
                per_cat[c].append((c in x["categories"], c in y["categories"]))
            kind_pairs.append((x["temporal_kind"], y["temporal_kind"]))
            sup_total += 1
            sup_agree += (x.get("supersedes") is None) == (y.get("supersedes") is None)
            fields = []
            if sorted(x["categories"]) != sorted(y["categories"]):
                fields.append("categories")
            if x["temporal_kind"] != y["temporal_kind"]:
                fields.append("temporal_kind")
            if (x.get("supersedes") is None) != (y.get("supersedes") is None):
                fields.append("supersedes")
            if fields or x["content"] != y["content"]:
                diffs.append({"a": x, "b": y, "similarity": sim, "fields": sorted(set(fields))})
        fa, fb = forb["A"][cid], forb["B"][cid]
        fpairs = match_rows([r["content"] for r in fa], [r["content"] for r in fb])
        f_matched += len(fpairs)
        f_a_only += len(fa) - len(fpairs)
        f_b_only += len(fb) - len(fpairs)
        f_reason_agree += sum(1 for i, j, _ in fpairs if fa[i]["reason"] == fb[j]["reason"])
        if not ra or not rb:
            neg_either += 1
            neg_both += not ra and not rb
        only_a = [ra[i] for i in range(len(ra)) if i not in ia]
        only_b = [rb[j] for j in range(len(rb)) if j not in ib]
        f_only_a = [fa[i] for i in range(len(fa)) if i not in {i for i, _, _ in fpairs}]
        f_only_b = [fb[j] for j in range(len(fb)) if j not in {j for _, j, _ in fpairs}]
        clean = not only_a and not only_b and not f_only_a and not f_only_b
        clean = clean and not any(d["fields"] for d in diffs)
        clean = clean and all(fa[i]["reason"] == fb[j]["reason"] for i, j, _ in fpairs)
        full += clean
        if not clean:
            worklist.append(
                {
                    "conversation_id": cid,
                    "a_only": only_a,
                    "b_only": only_b,
                    "field_differences": [d for d in diffs if d["fields"]],
                    "forbidden_a_only": f_only_a,
                    "forbidden_b_only": f_only_b,
                }
            )

    def f1(m: int, x: int, y: int) -> float | None:
        return None if (2 * m + x + y) == 0 else 2 * m / (2 * m + x + y)

    summary = {
        "conversations": len(conversation_ids),
        "full_agreement": full,
        "rows_a": matched + a_only,
        "rows_b": matched + b_only,
        "matched_rows": matched,
        "row_f1": f1(matched, a_only, b_only),
        "category_set_kappa": kappa(cat_pairs),
        "category_kappa": {c: kappa(v) for c, v in per_cat.items()},
        "temporal_kind_kappa": kappa(kind_pairs),
        "supersedes_presence_agreement": None if not sup_total else sup_agree / sup_total,
        "negatives_both": neg_both,
        "negatives_either": neg_either,
        "forbidden_a": f_matched + f_a_only,
        "forbidden_b": f_matched + f_b_only,
        "forbidden_matched": f_matched,
        "forbidden_f1": f1(f_matched, f_a_only, f_b_only),
        "forbidden_reason_agreement": None if not f_matched else f_reason_agree / f_matched,
    }
    return {"summary": summary, "worklist": worklist}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=Path, nargs="+", required=True)
    parser.add_argument("--a", type=Path, nargs="+", required=True)
    parser.add_argument("--b", type=Path, nargs="+", required=True)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    ids = [row["conversation_id"] for row in read_jsonl(args.conversations)]
    result = compare(ids, read_jsonl(args.a), read_jsonl(args.b))
    print(json.dumps(result["summary"], indent=2))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "agreement.json").write_text(json.dumps(result["summary"], indent=2) + "\n", encoding="utf-8")
        with open(args.out / "worklist.jsonl", "w", encoding="utf-8") as handle:
            for item in result["worklist"]:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
