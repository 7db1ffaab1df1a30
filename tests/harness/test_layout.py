"""The layout's rules (docs/design.md, "Dependency rules"), checked on the source: no import cycle between
modules nor between folders (each first-level sub-package one node) of harness/ and reference_gateway/, counting
every import (module level, inside functions, under TYPE_CHECKING: a lazy import that hides a cycle is still a
cycle in the design); harness and reference_gateway never import each other; only the pytest glue
(harness/plugin/) imports pytest; no module over 600 lines; every exception class defined in errors.py, in its
tree."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 600
# Modules that may be longer, and why.
LONG_MODULES: set[str] = set()  # none: every module of harness/ and reference_gateway/ is under 600 lines


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


def _deps(name: str, path: Path, files: dict[str, Path]) -> set[str]:
    """Every harness module `path` imports, wherever the import statement is: `from pkg import name` depends
    on the submodule `pkg.name` when there is one, else on `pkg`; a relative import is resolved first. A
    package's own submodules are not its dependencies (its __init__ re-exporting them is no cycle)."""
    is_package = path.name == "__init__.py"
    base = name.split(".") if is_package else name.split(".")[:-1]
    deps: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - node.level + 1] if node.level > 1 else base
                module = ".".join(anchor + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module, *(f"{module}.{a.name}" for a in node.names)]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            known = next(
                (".".join(parts[:i]) for i in range(len(parts), 0, -1) if ".".join(parts[:i]) in files), None
            )
            if known is not None and known != name and not known.startswith(name + "."):
                deps.add(known)
    return deps


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def _graph(package: str) -> dict[str, set[str]]:
    files = _modules(package)
    return {name: _deps(name, path, files) for name, path in files.items()}


@pytest.mark.e2e
@pytest.mark.parametrize("package", ["harness", "reference_gateway"])
def test_no_import_cycle_counting_every_import(package: str) -> None:
    assert _cycles(_graph(package)) == []


def _folder(name: str, package: str, files: dict[str, Path]) -> str:
    """The folder node of a module: its first-level sub-package under `package`, or the module itself when it
    sits directly in the package (every first-level sub-package one node)."""
    parts = name.split(".")
    if len(parts) > 2 or (len(parts) == 2 and files[name].name == "__init__.py"):
        return ".".join(parts[:2])
    return name


def folder_graph(package: str) -> dict[str, set[str]]:
    files = _modules(package)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        node = _folder(name, package, files)
        graph.setdefault(node, set())
        for dep in _deps(name, path, files):
            other = _folder(dep, package, files)
            if other != node:
                graph[node].add(other)
    return graph


@pytest.mark.parametrize("package", ["harness", "reference_gateway"])
def test_no_import_cycle_between_folders(package: str) -> None:
    """Each first-level sub-package is one node: harness.clients -> harness.orchestrate -> harness.clients is a
    cycle of the design even when no two modules import each other."""
    assert _cycles(folder_graph(package)) == []


def test_the_folder_cycle_finder_sees_a_cycle_through_two_folders(tmp_path: Path) -> None:
    files = {
        "pkg.a": tmp_path / "a" / "__init__.py",
        "pkg.a.x": tmp_path / "a" / "x.py",
        "pkg.b.y": tmp_path / "b" / "y.py",
    }
    for path in files.values():
        path.parent.mkdir(exist_ok=True)
    files["pkg.a"].write_text("")
    files["pkg.a.x"].write_text("def f():\n    from pkg.b import y\n")
    files["pkg.b.y"].write_text("from pkg.a import x\n")
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        node = _folder(name, "pkg", files)
        graph.setdefault(node, set()).update(
            _folder(d, "pkg", files) for d in _deps(name, path, files) if _folder(d, "pkg", files) != node
        )
    assert _cycles(graph) == [["pkg.a", "pkg.b"]]


def test_the_cycle_finder_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    """The counter itself: a cycle closed only by a function-level or TYPE_CHECKING import is found."""
    files = {"pkg.a": tmp_path / "a.py", "pkg.b": tmp_path / "b.py", "pkg.c": tmp_path / "c.py"}
    files["pkg.a"].write_text("from pkg import b\n")
    files["pkg.b"].write_text("def f():\n    from pkg.c import g\n")
    files["pkg.c"].write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    graph = {name: _deps(name, path, files) for name, path in files.items()}
    assert _cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]
    files["pkg.c"].write_text("import os\n")
    assert _cycles({name: _deps(name, path, files) for name, path in files.items()}) == []


