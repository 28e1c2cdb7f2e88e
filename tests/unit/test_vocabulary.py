"""Issue 62: one vocabulary for the platform, virtualization and "not priced" reasons, used by
every rendering. The words for a virtualized host are one constant
(:data:`sizing.model.VIRTUALIZED_HOST_WORDS`), spelt nowhere else in the code; and on a
2-core VM's first run (tests/unit/test_hints.py's stored run: no load) the terminal's answer
and the guide say the same words for it and the same reason why KVM is not priced."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from typer.testing import CliRunner

from sizing.cli import app
from sizing.model import VIRTUALIZED_HOST_WORDS
from sizing.paths import ROOT
from tests.unit.test_hints import two_core_run

# other spellings of the same thing, as renderings had them before
SPELLINGS = re.compile(
    r"measured as bare metal|virtual machine or container|believes it is bare metal", re.I
)


def _literals(path: Path) -> list[tuple[int, str]]:
    """The string literals of a module that are not docstrings, with their lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def test_the_virtualized_host_words_are_spelt_once() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text[:60]!r}"
        for path in sorted((ROOT / "sizing").rglob("*.py"))
        for line, text in _literals(path)
        if SPELLINGS.search(text) and text != VIRTUALIZED_HOST_WORDS
    ]
    assert found == []
    assert SPELLINGS.search(VIRTUALIZED_HOST_WORDS)  # the check looks for what it defines


def _both(db: Path, *ask: str) -> tuple[str, str]:
    """The terminal's answer (stdout and stderr) and the guide's Markdown, words folded."""
    ask = (*ask, "--include-virtualized", "--article-prices", "--db", str(db))
    term = CliRunner().invoke(app, ["recommend", *ask], env={"COLUMNS": "100"})
    guide = CliRunner().invoke(app, ["guide", *ask, "--format", "md", "--out", "-"])
    assert term.exit_code == 0 and guide.exit_code == 0, term.output + guide.output
    return " ".join((term.stdout + term.stderr).split()), " ".join(
        guide.stdout.replace("\\`", "`").split()
    )


def test_the_terminal_and_the_guide_say_the_same_words(tmp_path: Path) -> None:
    db = tmp_path / "first-day.db"
    two_core_run(db)
    # sized on the VM's own TPS figure: both say what a virtualized host is, in one wording
    said, md = _both(db, "--tps", "500")
    assert f"a {VIRTUALIZED_HOST_WORDS}" in said and f"a {VIRTUALIZED_HOST_WORDS}" in md
    # on the reference data: the terminal's comparison says "KVM: not priced: <why>", the
    # guide "Not priced on KVM: <why>." with the same why
    said, md = _both(db, "--rps", "200000")
    (why,) = re.findall(r"KVM: not priced: (.+?\)) ", said)
    assert f"Not priced on KVM: {why}" in md


def test_the_guides_cover_counts_every_point_it_leaves_out(tmp_path: Path) -> None:
    """Issue 62: the cover said "8 points, 1 invalid" of a run with 6 skipped points; every
    status is counted now, and the counts add up to the points (the store's own statuses)."""
    db = tmp_path / "first-day.db"
    two_core_run(db)
    stored = CliRunner().invoke(app, ["results", "--json", "--db", str(db)])
    statuses = [p["status"] for run in json.loads(stored.stdout)["runs"] for p in run["points"]]
    guide = CliRunner().invoke(
        app, ["guide", "--rps", "200000", "--db", str(db), "--format", "md", "--out", "-"]
    )
    cover = " ".join(guide.stdout.split("## 1.")[0].split())
    (said,) = re.findall(r": (\d+) points((?:, \d+ \w+)*); listed in Appendix A", cover)
    counts = {what: int(n) for n, what in re.findall(r", (\d+) (\w+)", said[1])}
    assert int(said[0]) == len(statuses) == sum(counts.values()) + statuses.count("measured")
    assert counts == {
        s: statuses.count(s) for s in ("invalid", "skipped", "failed") if s in statuses
    }
