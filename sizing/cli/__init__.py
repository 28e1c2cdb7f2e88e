"""The ``sizing`` command line: a thin Typer layer over the core.

Each command parses its options, calls one core function and renders the result. Errors
are :class:`sizing.errors.SizingError`; :func:`guarded` turns them into one red line on
stderr and the error's exit code, with a traceback only under ``--debug``.

The commands are composed here, explicitly, in the order ``--help`` lists them.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from sizing.app.env import Environment, use
from sizing.cli.app import app, guarded
from sizing.cli.ceiling_cmd import probe_ceiling
from sizing.cli.demand_cmd import demand_cmd
from sizing.cli.doctor_cmd import doctor_cmd
from sizing.cli.engine_cmds import recommend_cmd, table_cmd
from sizing.cli.guide_cmd import guide_cmd
from sizing.cli.import_cmd import import_cmd
from sizing.cli.inventory_cmd import inventory_check
from sizing.cli.options import nearest
from sizing.cli.results_cmd import results
from sizing.cli.run_cmds import run
from sizing.cli.store_cmd import store_copy
from sizing.errors import ExitStatus

app.command("recommend")(guarded(recommend_cmd))
app.command("table")(guarded(table_cmd))
app.command("guide")(guarded(guide_cmd))
app.command("demand")(guarded(demand_cmd))
app.command("run")(guarded(run))
app.command("results")(guarded(results))
app.command("import")(guarded(import_cmd))
app.command("probe-ceiling")(guarded(probe_ceiling))
app.command("doctor")(guarded(doctor_cmd))

inventory_app = typer.Typer(help="Inspect and validate inventories.", no_args_is_help=True)
inventory_app.command("check")(guarded(inventory_check))
app.add_typer(inventory_app, name="inventory")

store_app = typer.Typer(help="Copy results databases.", no_args_is_help=True)
store_app.command("copy")(guarded(store_copy))
app.add_typer(store_app, name="store")

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point. ``--debug`` is accepted anywhere on the line."""
    argv = sys.argv[1:]
    env = use(Environment.from_process())
    if "--debug" in argv:
        argv = [a for a in argv if a != "--debug"]
        env.debug = True
    try:
        code = app(args=argv, prog_name="sizing", standalone_mode=False, obj=env)
    except Exception as exc:  # noqa: BLE001 - Click's own errors, by kind (see below)
        # Click's classes, matched by name: typer vendors its own Click from 0.2x on
        kinds = {c.__name__ for c in type(exc).__mro__}
        if "NoArgsIsHelpError" in kinds:  # `sizing inventory` alone: its help
            exc.show()  # type: ignore[attr-defined]
        elif "UsageError" in kinds and not env.debug:  # a bad option: one line
            typer.echo(f"error: {usage_line(exc)}", err=True)
        elif "Abort" in kinds:  # Ctrl-C at a prompt
            sys.exit(ExitStatus.INTERRUPTED)
        elif "ClickException" in kinds and not env.debug:
            exc.show()  # type: ignore[attr-defined]
        else:
            raise
        sys.exit(int(getattr(exc, "exit_code", ExitStatus.USAGE)))
    sys.exit(code if isinstance(code, int) else 0)


def usage_line(exc: Any) -> str:
    """Click's usage error as one line naming the option: ``--duration: inf is not in the
    range 1<=x<=3600 (sizing run --help)``; a mistyped option says which ones it is near:
    ``No such option: --rsp; did you mean --rps? (sizing recommend --help)``."""
    hint = getattr(exc, "param_hint", None)
    hint = hint if isinstance(hint, str) else ""
    param, ctx = getattr(exc, "param", None), getattr(exc, "ctx", None)
    if not hint and param is not None:
        hint = param.get_error_hint(ctx) if ctx is not None else str(param.name or "")
    text = " ".join(str(getattr(exc, "message", exc)).split())
    # a mistyped option: Click lists up to three neighbours, we name the nearest
    near = nearest(str(getattr(exc, "option_name", "")), getattr(exc, "possibilities", None) or ())
    if near:
        text = text.rstrip(".") + f"; did you mean {near}?"
    where = f" ({ctx.command_path} --help)" if ctx is not None else ""
    return (f"{hint.replace(chr(39), '')}: {text}" if hint else text) + where