@pytest.mark.e2e
def test_harness_and_reference_gateway_never_import_each_other() -> None:
    for package, other in (("harness", "reference_gateway"), ("reference_gateway", "harness")):
        for path in _modules(package).values():
            bad = sorted(i for i in _imports(path, top_level_only=False) if i.split(".")[0] == other)
            assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"


@pytest.mark.e2e
def test_only_the_plugin_package_imports_pytest() -> None:
    for name, path in _modules("harness").items():
        if "pytest" in {i.split(".")[0] for i in _imports(path, top_level_only=False)}:
            assert name == "harness.plugin" or name.startswith("harness.plugin."), f"{name} imports pytest"


def test_the_plugin_entry_point_imports_nothing_heavy() -> None:
    """pytest imports harness.plugin in every project that installs the package: at module level it may
    import only pytest, the standard library and the options table."""
    path = ROOT / "harness" / "plugin" / "__init__.py"
    allowed = {"harness.orchestrate.options", "harness.outcomes"}
    harness_imports = {i for i in _imports(path, top_level_only=True) if i.startswith("harness.")}
    assert {i.rsplit(".", 1)[0] if i not in allowed else i for i in harness_imports} <= allowed


@pytest.mark.parametrize("package", ["harness", "reference_gateway"])
def test_no_module_over_600_lines(package: str) -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in _modules(package).values()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert set(long) <= LONG_MODULES, long


def _exception_classes() -> dict[str, str]:
    """Every class harness/ defines that derives (by name, through the package) from an exception: name ->
    the module that defines it."""
    classes: dict[str, tuple[str, list[str]]] = {}
    for name, path in _modules("harness").items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [
                    b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                    for b in node.bases
                ]
                classes[node.name] = (name, bases)
    roots = {"Exception", "BaseException", "ValueError", "RuntimeError", "OSError", "KeyError", "TypeError"}
    found: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for cls, (module, bases) in classes.items():
            if cls not in found and any(b in roots or b in found for b in bases):
                found[cls] = module
                changed = True
    return found


@pytest.mark.e2e
def test_every_exception_class_is_in_the_errors_tree() -> None:
    from harness import errors

    drawn = set(re.findall(r"^ {4}[│├└─ ]*([A-Z]\w+)", errors.__doc__ or "", re.M))
    classes = _exception_classes()
    assert set(classes) <= drawn, sorted(set(classes) - drawn)
    elsewhere = {cls: module for cls, module in classes.items() if module != "harness.errors"}
    assert elsewhere == {}, f"exception classes defined outside harness/errors.py: {elsewhere}"
    for cls, module in classes.items():
        obj = getattr(importlib.import_module(module), cls)
        if cls not in errors.NOT_HARNESS_ERRORS:
            assert issubclass(obj, errors.HarnessError), f"{module}.{cls} is not a HarnessError"


def _design_rows(section: str) -> list[list[str]]:
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    part = text[text.index(section) :]
    part = part[: part.index("\n\n", part.index("|---"))]
    return [
        re.findall(r"`([a-z_/.]+?)/?`", line.split("|")[1])
        for line in part.splitlines()
        if line.startswith("| `")
    ]


@pytest.mark.parametrize(
    ("package", "section", "order"),
    [
        ("harness", "### harness/, bottom up", 1),
        ("reference_gateway", "### reference_gateway/, top down", -1),
    ],
)
def test_the_design_docs_layout_is_the_tree(package: str, section: str, order: int) -> None:
    """docs/design.md's layout table names every folder and module of the package, each only once, and each
    imports only the ones below it there (the table's order is the import order)."""
    level: dict[str, int] = {}
    for i, names in enumerate(_design_rows(section)):
        for name in names:
            node = f"{package}.{name.removesuffix('.py')}"
            assert node not in level, f"{node} is in two rows"
            level[node] = i * order
    graph = folder_graph(package)
    nodes = {n for n in graph if n != package and not n.endswith("__main__")}
    assert nodes - set(level) == set(), "not in docs/design.md"
    assert set(level) - nodes == set(), "in docs/design.md but not in the tree"
    upward = sorted((a, b) for a in nodes for b in graph[a] if b in level and level[b] > level[a])
    assert upward == []
