"""The reviewers' numbers of a realistic answer set, counted from their decisions alone, and
whether a run reproduces them (issue 23, point 7).

    python scripts/reviewed_counts.py --gold gold/v1 --set blind-a [--metrics output/realistic/metrics.json]

Reads gold/<v>/expected_memories.jsonl, the set's answers.jsonl and matches.jsonl and computes
the contract's metrics (docs/metrics.md) by plain counting: every decided pair is a matched
pair, nothing else is. It imports nothing from extraction_eval's scoring, so it is an
independent check of `--matcher reviewed` and the scorer behind it. With --metrics, compares a
run's metrics.json with these numbers and exits 1 naming every metric that differs by more
than 1e-9 (0 when all agree); without it, prints the numbers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import run_entry

CATEGORIES = ("factual", "procedural", "preference", "behavioral", "episodic")
TOLERANCE = 1e-9


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _ratio(num: int, den: int, *, empty: float | None) -> float | None:
    return num / den if den else empty


def reviewed_metrics(expected: list[dict], answers: list[dict], matches: list[dict]) -> dict[str, float]:
    """The contract's metrics from the reviewers' decisions (pure)."""
    gold = {r["memory_id"]: r for r in expected}
    by_conv: dict[str, list[dict]] = {}
    for r in expected:
        by_conv.setdefault(r["conversation_id"], []).append(r)
    memories = {a["conversation_id"]: a["memories"] for a in answers}
    decided = {m["conversation_id"]: m for m in matches}
    pairs: list[tuple[dict, dict]] = []
    cases = hits = leaks = 0
    for cid, answer in memories.items():
        d = decided.get(cid, {"pairs": [], "stale": []})
        paired_answers = set()
        for mid, ak in d["pairs"]:
            pairs.append((gold[mid], answer[int(ak[1:]) - 1]))
            paired_answers.add(ak)
        for row in by_conv.get(cid, []):
            if row.get("supersedes"):
                cases += 1
                partner = next((ak for mid, ak in d["pairs"] if mid == row["memory_id"]), None)
                stale = d.get("stale", [])
                if partner is not None and [row["memory_id"], partner, "supersedes"] in stale:
                    hits += 1
                if any(m == row["memory_id"] and ak not in paired_answers and f == "content" for m, ak, f in stale):
                    leaks += 1
    scored = set(memories)
    exp_rows = [r for r in expected if r["conversation_id"] in scored]
    preds = [m for cid in scored for m in memories[cid]]
    out: dict[str, float | None] = {}
    for c in CATEGORIES:
        both = sum(c in g["categories"] and c in p["categories"] for g, p in pairs)
        n_pred = sum(c in p["categories"] for p in preds)
        n_exp = sum(c in g["categories"] for g in exp_rows)
        empty = 1.0 if n_pred == 0 and n_exp == 0 else 0.0
        out[f"precision/{c}"] = _ratio(both, n_pred, empty=empty)
        out[f"recall/{c}"] = _ratio(both, n_exp, empty=empty)
    out["macro/precision"] = sum(out[f"precision/{c}"] or 0.0 for c in CATEGORIES) / len(CATEGORIES)
    out["macro/recall"] = sum(out[f"recall/{c}"] or 0.0 for c in CATEGORIES) / len(CATEGORIES)
    empty = 1.0 if not preds and not exp_rows else 0.0
    out["micro/precision"] = _ratio(len(pairs), len(preds), empty=empty)
    out["micro/recall"] = _ratio(len(pairs), len(exp_rows), empty=empty)
    strict = sum(
        set(g["categories"]) == set(p["categories"]) and g["temporal_kind"] == p["temporal_kind"] for g, p in pairs
    )
    out["strict/precision"] = _ratio(strict, len(preds), empty=empty)
    out["strict/recall"] = _ratio(strict, len(exp_rows), empty=empty)
    out["category_accuracy"] = _ratio(
        sum(set(g["categories"]) == set(p["categories"]) for g, p in pairs), len(pairs), empty=None
    )
    out["temporal_accuracy"] = _ratio(
        sum(g["temporal_kind"] == p["temporal_kind"] for g, p in pairs), len(pairs), empty=None
    )
    multi = [g for g in exp_rows if len(g["categories"]) >= 2]
    exact = sum(len(g["categories"]) >= 2 and set(g["categories"]) == set(p["categories"]) for g, p in pairs)
    out["multilabel/exact_match"] = _ratio(exact, len(multi), empty=None)
    negatives = [cid for cid in scored if not by_conv.get(cid)]
    out["negatives/false_positive_rate"] = _ratio(sum(bool(memories[c]) for c in negatives), len(negatives), empty=None)
    out["supersession/recall"] = _ratio(hits, cases, empty=None)
    out["supersession/stale_leak_rate"] = _ratio(leaks, cases, empty=None)
    out["counts/expected"] = float(len(exp_rows))
    out["counts/predicted"] = float(len(preds))
    out["counts/matched"] = float(len(pairs))
    return {k: v for k, v in out.items() if v is not None}


def differences(reviewed: dict[str, float], run: dict[str, float]) -> list[str]:
    """Each metric the run does not reproduce (pure)."""
    problems = []
    for key, value in sorted(reviewed.items()):
        got = run.get(key)
        if got is None:
            problems.append(f"{key}: reviewers {value:.6f}, the run has none")
        elif abs(float(got) - value) > TOLERANCE:
            problems.append(f"{key}: reviewers {value:.6f}, run {float(got):.6f}")
    return problems


def main(
    gold: Annotated[Path, typer.Option("--gold", help="the gold folder")],
    name: Annotated[str, typer.Option("--set", help="the answer set under <gold>/answers/")],
    metrics: Annotated[Path | None, typer.Option("--metrics", help="a run's metrics.json to check")] = None,
) -> None:
    folder = gold / "answers" / name
    numbers = reviewed_metrics(
        _rows(gold / "expected_memories.jsonl"), _rows(folder / "answers.jsonl"), _rows(folder / "matches.jsonl")
    )
    if metrics is None:
        for key, value in numbers.items():
            typer.echo(f"{key:32s} {value:.4f}")
        return
    run = json.loads(metrics.read_text(encoding="utf-8"))
    run = run.get("metrics", run)
    problems = differences(numbers, run)
    if problems:
        typer.echo(f"{metrics} does not reproduce the reviewers' numbers of {folder}:")
        for line in problems:
            typer.echo(f"  {line}")
        raise typer.Exit(1)
    typer.echo(f"{metrics} reproduces the reviewers' numbers of {folder}: {len(numbers)} metrics agree.")


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
