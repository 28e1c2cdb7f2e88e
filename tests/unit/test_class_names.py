"""One meaning per class name: no two classes of ``sizing`` share a name.

Two ``Environment`` classes (a command's streams, a point's hardware) or two ``Pair``
classes (a planned pair of legs, a compared pair of figures) make every import a guess
and every ``grep`` a list of both. This test reads every module with :mod:`ast` (classes
nested in functions or classes too) and fails on a name defined twice, naming both places.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "sizing"


def class_definitions(sources: dict[str, str]) -> dict[str, list[str]]:
    """Every class name of ``sources`` (path -> text) with where it is defined."""
    where: dict[str, list[str]] = defaultdict(list)
    for path, text in sorted(sources.items()):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(f"{path}:{node.lineno}")
    return dict(where)


def duplicates(sources: dict[str, str]) -> dict[str, list[str]]:
    """The class names defined more than once, with their places."""
    return {n: w for n, w in class_definitions(sources).items() if len(w) > 1}


def _package_sources() -> dict[str, str]:
    # the bundled data folder holds links to reference files, not code
    return {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for p in sorted(PACKAGE.rglob("*.py"))
        if "_data" not in p.relative_to(PACKAGE).parts
    }


def test_the_check_sees_a_name_defined_twice() -> None:
    found = duplicates(
        {
            "a.py": "class Pair:\n    pass\n",
            "b.py": "def f():\n    class Pair:\n        pass\n\nclass Other:\n    pass\n",
        }
    )
    assert found == {"Pair": ["a.py:1", "b.py:2"]}


def test_no_class_name_is_defined_twice_in_sizing() -> None:
    sources = _package_sources()
    assert "sizing/records/point.py" in sources
    assert duplicates(sources) == {}
