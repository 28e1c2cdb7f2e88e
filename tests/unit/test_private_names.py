"""No ``sizing`` module reaches into another for a ``_private`` name.

A leading underscore says "this module's own": a name another module needs is public
there (a docstring, a stable name), or it stays in the one module that uses it. This test
reads every module with :mod:`ast` and fails on ``from sizing.x import _name`` (relative
imports too) and on ``mod._name`` where ``mod`` is another sizing module imported by name.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "sizing"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def module_names(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package (the bundled data links left out) by dotted name."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        if "_data" in rel.parts:
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def private_uses(source: str, module: str, is_package: bool, modules: set[str]) -> list[str]:
    """``module``'s uses of another sizing module's private names, one line each."""
    package = module if is_package else module.rpartition(".")[0]
    aliases: dict[str, str] = {}  # local name -> the sizing module it is bound to
    found: list[str] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "sizing":
                continue
            for alias in node.names:
                if f"{target}.{alias.name}" in modules:
                    aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
                elif _private(alias.name) and target != module:
                    found.append(f"{module}:{node.lineno} imports {alias.name} from {target}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "sizing" and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and aliases[node.value.id] != module
            and _private(node.attr)
        ):
            found.append(f"{module}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    return found


def test_the_check_sees_a_private_name() -> None:
    mods = {"sizing.store", "sizing.store.rows", "sizing.plan.points"}
    bad = (
        "from sizing.store.rows import _point, StoredPoint\n"
        "from .rows import _run\n"
        "from sizing.plan import points\n"
        "points._client_cpus(1, 2)\n"
    )
    assert private_uses(bad, "sizing.store", True, mods) == [
        "sizing.store:1 imports _point from sizing.store.rows",
        "sizing.store:2 imports _run from sizing.store.rows",
        "sizing.store:4 uses sizing.plan.points._client_cpus",
    ]
    fine = "from sizing.store.rows import StoredPoint\nfrom __future__ import annotations\n"
    assert private_uses(fine, "sizing.store", True, mods) == []


def test_no_module_imports_another_modules_private_name() -> None:
    mods = module_names()
    assert "sizing.store.rows" in mods
    found = [
        line
        for name, path in mods.items()
        for line in private_uses(
            path.read_text(encoding="utf-8"), name, path.name == "__init__.py", set(mods)
        )
    ]
    assert found == []
