"""Renderers only format (issue 48): nothing under ``sizing/report/render`` imports the
engine, the measuring code, the sources or the use cases, at run time, in a function or
under ``TYPE_CHECKING`` alike (the engine's result types it names in annotations come
through ``sizing.report.data.results``), and no renderer evaluates a model (``usl``,
``fit``, ``estimate``, ``predict``, ``curve``) or pairs points: the curves and the
comparisons it draws come as data from ``sizing.report.data``. The import-linter contract
in pyproject.toml forbids the same imports."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RENDER = ROOT / "sizing" / "report" / "render"
COMPUTING = ("sizing.engine", "sizing.measure", "sizing.sources", "sizing.sweep", "sizing.app")
MODEL_CALLS = {"usl", "fit", "estimate", "predict", "curve", "refine", "paired", "ht_pairs"}


def _under(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def offences(source: str) -> list[str]:
    """What a renderer's source does that only formatting code may not."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if _under(node.module, COMPUTING):
                out.append(f"{node.lineno}: imports {node.module}")
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
        "from sizing.report.data.results import Cell\n"
        "if TYPE_CHECKING:\n"
        "    from sizing.engine.answer import Recommendation\n"
        "def f(s, fit):\n"
        "    import sizing.sources\n"
        "    return usl(2, 1, 0, 0), s.estimate(4), fit.curve(8)\n"
    )
    assert sorted(offences(bad)) == [
        "2: imports sizing.engine.scaling",
        "3: imports sizing.measure.cpu",
        "6: imports sizing.engine.answer",
        "8: imports sizing.sources",
        "9: calls curve()",
        "9: calls estimate()",
        "9: calls usl()",
    ]


def test_renderers_only_format() -> None:
    found = {
        str(p.relative_to(ROOT)): got
        for p in sorted(RENDER.glob("*.py"))
        if (got := offences(p.read_text(encoding="utf-8")))
    }
    assert found == {}
