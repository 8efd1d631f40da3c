"""Dependencies point one way: every import in src/extraction_eval (lazy ones and type-only ones
included) goes down this list of layers or stays in its own, and no import forms a cycle.

docs/decisions.md (section "Layers") shows the same list.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import REPO

PACKAGE = "extraction_eval"
SRC = REPO / "src" / PACKAGE

#: Lowest first. A unit is a top-level module or subpackage of extraction_eval.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset(
        {
            "_exceptions",
            "_settings",
            "_json",
            "_jsonio",
            "_git",
            "_entry",
            "vocab",
            "metric_keys",
            "mlflow_names",
            "evidence",
            "ratios",
        }
    ),
    frozenset({"contract"}),
    frozenset({"gold"}),
    frozenset({"cassettes", "scoring"}),
    frozenset({"providers"}),
    frozenset({"evaluation"}),
    frozenset({"tracking", "gates"}),
    frozenset({"pipeline"}),
    frozenset({"cli"}),
)
#: The package's facade and entry point may import anything (lazily).
TOP = frozenset({"__init__", "__main__"})
#: A test tool beside the pipeline: it may use the layers up to providers (its in-process
#: FakeProvider plays the ProviderClient seam and raises the SDK's own errors), and nothing imports it.
SIDE = {"stub_provider": 4}
#: Narrower than the layers say: providers call, and know nothing of runs, cassettes or MLflow;
#: the pure scoring core reads no file (``_json`` holds the JSON helpers it shares with ``_jsonio``).
MAY_NOT_IMPORT = {
    "providers": frozenset({"cassettes", "scoring", "evaluation", "tracking", "mlflow_names"}),
    "scoring": frozenset({"_jsonio", "_settings", "_git", "gold", "cassettes"}),
}
#: Third-party packages only one unit may import (the heavy SDKs stay at their edge).
ONLY_IN = {
    "mlflow": frozenset({"tracking"}),
    "sqlalchemy": frozenset({"tracking"}),
    "openai": frozenset({"providers", "stub_provider"}),
}


def module_name(path: Path) -> str:
    parts = [PACKAGE, *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def unit(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def rank(name: str) -> int:
    if name in TOP:
        return len(LAYERS)
    if name in SIDE:
        return SIDE[name]
    return next(i for i, layer in enumerate(LAYERS) if name in layer)


def type_only_lines(tree: ast.AST) -> set[int]:
    """Lines of the imports under ``if TYPE_CHECKING:`` (they never run)."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            lines |= {
                n.lineno for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.Import | ast.ImportFrom)
            }
    return lines


def imports(module: str) -> Iterator[tuple[int, str]]:
    """(line, imported module) for every import statement, wherever it sits."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:  # `from . import _baseline` imports a module
                yield node.lineno, (f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target)


EDGES = {m: sorted({(line, t) for line, t in imports(m)}) for m in MODULES}
TYPE_ONLY = {m: type_only_lines(ast.parse(p.read_text(encoding="utf-8"))) for m, p in MODULES.items()}


def test_every_unit_has_a_layer() -> None:
    units = {unit(m) for m in MODULES}
    placed = set(TOP) | set(SIDE) | set().union(*LAYERS)
    assert units <= placed, f"place these in LAYERS: {sorted(units - placed)}"
    assert not (placed - units - TOP), f"no such units: {sorted(placed - units - TOP)}"


def test_imports_point_down_the_layers() -> None:
    wrong = []
    for module, edges in EDGES.items():
        here = unit(module)
        for line, target in edges:
            if not target.startswith(PACKAGE + ".") and target != PACKAGE:
                continue
            there = unit(target)
            if there == here:
                continue
            if there in SIDE:
                wrong.append(f"{module}:{line} imports {target} (the stub provider is a test tool)")
            elif rank(there) > rank(here):
                wrong.append(f"{module}:{line} imports {target}: layer {rank(there)} above {here}'s {rank(here)}")
            elif there in MAY_NOT_IMPORT.get(here, ()):
                wrong.append(f"{module}:{line} imports {target}: {here} may not know {there}")
    assert not wrong, "\n".join(wrong)


def test_heavy_sdks_stay_at_their_edge() -> None:
    wrong = [
        f"{module}:{line} imports {target}"
        for module, edges in EDGES.items()
        for line, target in edges
        if target.split(".")[0] in ONLY_IN and unit(module) not in ONLY_IN[target.split(".")[0]]
    ]
    assert not wrong, "\n".join(wrong)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_no_cycle_between_modules_or_units() -> None:
    """Cycles of imports that run: one under ``if TYPE_CHECKING:`` (a type named back) is no cycle.
    The layer check above counts those too."""
    modules = {
        m: {t for line, t in edges if t in MODULES and t != m and line not in TYPE_ONLY[m]}
        for m, edges in EDGES.items()
    }
    # a package's __init__ re-exports its own modules: that is not a dependency on itself
    modules = {m: {t for t in targets if not t.startswith(m + ".")} for m, targets in modules.items()}
    assert find_cycle(modules) is None, " -> ".join(find_cycle(modules) or [])
    units: dict[str, set[str]] = {}
    for m, targets in modules.items():
        units.setdefault(unit(m), set()).update(unit(t) for t in targets if unit(t) != unit(m))
    assert find_cycle(units) is None, " -> ".join(find_cycle(units) or [])


@pytest.mark.parametrize(
    ("graph", "cycle"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
        ({"a": {"b"}, "b": set(), "c": {"c"}}, ["c", "c"]),
        ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, None),
    ],
)
def test_the_cycle_finder_finds_cycles(graph: dict[str, set[str]], cycle: list[str] | None) -> None:
    assert find_cycle(graph) == cycle


def test_the_walk_sees_lazy_relative_and_type_only_imports() -> None:
    """The checks can fail: they see an import inside a function, resolved from `..`, and know
    which imports are for type checkers only."""
    targets = {t for _, t in EDGES["extraction_eval.cli._gate"]}
    assert "extraction_eval.gates._gate_run" in targets  # imported inside gate_command
    assert "extraction_eval.cli._app" in targets
    root = dict((t, line) for line, t in EDGES["extraction_eval"])
    assert root["extraction_eval.pipeline"] in TYPE_ONLY["extraction_eval"]
    assert not TYPE_ONLY["extraction_eval.cli._gate"]
