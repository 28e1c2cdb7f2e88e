"""The README is a README: under 250 lines, its Layout names every package, playbook and
top-level folder, its links and the docs pages' links resolve, and every ``sizing``
command it shows parses as typed (the options exist and take the values shown). The
integration test ``test_readme.py`` runs the main ones for real from a clean clone."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import typer

from sizing.cli import app

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()


def _section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_readme_is_short() -> None:
    assert len(README.splitlines()) < 250


def test_layout_names_every_package_playbook_and_folder() -> None:
    layout = _section("Layout")
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    folders = {p.split("/")[0] for p in tracked if "/" in p and not p.startswith(".")}
    packages = {p.split("/")[1] for p in tracked if re.fullmatch(r"sizing/\w+/__init__\.py", p)}
    playbooks = {Path(p).name for p in tracked if re.fullmatch(r"playbooks/[^/]+\.yml", p)}
    top = set(re.findall(r"^    (\w+)/", layout, re.M))  # a code block: 4 spaces
    modules_named = set(re.findall(r"^      (\w+)/", layout, re.M))  # under sizing/
    assert folders <= top, folders - top
    assert packages <= modules_named, packages - modules_named
    assert all(pb in layout for pb in playbooks), [pb for pb in playbooks if pb not in layout]
    assert packages and playbooks and "benchmarks" in folders  # the listing itself worked


def _links(path: Path) -> list[str]:
    return re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", path.read_text())


@pytest.mark.parametrize(
    "page", [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))], ids=lambda p: p.name
)
def test_links_resolve(page: Path) -> None:
    for link in _links(page):
        if not link.startswith(("http://", "https://")):
            assert (page.parent / link).exists(), f"{page.name}: {link}"


def test_every_docs_page_is_listed_in_the_readme_and_the_index() -> None:
    index = (REPO / "docs" / "index.md").read_text()
    for page in (REPO / "docs").glob("*.md"):
        if page.name != "index.md":
            assert f"(docs/{page.name})" in README, page.name
            assert f"({page.name})" in index, page.name


def _commands() -> list[str]:
    """The ``sizing`` commands the README shows in its code blocks, as typed."""
    out = []
    for line in README.splitlines():
        m = re.match(r"^    (?:\$ )?(sizing [^#|]*)", line)
        if m:
            out.append(m.group(1).strip())
    return out


def test_the_readme_shows_commands() -> None:
    shown = _commands()
    assert "sizing recommend --rps 200000" in shown and len(shown) >= 8, shown


@pytest.mark.parametrize("typed", _commands())
def test_every_command_the_readme_shows_parses(typed: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the README's paths are the checkout's
    group = typer.main.get_command(app)
    args = shlex.split(typed)[1:]
    cmd: Any = group  # typer's own click (typer._click), not the click package
    while hasattr(cmd, "get_command") and args and not args[0].startswith("-"):
        sub = cmd.get_command(cmd.context_class(cmd), args[0])
        assert sub is not None, f"{typed}: no command {args[0]!r}"
        cmd, args = sub, args[1:]
    if "--help" in args:
        return
    assert not hasattr(cmd, "get_command"), f"{typed}: names no command"
    with cmd.make_context(cmd.name, args, resilient_parsing=False) as ctx:
        assert ctx.params is not None
