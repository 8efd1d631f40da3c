"""scripts/mutation.py with no module runs exactly the modules of docs/testing.md's "Last result"
table, so the command the page gives reproduces the table, row for row."""

from __future__ import annotations

import ast
import re

from .conftest import REPO


def _default_modules() -> list[str]:
    tree = ast.parse((REPO / "scripts" / "mutation.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DEFAULT_MODULES" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError("scripts/mutation.py has no DEFAULT_MODULES")


def _table_modules() -> list[str]:
    text = (REPO / "docs" / "testing.md").read_text(encoding="utf-8")
    table = text.split("## Last result", 1)[1].split("\n\n")
    rows = next(block for block in table if block.startswith("| module |")).splitlines()[2:]
    return [re.match(r"\| `([^`]+)`", row).group(1) for row in rows]  # type: ignore[union-attr]


def test_the_default_run_is_the_pages_table() -> None:
    table = _table_modules()
    assert len(table) == 18
    assert table[:3] == ["scoring/_metrics.py", "scoring/_assign.py", "scoring/_cover.py"]
    assert sorted(_default_modules()) == sorted(table)
    assert len(set(_default_modules())) == len(_default_modules())
