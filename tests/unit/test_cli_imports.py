"""The CLI calls only the use cases: every module of ``sizing/cli`` imports, of sizing,
only ``sizing.app`` (the use cases, their requests and outcomes), the renderers
(``sizing.report.render``), the shared vocabulary (``sizing.model``, ``sizing.errors``,
``sizing.paths``, ``sizing.textfit``: text folded to the terminal), the version, and
itself; at module level, in a function or under ``TYPE_CHECKING`` alike (issue 35: one
path per use case)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = (
    "sizing.app",
    "sizing.cli",
    "sizing.report.render",
    "sizing.model",
    "sizing.errors",
    "sizing.paths",
    "sizing.textfit",
)
FROM_SIZING = {"__version__", "paths"}  # ``from sizing import ...``


def _imports(path: Path) -> list[tuple[int, str]]:
    """Each ``sizing`` module (or name of the package) a file imports, with its line."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("sizing")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "sizing":
                out += [(node.lineno, f"sizing:{a.name}") for a in node.names]
            elif node.module.startswith("sizing."):
                out.append((node.lineno, node.module))
    return out


def _allowed(name: str) -> bool:
    if name.startswith("sizing:"):
        return name.removeprefix("sizing:") in FROM_SIZING
    return any(name == a or name.startswith(a + ".") for a in ALLOWED)


def test_the_check_sees_what_it_refuses(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f():\n    from sizing.store import Store\n    import sizing.engine\n"
        "from sizing import profiles\nfrom sizing.app.run import plan\n"
    )
    got = [(n, name, _allowed(name)) for n, name in _imports(bad)]
    assert sorted(got) == [
        (2, "sizing.store", False),
        (3, "sizing.engine", False),
        (4, "sizing:profiles", False),
        (5, "sizing.app.run", True),
    ]


def test_the_cli_imports_only_the_use_cases() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}: {name}"
        for path in sorted((ROOT / "sizing" / "cli").glob("*.py"))
        for n, name in _imports(path)
        if not _allowed(name)
    ]
    assert found == []
