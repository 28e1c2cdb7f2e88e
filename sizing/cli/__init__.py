"""The ``sizing`` command line: a thin Typer layer over the core.

Each command parses its options, calls one core function and renders the result. Errors
are :class:`sizing.errors.SizingError`; :func:`guarded` turns them into one red line on
stderr and the error's exit code, with a traceback only under ``--debug``.
"""

from __future__ import annotations

import sys

from sizing.cli import engine_cmds as _engine_cmds  # noqa: F401  (registers commands)
from sizing.cli import guide_cmd as _guide_cmd  # noqa: F401  (registers commands)
from sizing.cli import run_cmds as _run_cmds  # noqa: F401  (registers commands)
from sizing.cli._app import app, state

__all__ = ["app", "main", "state"]


def main() -> None:
    """Console-script entry point. ``--debug`` is accepted anywhere on the line."""
    argv = sys.argv[1:]
    if "--debug" in argv:
        argv = [a for a in argv if a != "--debug"]
        state.debug = True
    app(args=argv, prog_name="sizing")
