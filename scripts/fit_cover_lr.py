"""Fit fact-cover-lr's weights on the tuning half of realistic answer sets (docs/matcher.md).

    python scripts/fit_cover_lr.py --set blind-a [--gold gold/v1 --gold gold/v2] [--l2 1.0] [--version 2]

Every (gold row, answer memory) cell of every tuning-half conversation is one example: label 1
when the reviewers paired them (matches.jsonl), else 0. The model is an L2-regularised logistic
regression over ``scoring/_cover_lr.FEATURES`` fitted by Newton's method (deterministic).
Conversations of the held-out half are never read. Prints the weights as the Python tuple to
paste into ``WEIGHTS``, and the fit's agreement with the decisions on the tuning cells.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from extraction_eval._entry import run_entry
from extraction_eval.scoring._cover_lr import _FC, FEATURES, features, refused


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def cells(gold: Path, name: str, version: str = "1") -> tuple[list[tuple[float, ...]], list[int]]:
    """The tuning half's examples of one gold folder."""
    tuning = set(json.loads((gold / "answers" / "halves.json").read_text())["tuning"])
    expected: dict[str, list[dict]] = {}
    for row in _rows(gold / "expected_memories.jsonl"):
        expected.setdefault(row["conversation_id"], []).append(row)
    answers = {r["conversation_id"]: r["memories"] for r in _rows(gold / "answers" / name / "answers.jsonl")}
    matches = {r["conversation_id"]: r for r in _rows(gold / "answers" / name / "matches.jsonl")}
    xs, ys = [], []
    for cid in sorted(tuning & set(matches)):
        paired = {(mid, ak) for mid, ak in matches[cid]["pairs"]}
        for g in expected.get(cid, []):
            for k, memory in enumerate(answers[cid], 1):
                _, rule = _FC.explain(g["content"], memory["content"])
                if refused(g["content"], memory["content"], rule, version):
                    continue  # refused outright, whatever the weights: not the model's to learn
                xs.append(features(g["content"], memory["content"]))
                ys.append(int((g["memory_id"], f"A{k}") in paired))
    return xs, ys


def calibration_cells(path: Path, version: str = "1") -> tuple[list[tuple[float, ...]], list[int]]:
    """The calibration pairs of one half (never the held-out half's file)."""
    if path.name != "tuning.jsonl":
        raise SystemExit(f"{path}: only the calibration set's tuning half may be fitted on")
    xs, ys = [], []
    for row in _rows(path):
        _, rule = _FC.explain(row["gold"], row["candidate"])
        if refused(row["gold"], row["candidate"], rule, version):
            continue
        xs.append(features(row["gold"], row["candidate"]))
        ys.append(int(row["same_fact"]))
    return xs, ys


def fit(x: np.ndarray, y: np.ndarray, l2: float, steps: int = 50) -> np.ndarray:
    """Newton's method on the L2-penalised log-likelihood (the bias is not penalised)."""
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -60, 60)))
        grad = x.T @ (p - y) + penalty * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return w


