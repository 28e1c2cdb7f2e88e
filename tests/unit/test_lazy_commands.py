"""Commands registered by name (:mod:`sizing.cli.lazy`, issues 58 and 60): ``sizing
--help`` lists every command with the help its docstring gives, without importing one
command's module; a command runs with only its own module imported; what Click builds for
a command is what ``app.command(name)`` built before."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st
from typer.main import get_command
from typer.testing import CliRunner

from sizing.cli import app
from sizing.cli.app import guarded
from sizing.cli.lazy import Lazy, LazyGroup
from sizing.errors import ExitStatus

runner = CliRunner()


def _lazy(group: typer.Typer) -> tuple[Lazy, ...]:
    cls = group.info.cls
    assert isinstance(cls, type) and issubclass(cls, LazyGroup)
    return cls.lazy


def _groups() -> dict[str, typer.Typer]:
    subs = {str(g.name): g.typer_instance for g in app.registered_groups}
    assert all(s is not None for s in subs.values())
    return {"": app, **{k: v for k, v in subs.items() if v is not None}}


ENTRIES = [(name, e) for name, g in _groups().items() for e in _lazy(g)]


def test_every_command_is_listed_and_none_is_registered_twice() -> None:
    names = [f"{g} {e.name}".strip() for g, e in ENTRIES]
    assert len(names) == len(set(names))
    assert {"recommend", "table", "guide", "demand", "run", "results", "import"} <= set(names)
    assert {"probe-ceiling", "doctor", "inventory check", "store copy"} <= set(names)
    assert not app.registered_commands  # every command goes through the lazy table


@pytest.mark.parametrize(("group", "entry"), ENTRIES, ids=[e.name for _, e in ENTRIES])
@given(limit=st.integers(10, 300))
def test_a_summary_shortens_as_the_docstring_does(group: str, entry: Lazy, limit: int) -> None:
    """Click lists a command by its help shortened to ``limit`` columns (its first
    sentence at most): the summary registered must give the same line at every width."""
    from typer._click.utils import make_default_short_help

    doc = inspect.getdoc(entry.callback()) or ""
    assert make_default_short_help(entry.summary, limit) == make_default_short_help(doc, limit)
    # and it is that sentence, not a shortened copy
    assert entry.summary.endswith(".") and " ".join(doc.split()).startswith(entry.summary)


def _help(name: str, *, loaded: bool) -> str:
    """The ``--help`` text of the group ``name`` ("": sizing's own), its commands built
    first when ``loaded``."""
    click_group = get_command(app)
    if name:
        click_group = click_group.commands[name]  # type: ignore[attr-defined]
    if loaded:
        for name in list(click_group.commands):  # type: ignore[attr-defined]
            assert click_group.commands[name] is not None  # type: ignore[attr-defined]
    ctx = click_group.make_context("sizing", [], resilient_parsing=True)
    return click_group.get_help(ctx)


@pytest.mark.parametrize("name", ["", "inventory", "store"])
def test_the_help_lists_what_the_built_commands_list(name: str) -> None:
    lazily = _help(name, loaded=False)
    assert lazily == _help(name, loaded=True)
    for entry in _lazy(_groups()[name]):
        assert f"  {entry.name} " in lazily


def test_a_command_is_built_as_app_command_built_it() -> None:
    """Its options, arguments, help and name are those of a Typer app that registers the
    function itself (the way every command was registered before)."""
    for group_name, entry in ENTRIES:
        plain = typer.Typer(rich_markup_mode=None)  # as sizing's app
        plain.command(entry.name)(guarded(entry.callback()))
        plain.command("other")(lambda: None)  # two commands: a group, as sizing's
        want = get_command(plain).commands[entry.name]  # type: ignore[attr-defined]
        built = get_command(app)
        if group_name:
            built = built.commands[group_name]  # type: ignore[attr-defined]
        got = built.commands[entry.name]  # type: ignore[attr-defined]
        assert type(got) is type(want)
        assert got.help == want.help and got.name == want.name
        assert [_param(p) for p in got.params] == [_param(p) for p in want.params]
        assert _own_help(got) == _own_help(want)


def _param(p: Any) -> tuple[Any, ...]:
    """What a parameter is, as Click reads it."""
    return (p.name, p.opts, p.secondary_opts, p.default, p.required, p.multiple, p.nargs)


def _own_help(command: Any) -> str:
    """A command's own ``--help`` text."""
    ctx = command.make_context(command.name, [], resilient_parsing=True)
    return str(command.get_help(ctx))


def test_a_mistyped_command_is_refused_with_the_nearest_names() -> None:
    got = runner.invoke(app, ["recomend"])
    assert got.exit_code == ExitStatus.USAGE
    assert "No such command 'recomend'" in got.output and "'recommend'" in got.output


# Runs sizing's command line in a fresh interpreter and prints the modules it imported
# (those of sizing.cli and the heavier ones a command may not need).
_LOADED = (
    "import sys, io, contextlib, sizing.cli\n"
    "sys.argv = ['sizing', *sys.argv[1:]]\n"
    "try:\n"
    "    with contextlib.redirect_stdout(io.StringIO()):\n"
    "        sizing.cli.main()\n"
    "except SystemExit as e:\n"
    "    assert not e.code, e.code\n"
    "print(' '.join(sorted(m for m in sys.modules if m.startswith(('sizing.cli.', "
    "'sizing.records', 'sizing.model', 'importlib.resources', 'pydantic', 'yaml', "
    "'tabulate')))))\n"
)


def _loaded(*argv: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", _LOADED, *argv], capture_output=True, text=True, check=True
    )
    return set(out.stdout.split())


def test_help_and_one_command_import_only_their_own_command_module() -> None:
    """``sizing --help`` imports no command's module, nor the records, pydantic, YAML or
    tabulate; ``sizing demand --help`` imports the demand command's module alone."""
    assert _loaded("--help") == {"sizing.cli.app", "sizing.cli.lazy"}
    assert _loaded("demand", "--help") == {
        "sizing.cli.app",
        "sizing.cli.lazy",
        "sizing.cli.demand_cmd",
    }


def test_demand_on_a_small_log_imports_only_what_reading_it_needs() -> None:
    """A small log's ``sizing demand`` is mostly start-up (issue 58): it imports no other
    command's module nor the options' vocabulary (sizing.model), importlib.resources,
    pydantic, YAML or tabulate."""
    log = Path(__file__).parent.parent / "data" / "logs" / "nasa_access_log_aug95_head.gz"
    assert _loaded("demand", str(log), "--json") == {
        "sizing.cli.app",
        "sizing.cli.lazy",
        "sizing.cli.demand_cmd",
    }
