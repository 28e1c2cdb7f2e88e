"""The ``sizing`` command line: a thin Typer layer over the core.

Each command parses its options, calls one core function and renders the result. Errors
are :class:`sizing.errors.SizingError`; :func:`guarded` turns them into one red line on
stderr and the error's exit code, with a traceback only under ``--debug``.

The commands are composed here, explicitly, in the order ``--help`` lists them.
"""

from __future__ import annotations

import sys

import typer

from sizing.cli.app import app, guarded, state
from sizing.cli.ceiling_cmd import probe_ceiling
from sizing.cli.engine_cmds import recommend_cmd, table_cmd
from sizing.cli.guide_cmd import guide_cmd
from sizing.cli.import_cmd import import_cmd
from sizing.cli.inventory_cmd import inventory_check
from sizing.cli.results_cmd import results
from sizing.cli.run_cmds import run

app.command("recommend")(guarded(recommend_cmd))
app.command("table")(guarded(table_cmd))
app.command("guide")(guarded(guide_cmd))
app.command("run")(guarded(run))
app.command("results")(guarded(results))
app.command("import")(guarded(import_cmd))
app.command("probe-ceiling")(guarded(probe_ceiling))

inventory_app = typer.Typer(help="Inspect and validate inventories.", no_args_is_help=True)
inventory_app.command("check")(guarded(inventory_check))
app.add_typer(inventory_app, name="inventory")

__all__ = ["app", "main", "state"]


def main() -> None:
    """Console-script entry point. ``--debug`` is accepted anywhere on the line."""
    argv = sys.argv[1:]
    if "--debug" in argv:
        argv = [a for a in argv if a != "--debug"]
        state.debug = True
    app(args=argv, prog_name="sizing")
