"""The environment a command runs in, in the manner of httpie's ``Environment``: its
streams, whether they are terminals, colour, the results database and ``--debug``. The
root command makes one (:meth:`Environment.from_process`) and every command receives it;
tests make their own."""

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

    stdin: TextIO
    stdout: TextIO
    stderr: TextIO
    stdout_isatty: bool = False
    stderr_isatty: bool = False
    colour: bool = False  # colour on stderr: a terminal, and NO_COLOR not set
    db: Path | None = None  # $SIZING_DB or the user data directory's, when asked for
    debug: bool = False  # --debug: tracebacks for errors

    @classmethod
    def from_process(cls) -> Environment:
        """This process's streams and settings."""
        err_tty = sys.stderr.isatty()
        return cls(
            stdin=sys.stdin,
            stdout=sys.stdout,
            stderr=sys.stderr,
            stdout_isatty=sys.stdout.isatty(),
            stderr_isatty=err_tty,
            colour=err_tty and "NO_COLOR" not in os.environ,
        )

    def database(self, given: Path | None) -> Path:
        """The results database: ``--db`` when given, else the environment's default."""
        return given or self.db or paths.default_db()


_CURRENT: ContextVar[Environment | None] = ContextVar("sizing_environment", default=None)


def use(env: Environment) -> Environment:
    """Make ``env`` the environment of the command being run (the root command's call)."""
    _CURRENT.set(env)
    return env


def current() -> Environment:
    """The running command's environment (this process's, when none was set)."""
    env = _CURRENT.get()
    return env if env is not None else use(Environment.from_process())
