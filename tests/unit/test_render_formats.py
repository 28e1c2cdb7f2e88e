"""Renderers only format (issue 48): nothing under ``sizing/report/render`` imports the
engine, the measuring code, the sources or the use cases to run them. The engine's result
types may be named for annotations under ``TYPE_CHECKING`` (classes only: a function
imported there could not be called), and no renderer evaluates a model (``usl``, ``fit``,
``estimate``, ``predict``, ``curve``): the curves and the comparisons it draws come as data
from ``sizing.report.data`` (the import-linter contract in pyproject.toml forbids the
measuring code, the sources and the use cases too)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RENDER = ROOT / "sizing" / "report" / "render"
COMPUTING = ("sizing.engine", "sizing.measure", "sizing.sources", "sizing.sweep", "sizing.app")
MODEL_CALLS = {"usl", "fit", "estimate", "predict", "curve", "refine", "paired", "ht_pairs"}


def _under(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """The lines of every ``if TYPE_CHECKING:`` block's body."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name):
            if node.test.id == "TYPE_CHECKING":
                for child in node.body:
                    end = child.end_lineno or child.lineno
                    lines.update(range(child.lineno, end + 1))
    return lines


def offences(source: str) -> list[str]:
    """What a renderer's source does that only formatting code may not."""
    tree = ast.parse(source)
    typing_only = _type_checking_lines(tree)
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if not _under(node.module, COMPUTING):
                continue
            names = [a.name for a in node.names]
            if node.lineno not in typing_only:
                out.append(f"{node.lineno}: imports {node.module} at run time")
            elif not node.module.startswith("sizing.engine") or any(
                not n[:1].isupper() for n in names
            ):
                out.append(f"{node.lineno}: {node.module} {names} is not an engine result type")
        elif isinstance(node, ast.Import):
            out += [
                f"{node.lineno}: imports {a.name}" for a in node.names if _under(a.name, COMPUTING)
            ]
        elif isinstance(node, ast.Call):
            f = node.func
            name = (
                f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            )
            if name in MODEL_CALLS:
                out.append(f"{node.lineno}: calls {name}()")
    return out


def test_the_check_sees_what_it_refuses() -> None:
    bad = (
        "from typing import TYPE_CHECKING\n"
        "from sizing.engine.scaling import usl\n"
        "from sizing.measure.cpu import cpu_split\n"
        "if TYPE_CHECKING:\n"
        "    from sizing.engine.table import Cell, build_table\n"
        "    from sizing.engine.answer import Recommendation\n"
        "def f(s, fit):\n"
        "    return usl(2, 1, 0, 0), s.estimate(4), fit.curve(8)\n"
    )
    assert offences(bad) == [
        "2: imports sizing.engine.scaling at run time",
        "3: imports sizing.measure.cpu at run time",
        "5: sizing.engine.table ['Cell', 'build_table'] is not an engine result type",
        "8: calls usl()",
        "8: calls estimate()",
        "8: calls curve()",
    ]


def test_renderers_only_format() -> None:
    found = {
        str(p.relative_to(ROOT)): got
        for p in sorted(RENDER.glob("*.py"))
        if (got := offences(p.read_text(encoding="utf-8")))
    }
    assert found == {}
