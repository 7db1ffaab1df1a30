"""The layout's rules (DESIGN.md "Dependency rules"), checked on the source: no import cycle inside harness/,
harness and reference_gateway never import each other, only plugin.py/items.py import pytest."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _modules(package: str) -> dict[str, Path]:
    out = {}
    for path in (ROOT / package).rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def _imports(path: Path, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _runtime_deps(path: Path, files: dict[str, Path]) -> set[str]:
    """The harness modules `path` imports at module level (function-level imports are lazy on purpose).
    `from pkg import submodule` depends on the submodule; importing any other name depends on `pkg`."""
    deps: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module in files:
            subs = {f"{node.module}.{a.name}" for a in node.names} & set(files)
            deps |= subs
            if len(subs) < len(node.names):
                deps.add(node.module)
        elif isinstance(node, ast.Import):
            deps |= {a.name for a in node.names if a.name in files}
    return deps


def test_no_import_cycle_in_harness() -> None:
    files = _modules("harness")
    graph = {name: _runtime_deps(path, files) - {name} for name, path in files.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif not state.get(nxt):
                visit(nxt)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if not state.get(name):
            visit(name)
    assert cycles == []


def test_harness_and_reference_gateway_never_import_each_other() -> None:
    for package, other in (("harness", "reference_gateway"), ("reference_gateway", "harness")):
        for path in _modules(package).values():
            bad = sorted(i for i in _imports(path, top_level_only=False) if i.split(".")[0] == other)
            assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"


def test_only_the_plugin_modules_import_pytest() -> None:
    allowed = {"harness.plugin", "harness.items", "harness.live_plugin"}
    for name, path in _modules("harness").items():
        if "pytest" in {i.split(".")[0] for i in _imports(path, top_level_only=False)}:
            assert name in allowed, f"{name} imports pytest"
