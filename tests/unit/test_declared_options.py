"""An option is declared once, on its field (issue 60): every field of ``SizingArgs``
(recommend, table, guide) and ``RunArgs`` (run) is an option ``--help`` lists, typed on the
real command line it reaches the command as that field's value, and the values a command
hands on as given reach the request's field of the same name.

The commands run for real up to the point where their parsed options are read (the request
built from them), replaced here by a recorder: the test is about the parsing, not the
sizing or the measuring behind it."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from sizing.cli import app, declared, engine_cmds, run_cmds
from sizing.cli.option_set import FIGURES, OPTIONS, REQUEST, RUNS, WORKLOAD, SizingArgs
from sizing.cli.run_args import RunArgs
from sizing.cli.sizing_opts import inputs_of, sizing_request
from sizing.plan.settings import MeasureSettings
from sizing.sizing_request import Inputs, SizingRequest
from sizing.sweep.options import RunOptions

ROOT = Path(__file__).resolve().parents[2]
# the module: sizing.cli exports its command function under the same name
guide_cmd = importlib.import_module("sizing.cli.guide_cmd")


def _command(name: str) -> Any:
    return typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]


def _options(name: str) -> dict[str, Any]:
    """The command's options by name (Typer vendors its own Click: matched by kind)."""
    return {p.name: p for p in _command(name).params if hasattr(p, "is_flag")}


def _typed(param: Any) -> tuple[list[str], Any]:
    """A command line giving ``param`` a value other than its default, and the value the
    field must then hold (by the option's click type, so no figure is written here)."""
    flag = param.opts[0]
    if param.is_flag:
        return [flag], True
    kind = type(param.type).__name__  # IntParamType, IntRange, FloatRange, Path ...
    low = getattr(param.type, "min", None)
    if kind.startswith("Int"):
        value: Any = (low or 0) + 2
    elif kind.startswith("Float"):
        value = float((low or 0) + 2)
    elif kind.endswith("Path"):
        value = Path(f"some/{param.name}.yml")
    else:
        value = f"x-{param.name}"
    if param.multiple:
        more = type(value)(f"{value}-2")
        return [flag, str(value), flag, str(more)], [value, more]
    return [flag, str(value)], value


def _every_option(command: str, cls: type[Any]) -> tuple[list[str], dict[str, Any]]:
    """The command line setting each option of ``cls`` the command takes, and the values."""
    argv: list[str] = []
    expected: dict[str, Any] = {}
    names = {f.name for f in fields(cls)}
    for param in _options(command).values():
        if param.name in names:
            typed, value = _typed(param)
            argv += typed
            expected[param.name] = value
    return argv, expected


SEEN = 42  # the recorder's exit code: the parsed options were seen


def _record(into: list[Any]) -> Any:
    def seen(args: Any, *_: Any, **__: Any) -> Any:
        into.append(args)
        raise typer.Exit(SEEN)

    return seen


