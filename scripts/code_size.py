"""Size of the code: lines of source and tests, the largest module, the longest functions.

    python scripts/code_size.py            # from the repository root

Lines are physical lines (what ``wc -l`` counts); a function's length runs from its
``def`` (decorators excluded) to its last line, nested functions included.
"""

from __future__ import annotations

import ast
from pathlib import Path

from extraction_eval._entry import run_entry

ROOT = Path(__file__).resolve().parents[1]


def lines(folder: Path) -> int:
    return sum(len(p.read_bytes().splitlines()) for p in folder.rglob("*.py"))


def functions(folder: Path) -> list[tuple[int, str]]:
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                found.append((length, f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"))
    return sorted(found, reverse=True)


def main() -> None:
    src, tests = ROOT / "src", ROOT / "tests"
    print(f"src   {lines(src):>6} lines")
    print(f"tests {lines(tests):>6} lines")
    modules = sorted(((len(p.read_bytes().splitlines()), p) for p in src.rglob("*.py")), reverse=True)
    for size, path in modules[:3]:
        print(f"module   {size:>4}  {path.relative_to(ROOT)}")
    for length, where in functions(src)[:3]:
        print(f"function {length:>4}  {where}")


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
