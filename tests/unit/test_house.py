"""The shape of the package: no import cycles between its modules, and no module too long to read.

The graph is read from the source with :mod:`ast`, not from what an import run loads, so it sees every import:
those at the top, those inside functions (a lazy import that closes a loop is still a loop: it only moves the
failure to the first call) and those under ``TYPE_CHECKING``. An import names the most specific module of
``swebash_ai`` it reaches: ``from swebash_ai.agent import loop`` is the module ``loop``, ``from swebash_ai.agent
import Agent`` is the package ``swebash_ai.agent`` (its ``__init__.py``).

When the cycle test fails, it names the loop module by module. Break it the way the code wants: move the shared
names into a lower module, let the lower side declare a protocol the higher side implements, or hand the lower
side a callback; see docs/architecture.md.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import swebash_ai

PACKAGE = Path(swebash_ai.__file__).parent
MAX_LINES = 650


def module_files(package: Path) -> dict[str, Path]:
    """Every module of the package under ``package``, by its dotted name (a package by its own name)."""
    root = package.parent
    modules: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _targets(node: ast.Import | ast.ImportFrom, name: str, is_package: bool) -> Iterator[str]:
    """The dotted names one import statement loads: ``import a.b`` loads ``a.b``; ``from a import x`` loads the
    submodule ``a.x`` when there is one, else ``a`` (which ``_module_of`` tells apart)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    stem = node.module or ""
    if node.level:  # relative: from the module's package, one folder up per extra dot
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        stem = ".".join([*base, stem] if stem else base)
    for alias in node.names:
        yield f"{stem}\0{alias.name}"


def _module_of(target: str, modules: dict[str, Path]) -> str | None:
    """The module of the package that ``target`` names, or ``None`` for one outside it."""
    stem, _, alias = target.partition("\0")
    if alias and f"{stem}.{alias}" in modules:
        return f"{stem}.{alias}"
    while stem and stem not in modules:  # a name outside the package, or one the package does not hold
        stem = stem.rpartition(".")[0]
    return stem or None


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the package that the module ``name`` imports anywhere in its file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):  # every statement: at the top, in functions, under TYPE_CHECKING
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(node, name, is_package):
                module = _module_of(target, modules)
                if module is not None and module != name:
                    found.add(module)
    return found


def import_graph(package: Path) -> dict[str, set[str]]:
    modules = module_files(package)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def tangles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The groups of modules that reach each other through imports (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(start: str) -> None:
        # iterative, so a deep chain of imports cannot reach the recursion limit
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return groups


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One loop for each tangle, as the path ``a -> ... -> a``."""
    return [loop_in(group, graph) for group in tangles(graph)]


def loop_in(group: set[str], graph: dict[str, set[str]]) -> list[str]:
    """The shortest loop through the group's first module (breadth first, within the group)."""
    start = min(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for child in sorted(graph[node] & group):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no loop in the group {sorted(group)}")  # Tarjan's groups always have one


def test_no_import_cycles() -> None:
    graph = import_graph(PACKAGE)
    found = [
        " -> ".join(loop_in(group, graph)) + (f" (tangled with {sorted(group)})" if len(group) > 2 else "")
        for group in tangles(graph)
    ]
    assert not found, "import cycles:\n  " + "\n  ".join(found)


def test_no_module_is_too_long() -> None:
    long = {
        str(path.relative_to(PACKAGE.parent)): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them by what they do): {long}"


# The checker itself, on a small package of its own: it must see every kind of import that makes a loop.

def _write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


@pytest.mark.parametrize(
    "b_source",
    [
        "from pkg.a import A\n",
        "def f():\n    from pkg.a import A\n    return A\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n",
        "import pkg.a.inner\n",  # ``inner`` is a name in pkg.a: an import of pkg.a
        "from pkg import a\n",
        "from . import a\n",
    ],
    ids=["top-level", "inside-a-function", "type-checking-relative", "dotted", "submodule", "relative-submodule"],
)
def test_the_checker_sees_a_loop(tmp_path: Path, b_source: str) -> None:
    package = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.b import B\nA = 1\ninner = 2\n",
        "pkg/b.py": b_source + "B = 2\n",
        "pkg/c.py": "from pkg.a import A\n",
    })
    assert cycles(import_graph(package)) == [["pkg.a", "pkg.b", "pkg.a"]]


def test_the_checker_sees_a_loop_through_a_package_face(tmp_path: Path) -> None:
    package = _write(tmp_path, {
        "pkg/__init__.py": "from pkg.a import A\n",
        "pkg/a.py": "from pkg.b import B\nA = 1\n",
        "pkg/b.py": "from pkg import A\nB = 2\n",  # the name comes through pkg/__init__.py, which imports a
    })
    assert cycles(import_graph(package)) == [["pkg", "pkg.a", "pkg.b", "pkg"]]


def test_the_checker_passes_a_package_without_loops(tmp_path: Path) -> None:
    package = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "X = 1\n",
        "pkg/mid.py": "from pkg.low import X\nfrom . import low\n",
        "pkg/high.py": (
            "import pkg.mid\nfrom .mid import X\n"
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.low\n"
        ),
    })
    graph = import_graph(package)
    assert graph == {"pkg": set(), "pkg.low": set(), "pkg.mid": {"pkg.low"}, "pkg.high": {"pkg.mid", "pkg.low"}}
    assert cycles(graph) == []