@pytest.mark.parametrize(
    ("command", "cls", "reader"),
    [
        ("recommend", SizingArgs, (engine_cmds, "request_from")),
        ("table", SizingArgs, (engine_cmds, "figures_of")),
        ("guide", SizingArgs, (guide_cmd, "request_from")),
        ("run", RunArgs, (run_cmds, "_options")),
    ],
)
def test_every_typed_option_reaches_the_command_as_its_field(
    command: str, cls: type[Any], reader: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    got: list[Any] = []
    monkeypatch.setattr(*reader, _record(got))
    monkeypatch.setattr(engine_cmds, "load_traffic", lambda *a: None)  # --demand: not read
    monkeypatch.setattr(guide_cmd, "load_traffic", lambda *a: None)
    argv, expected = _every_option(command, cls)
    assert expected, command
    result = CliRunner().invoke(app, [command, *argv])
    assert result.exit_code == SEEN, result.output
    [args] = got
    assert isinstance(args, cls)
    for name, value in expected.items():
        assert getattr(args, name) == value, (command, name)
    # every option the command takes was typed: none is left at its default
    assert all(
        getattr(args, n) != f.default for n, f in cls.__dataclass_fields__.items() if n in expected
    )


def test_every_field_is_an_option_help_lists() -> None:
    """recommend and guide take every option of SizingArgs but --run (guide's alone), run
    every option of RunArgs; --help shows each, with its help text."""
    for command, cls, not_taken in (
        ("recommend", SizingArgs, set(RUNS)),
        ("guide", SizingArgs, set()),
        ("run", RunArgs, set()),
    ):
        params = _options(command)
        out = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"}).output
        text = " ".join(out.split())
        for f in fields(cls):
            if f.name in not_taken:
                assert f.name not in params, (command, f.name)
                continue
            param = params[f.name]
            assert param.opts[0] in out, (command, f.name)
            assert param.help and " ".join(param.help.split())[:40] in text, (command, f.name)
        order = [p.name for p in _command(command).params if p.name in params]
        taken = [f.name for f in fields(cls) if f.name not in not_taken]
        assert [n for n in order if n in taken] == taken  # in the fields' order


def test_the_groups_and_options_come_from_the_fields() -> None:
    assert list(OPTIONS) == [f.name for f in fields(SizingArgs)]
    assert sorted(FIGURES + REQUEST + RUNS + WORKLOAD) == sorted(OPTIONS)
    assert len(set(FIGURES + REQUEST + RUNS + WORKLOAD)) == len(OPTIONS)


@dataclass(frozen=True)
class Forgot:
    kept: int = declared.option(1, "--kept", help="Declared.")
    forgotten: int = field(default=2)


@dataclass(frozen=True)
class Args:
    """A new option set of two fields: nothing else declares them."""

    colour: str = declared.option("red", "--colour", help="The colour.")
    loud: bool = declared.option(False, "--loud", help="Say it loud.")


def test_a_field_declared_without_its_option_is_refused() -> None:
    with pytest.raises(TypeError, match=r"Forgot\.forgotten: declare it with option"):
        declared.parameters(Forgot)
    with pytest.raises(TypeError, match="not an Annotated typer.Option"):
        declared.shared(None, int)


def test_a_command_gets_a_new_field_without_another_line() -> None:
    """The mechanism itself: a set's new field is an option of the command taking it."""

    got: list[Args] = []
    one = typer.Typer()

    @one.command()
    @declared.takes(Args)
    def cmd(args: Args, extra: int = 0) -> None:
        got.append(args)

    assert CliRunner().invoke(one, ["--colour", "blue", "--loud"]).exit_code == 0
    assert got == [Args(colour="blue", loud=True)]
    assert "The colour." in CliRunner().invoke(one, ["--help"]).output


def _parameters(fn: Any) -> set[str]:
    import inspect

    return {n for n, p in inspect.signature(fn).parameters.items() if p.kind is not p.VAR_KEYWORD}


def test_each_sizing_option_is_read_or_goes_to_the_request_by_its_name() -> None:
    """An option of the question goes to sizing_request: read there (a parameter) or on to
    the SizingRequest field of its name; one of the figures to inputs_of or Inputs."""
    request = _parameters(sizing_request) | {f.name for f in fields(SizingRequest)}
    assert not {n for n in REQUEST + WORKLOAD if n != "demand"} - request
    figures = _parameters(inputs_of) | {f.name for f in fields(Inputs)}
    assert not set(FIGURES) - figures


def test_the_run_options_handed_on_as_given_reach_run_options(tmp_path: Path) -> None:
    """Every RunArgs field is read by run (named in run_cmds.py) or reaches the RunOptions
    or MeasureSettings field of its name, with the value typed."""
    text = (ROOT / "sizing" / "cli" / "run_cmds.py").read_text()
    targets = {f.name for f in fields(RunOptions)} | {f.name for f in fields(MeasureSettings)}
    for f in fields(RunArgs):
        assert f.name in targets or re.search(rf"\ba\.{f.name}\b|args\.{f.name}\b", text), f.name
    given = RunArgs(
        db=str(tmp_path / "r.sqlite"),
        unpaired=True,
        keep_running=True,
        skip_preflight=True,
        insecure=True,
        allow_host_reboot=True,
        probe=True,
        limit="web*",
        sample=3,
        keep_artifacts=tmp_path,
        repeat=4,
        max_repeat=7,
        connections=9,
        profile="rps",
    )
    opts = run_cmds._options(given, given.profile)
    defaults = RunArgs()
    changed = [
        f.name for f in fields(RunArgs) if getattr(given, f.name) != getattr(defaults, f.name)
    ]
    assert len(changed) == 14
    for name in set(changed) - {"db", "profile"}:  # read by run: a Database, the profiles
        where = opts.settings if name in {f.name for f in fields(MeasureSettings)} else opts
        assert getattr(where, name) == getattr(given, name), name


def test_no_run_option_is_declared_twice() -> None:
    """--unpaired (any run option) is written once in sizing/cli: on its field."""
    cli = "".join(p.read_text() for p in sorted((ROOT / "sizing" / "cli").glob("*.py")))
    for flag in ("--unpaired", "--keep-running", "--sample", "--rps", "--p95", "--db"):
        # a declaration: the flag alone on its line, as ruff format writes option(...)
        assert len(re.findall(rf'^\s*"{flag}",$', cli, re.M)) == 1, flag
    run_cmds_text = (ROOT / "sizing" / "cli" / "run_cmds.py").read_text()
    assert "Annotated[" not in run_cmds_text
