"""The shape of the source tree a maintainer relies on: no import circle, modules of a readable size,
a short conductor and a first docstring line on every module. Read from the source with ``ast``; no
module is imported."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"linter": "recovery_lint", "rules": "recovery_lint.rules"}
LONGEST_MODULE = 800  # lines, for any module of linter/
LONGEST_ENGINE = 250  # lines of linter/engine.py


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(name: str) -> set[str]:
    """The project modules ``name`` imports at run time (at module level or inside a function),
    leaving out imports made for the type checker alone."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    base = name if _is_package(name) else name.rpartition(".")[0]
    targets: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                anchor = base.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                module = ".".join([*anchor, module] if module else anchor)
            targets.add(module)
            targets.update(f"{module}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    # `from . import x` names a module; `from .a import f` names a function of module a
    return {t for t in targets if t in MODULES and t != name}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return groups


def test_the_house_reads_its_own_sources():
    assert "recovery_lint.engine" in MODULES and "recovery_lint.rules._common" in MODULES
    assert "recovery_lint.premises" in _imports("recovery_lint.report.settle")


def test_no_import_circle():
    # a package's __init__ importing its own modules is how a package exposes them, not a circle
    graph = {name: {t for t in _imports(name) if not (_is_package(t) and name.startswith(t + "."))} for name in MODULES}
    assert _circles(graph) == []


def test_the_circle_finder_finds_one():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith("recovery_lint.") and ".rules" not in n))
def test_module_of_a_readable_size(name):
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= LONGEST_MODULE, f"{MODULES[name].relative_to(ROOT)} has {lines} lines"


def test_the_conductor_is_short():
    assert (ROOT / "linter" / "engine.py").read_text(encoding="utf-8").count("\n") < LONGEST_ENGINE


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_says_what_it_is_for(name):
    doc = ast.get_docstring(ast.parse(MODULES[name].read_text(encoding="utf-8")))
    assert doc and doc.split("\n", 1)[0].strip(), f"{MODULES[name].relative_to(ROOT)} has no first docstring line"
