"""No import cycle anywhere in ``sizing/``, the hidden ones included.

``lint-imports`` keeps the layers one-way, but it cannot see a cycle between two modules of
one package, and Python tolerates one that hides in a function body or behind
``TYPE_CHECKING``. This test reads every module's source with :mod:`ast` and counts every
import of a ``sizing`` module wherever it stands (module level, in a function, under
``TYPE_CHECKING``); a module importing its own package's ``__init__`` counts too. Any
strongly connected group of two or more modules fails, with its members named.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module_names(root: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same tree it imports (anywhere in its source)."""
    mods = _module_names(root)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                names = [target, *(f"{target}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            graph[name].update(n for n in names if n in mods and n != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_sizing_has_no_import_cycle() -> None:
    graph = import_graph(ROOT / "sizing")
    assert len(graph) > 100  # every module was read
    assert cycles(graph) == []


def test_a_planted_cycle_is_found_even_behind_type_checking_and_in_a_function(
    tmp_path: Path,
) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from pkg.sub.a import A\n")
    (pkg / "sub" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\nA = 1\n"
    )
    (pkg / "sub" / "b.py").write_text("def f():\n    from pkg.sub import a\n    return a\n")
    (pkg / "c.py").write_text("from pkg.sub import A\n")  # imports, no cycle
    assert cycles(import_graph(pkg)) == [["pkg.sub", "pkg.sub.a", "pkg.sub.b"]]
    (pkg / "sub" / "b.py").write_text("B = 2\n")  # the cycle removed
    assert cycles(import_graph(pkg)) == []
