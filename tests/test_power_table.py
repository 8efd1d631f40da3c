"""The power table in docs/metrics.md is the script's output on gold v1, and its formulas hold."""

from __future__ import annotations

import math
import subprocess
import sys

from tests.conftest import REPO


def _script(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "power_table.py"), *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return proc.stdout.strip()


def test_docs_table_is_the_scripts_output() -> None:
    docs = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert _script("--gold", "gold/v1") in docs


def test_formulas_by_hand() -> None:
    out = _script("--gold", "gold/v1", "--flip-rates", "0.05").splitlines()
    rows = {line.split("|")[1].strip().strip("`"): [c.strip() for c in line.split("|")[2:-1]] for line in out[2:16]}
    # recall/factual: 30 expected factual rows in gold v1. resolution 1/30; MDE = 2.8016·sqrt(0.05/30).
    z = 1.959963984540054 + 0.8416212335729143
    assert rows["recall/factual"] == ["30", "0.0333", f"{z * math.sqrt(0.05 / 30):.3f}"]
    assert rows["recall/factual"][2] == "0.114"
    # macro/recall: categories 30, 25, 26, 27, 32: resolution 1/(5·32) = 0.00625.
    assert rows["macro/recall"][1] == "0.0063"
    # rows per category at f = 0.05: ceil(0.05·(z/0.03)²) = ceil(436.03) = 437.
    assert out[-1] == f"| 0.05 | {math.ceil(0.05 * (z / 0.03) ** 2)} |" == "| 0.05 | 437 |"
