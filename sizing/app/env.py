"""The environment a command runs in, in the manner of httpie's ``Environment``: its
output stream, whether its streams are terminals, colour and ``--debug``; the results
database it uses (:meth:`Environment.database`). The root command makes one
(:meth:`Environment.from_process`) and every command reads it (:func:`current`); tests make
their own."""

from __future__ import annotations

import os
import sys
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from sizing import paths

__all__ = ["Environment", "current", "use"]


@dataclass
class Environment:
    """Where a command reads and writes, and how."""

    stdout: TextIO  # the terminal's width is read from it
    stdout_isatty: bool = False
    stderr_isatty: bool = False  # progress bars on a terminal, one line per step in a log
    colour: bool = False  # colour on stderr: a terminal, and NO_COLOR not set
    debug: bool = False  # --debug: tracebacks for errors

    @classmethod
    def from_process(cls) -> Environment:
        """This process's streams and settings."""
        err_tty = sys.stderr.isatty()
        return cls(
            stdout=sys.stdout,
            stdout_isatty=sys.stdout.isatty(),
            stderr_isatty=err_tty,
            colour=err_tty and "NO_COLOR" not in os.environ,
        )

    def database(self, given: str | Path | None) -> paths.Database:
        """The results database: ``--db`` when given, else the default
        (:func:`sizing.paths.results_db`)."""
        return paths.results_db(given)


_CURRENT: ContextVar[Environment | None] = ContextVar("sizing_environment", default=None)


def use(env: Environment) -> Environment:
    """Make ``env`` the environment of the command being run (the root command's call)."""
    _CURRENT.set(env)
    return env


def current() -> Environment:
    """The running command's environment (this process's, when none was set)."""
    env = _CURRENT.get()
    return env if env is not None else use(Environment.from_process())
