"""The ``sizing`` command line: a thin Typer layer over the core.

Each command parses its options, calls one core function and renders the result. Errors
are :class:`sizing.errors.SizingError`; :func:`guarded` turns them into one red line on
stderr and the error's exit code, with a traceback only under ``--debug``.

The commands are composed here, explicitly, in the order ``--help`` lists them; each is
registered by name (:mod:`sizing.cli.lazy`): its module is imported only when it runs, so
that ``sizing --help`` and one command start without every command's imports.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from sizing.app.env import Environment, use
from sizing.cli.app import app, guarded
from sizing.cli.lazy import Lazy, register
from sizing.errors import ExitStatus

# name, module of sizing.cli, function, and the first sentence of its docstring: what
# `sizing --help` lists (tests/unit/test_lazy_commands.py checks each against the docstring)
register(
    app,
    Lazy(
        "recommend",
        "engine_cmds",
        "recommend_cmd",
        "The cheapest configuration that carries a demand with headroom.",
    ),
    Lazy(
        "table",
        "engine_cmds",
        "table_cmd",
        "The cost-per-throughput table, in the shape of the NGINX sizing guide's table.",
    ),
    Lazy(
        "guide",
        "guide_cmd",
        "guide_cmd",
        "The printable sizing guide: summary, sizing table, charts, methodology, validity.",
    ),
    Lazy(
        "demand",
        "demand_cmd",
        "demand_cmd",
        "The peak demand of your own traffic, from NGINX access logs or counters.",
    ),
    Lazy(
        "run",
        "run_cmds",
        "run",
        "Measure NGINX per core count and HT mode on the inventory's servers, and store it.",
    ),
    Lazy(
        "results",
        "results_cmd",
        "results",
        "List stored runs and their points, compare runs, export CSV, or list the bases.",
    ),
    Lazy(
        "import",
        "import_cmd",
        "import_cmd",
        "Import points a run kept in a recovery file into their run.",
    ),
    Lazy(
        "probe-ceiling",
        "ceiling_cmd",
        "probe_ceiling",
        "Measure the crypto ceiling of the inventory's servers (openssl speed of the "
        "certificate's signing operation, pinned; about 2 s per measurement, no nginx), and "
        "print it with the catalog entry that lets `recommend --cpu MODEL --allow-translation` "
        "translate a measured TLS basis to that CPU.",
    ),
    Lazy(
        "doctor",
        "doctor_cmd",
        "doctor_cmd",
        "Check each external program and capability sizing calls (nginx, the load "
        "generators, openssl, taskset, numactl, the guide's Pango and fonts; with --dev podman "
        "and its init, runc, libvirtd, QEMU, vcsim, poppler): one line each, its version or "
        "what installs it.",
    ),
    wrap=guarded,
)

inventory_app = typer.Typer(help="Inspect and validate inventories.", no_args_is_help=True)
register(
    inventory_app,
    Lazy(
        "check",
        "inventory_cmd",
        "inventory_check",
        "Validate an inventory offline and print what sizing understood of it.",
    ),
    wrap=guarded,
)
app.add_typer(inventory_app, name="inventory")

store_app = typer.Typer(help="Copy results databases.", no_args_is_help=True)
register(
    store_app,
    Lazy(
        "copy",
        "store_cmd",
        "store_copy",
        "Copy a results database into a new one, losslessly: every run, point and sample "
        "with its id, so that `sizing results --json` prints the same from both.",
    ),
    wrap=guarded,
)
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
    from sizing.cli.options import nearest  # deferred: the options' vocabulary (sizing.model)

    near = nearest(str(getattr(exc, "option_name", "")), getattr(exc, "possibilities", None) or ())
    if near:
        text = text.rstrip(".") + f"; did you mean {near}?"
    where = f" ({ctx.command_path} --help)" if ctx is not None else ""
    return (f"{hint.replace(chr(39), '')}: {text}" if hint else text) + where
