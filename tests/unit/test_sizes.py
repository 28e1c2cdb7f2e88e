"""Small enough to read: no module of sizing/ over 450 lines, no function over 80 (its
signature, docstring and body). A long function is split along its natural objects, a long
module along its parts (issue 23)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_MODULE = 450
MAX_FUNCTION = 80


def _sources() -> list[Path]:
    return sorted(p for p in (ROOT / "sizing").rglob("*.py") if "_data" not in p.parts)


def _long_functions(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text())
    return [
        f"{path.relative_to(root)}:{node.lineno} {node.name} ({n} lines)"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (n := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION
    ]


def test_no_module_is_too_long() -> None:
    long = [
        f"{p.relative_to(ROOT)} ({n} lines)"
        for p in _sources()
        if (n := len(p.read_text().splitlines())) > MAX_MODULE
    ]
    assert not long, long


def test_no_function_is_too_long() -> None:
    long = [f for p in _sources() for f in _long_functions(p)]
    assert not long, "\n".join(long)


def test_the_check_sees_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION))
    (tmp_path / "long.py").write_text(f"def f() -> None:\n{body}\n\n\ndef g() -> None:\n    pass\n")
    assert _long_functions(tmp_path / "long.py", tmp_path) == ["long.py:1 f (81 lines)"]
