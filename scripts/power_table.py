#!/usr/bin/env python3
"""The power table of docs/metrics.md, computed from a gold version's own counts.

    python scripts/power_table.py [--gold gold/v1] [--flip-rates 0.02,0.05,0.1,0.2]

For each gated metric it prints:

- n: the metric's denominator on an oracle run of the gold set (expected memories carrying
  the category for precision/recall, matched pairs for the accuracies; for macro keys the
  five categories' denominators);
- resolution: the smallest change the metric can express, what one memory moves it
  (1/n; for a macro key one memory of its largest category, 1/(5·max n_k));
- MDE at flip rate f: the smallest true change a paired comparison of two runs on the
  same conversations detects at 80% power with a two-sided 5% test, when a share f of
  the rows change their outcome between the runs (discordant rows, in either direction):
  MDE = (z_0.975 + z_0.80)·sqrt(f/n) (the normal approximation of McNemar's test, rows
  independent; a macro key averages five independent categories: sqrt(Σ_k f/n_k)/5);
- rows needed: the n per category at which MDE = 0.03, n = f·((z_0.975 + z_0.80)/0.03)²:
  the size at which the 3-point rule is a statistical statement rather than a row count.

Rows are treated as independent; rows of one conversation move together, so with
several rows per conversation the true MDE is larger (a design effect), never smaller.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import entry_app

CATEGORIES = ("factual", "procedural", "preference", "behavioral", "episodic")
Z = 1.959963984540054 + 0.8416212335729143  # two-sided 5% test, 80% power
THRESHOLD = 0.03


def category_counts(gold: Path) -> tuple[Counter[str], int]:
    rows = [json.loads(line) for line in (gold / "expected_memories.jsonl").read_text(encoding="utf-8").splitlines()]
    counts: Counter[str] = Counter()
    for row in rows:
        counts.update(row["categories"])
    return counts, len(rows)


def table(gold: Path, flip_rates: list[float]) -> list[str]:
    counts, total = category_counts(gold)
    header = ["metric", "n", "resolution", *(f"MDE f={f:g}" for f in flip_rates)]
    lines = ["| " + " | ".join(header) + " |", "| --- | " + " | ".join("---:" for _ in header[1:]) + " |"]

    def row(name: str, n: str, resolution: float, mdes: list[float]) -> None:
        cells = [f"`{name}`", n, f"{resolution:.4f}", *(f"{m:.3f}" for m in mdes)]
        lines.append("| " + " | ".join(cells) + " |")

    for kind in ("precision", "recall"):
        for c in CATEGORIES:
            n = counts[c]
            row(f"{kind}/{c}", str(n), 1 / n, [Z * math.sqrt(f / n) for f in flip_rates])
    for kind in ("precision", "recall"):
        ns = [counts[c] for c in CATEGORIES]
        mdes = [Z * math.sqrt(sum(f / n for n in ns)) / len(ns) for f in flip_rates]
        row(f"macro/{kind}", "+".join(map(str, ns)), 1 / (len(ns) * max(ns)), mdes)
    for key in ("category_accuracy", "temporal_accuracy"):
        row(key, str(total), 1 / total, [Z * math.sqrt(f / total) for f in flip_rates])
    lines += ["", "| flip rate f | rows per category for MDE = 0.03 |", "| ---: | ---: |"]
    for f in flip_rates:
        lines.append(f"| {f:g} | {math.ceil(f * (Z / THRESHOLD) ** 2)} |")
    return lines


app = entry_app()


@app.command(help=__doc__.splitlines()[0])
def main(
    gold: Annotated[Path, typer.Option(help="gold folder whose rows per category are counted")] = Path("gold/v1"),
    flip_rates: Annotated[str, typer.Option(help="comma-separated flip rates f")] = "0.02,0.05,0.1,0.2",
) -> None:
    rates = [float(x) for x in flip_rates.split(",")]
    print("\n".join(table(gold, rates)))


if __name__ == "__main__":
    app()