def main(
    name: Annotated[str, typer.Option("--set", help="the answer set (with matches.jsonl)")],
    gold: Annotated[list[Path] | None, typer.Option("--gold", help="gold folders (repeat; default v1 and v2)")] = None,
    l2: Annotated[float, typer.Option("--l2", help="the L2 penalty")] = 1.0,
    calibration: Annotated[
        Path | None,
        typer.Option("--calibration", help="also fit on a calibration half's labeled pairs (its tuning.jsonl)"),
    ] = None,
    thresholds: Annotated[
        list[float] | None, typer.Option("--threshold", help="thresholds to compare on the tuning half (repeat)")
    ] = None,
    version: Annotated[str, typer.Option("--version", help="fact-cover-lr's version: its outright refusals")] = "1",
) -> None:
    thresholds = thresholds or [0.25, 0.3, 0.35, 0.4, 0.5]
    xs: list[tuple[float, ...]] = []
    ys: list[int] = []
    for folder in gold or [Path("gold/v1"), Path("gold/v2")]:
        fx, fy = cells(folder, name, version)
        xs += fx
        ys += fy
        print(f"{folder}: {len(fy)} tuning cells, {sum(fy)} paired")
    if calibration is not None:
        # the calibration set's tuning half: adversarial near-misses (another number, place,
        # polarity, order) that realistic answers rarely contain, so the model learns them too
        fx, fy = calibration_cells(calibration, version)
        xs += fx
        ys += fy
        print(f"{calibration}: {len(fy)} pairs, {sum(fy)} the same fact")
    x, y = np.array(xs), np.array(ys, dtype=float)
    w = fit(x, y, l2)
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    said = p >= 0.5
    tp, fp, fn = int(np.sum(said & (y == 1))), int(np.sum(said & (y == 0))), int(np.sum(~said & (y == 1)))
    print(f"tuning cells: {len(y)}; the fit accepts {tp} of {int(y.sum())} paired cells and {fp} unpaired ones")
    print(f"(missed {fn}); precision {tp / max(1, tp + fp):.3f}, recall {tp / max(1, tp + fn):.3f}")
    fc = x[:, FEATURES.index("fc_forward")] >= 0.6
    fc_tp, fc_fp = int(np.sum(fc & (y == 1))), int(np.sum(fc & (y == 0)))
    print(f"fact-cover@2 on the same cells accepts {fc_tp} paired and {fc_fp} unpaired ones")
    for feature, weight in zip(FEATURES, w, strict=True):
        print(f"  {feature:24s} {weight:+.4f}")
    print("WEIGHTS = (" + ", ".join(f"{v:.6f}" for v in w) + ",)")
    weights = tuple(round(float(v), 6) for v in w)
    print("threshold: the largest headline gap to the reviewers on the tuning half (points), per threshold")
    for threshold in thresholds:
        gaps = [
            tuning_gap(folder, name, weights, threshold, version)
            for folder in gold or [Path("gold/v1"), Path("gold/v2")]
        ]
        worst = max(g for gap in gaps for g in gap.values())
        refusal, acceptance = calibration_tuning(weights, threshold, version)
        print(
            f"  {threshold:.2f}: calibration tuning half acceptance {acceptance:.3f}, refusal {refusal:.3f}; "
            f"worst {100 * worst:.1f}; "
            + "; ".join(f"{k} {100 * v:.1f}" for gap in gaps for k, v in sorted(gap.items(), key=lambda kv: -kv[1])[:3])
        )


CALIBRATION = Path(__file__).resolve().parents[1] / "gold" / "matcher-calibration" / "tuning.jsonl"
CATEGORIES = ("factual", "procedural", "preference", "behavioral", "episodic")
HEADLINE = ("micro/precision", "micro/recall", "macro/precision", "macro/recall", *(f"recall/{c}" for c in CATEGORIES))


def calibration_tuning(weights: tuple[float, ...], threshold: float, version: str) -> tuple[float, float]:
    """(refusal, acceptance) on the calibration set's tuning half (never its held-out half)."""
    from extraction_eval.scoring._cover_lr import CoverLogisticMatcher

    m = CoverLogisticMatcher(version=version, weights=weights, threshold=threshold)
    said = [(row["same_fact"], m.similarity(row["gold"], row["candidate"]) >= threshold) for row in _rows(CALIBRATION)]
    same = [accepted for fact, accepted in said if fact]
    different = [not accepted for fact, accepted in said if not fact]
    return sum(different) / len(different), sum(same) / len(same)


def tuning_gap(
    gold_dir: Path, name: str, weights: tuple[float, ...], threshold: float, version: str = "1"
) -> dict[str, float]:
    """|matcher - reviewers| per headline metric on the tuning half (what `matcher validate
    --half tuning` prints), for fact-cover-lr with these weights and threshold."""
    from extraction_eval.evaluation import build_cases
    from extraction_eval.evaluation._answers import answer_from_cassette
    from extraction_eval.evaluation._reviewing import reviewed_matcher
    from extraction_eval.evaluation._validity import compare_matchers
    from extraction_eval.gold import load_gold, read_cassettes
    from extraction_eval.gold._halves import Half, load_halves
    from extraction_eval.scoring._cover_lr import CoverLogisticMatcher

    gold = load_gold(gold_dir, answers=name)
    assert gold.manifest is not None
    decided = {r["conversation_id"] for r in _rows(gold_dir / "answers" / name / "matches.jsonl")}
    wanted = set(load_halves(gold).ids(Half.TUNING)) & decided
    selected = [c for c in gold.conversations if c.conversation_id in wanted]
    by_id = {c.conversation_id: answer_from_cassette(c) for c in read_cassettes(gold, gold.manifest)}
    answered = {c.conversation_id: by_id[c.conversation_id] for c in selected}
    cases = build_cases(gold, selected, answered)
    report = compare_matchers(
        cases,
        CoverLogisticMatcher(version=version, weights=weights, threshold=threshold),
        reviewed_matcher(gold, selected, answered),
    )
    return {
        f"{gold.version}:{row.metric}": abs(row.difference)
        for row in report.rows
        if row.metric in HEADLINE and row.difference is not None
    }


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
