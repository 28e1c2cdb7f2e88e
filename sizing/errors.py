"""The one root exception of sizing and the process exit codes.

Every error a user can cause or meet is a :class:`SizingError` subclass carrying its exit
code. The CLI turns them, in one place, into one red line on stderr.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum


class ExitStatus(IntEnum):
    """Process exit codes of the ``sizing`` command (documented in ``--help``)."""

    OK = 0
    ERROR = 1
    USAGE = 2
    INPUT = 3
    HOST = 4
    TOOL = 5
    STORE = 6  # the results database cannot be written now: disk full, locked, vanished
    INTERRUPTED = 130


class SizingError(Exception):
    """Root of every error sizing reports to a user."""

    code: ExitStatus = ExitStatus.ERROR

    def __init__(self, message: str, *, code: ExitStatus | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


class UsageError(SizingError):
    """A bad option value: ``--cores 3``, an unknown profile, a zero demand."""

    code = ExitStatus.USAGE


class InputError(SizingError):
    """A malformed file: inventory, profile, cost catalog. Carries one line per problem."""

    code = ExitStatus.INPUT

    # The most problems the message lists: an inventory of 100,000 hosts with one mistake
    # each made 200,000 lines of stderr. ``problems`` keeps every one.
    SHOWN = 20

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        if len(problems) == 1:
            message = f"{path}: {problems[0]}"
        else:
            shown = problems[: self.SHOWN]
            message = f"{path}:\n" + "\n".join(f"  - {p}" for p in shown)
            if len(problems) > len(shown):
                rest = len(problems) - len(shown)
                message += f"\n  - and {rest:,} more problem{'s' if rest != 1 else ''} (the first "
                message += f"{len(shown)} are listed)"
        super().__init__(message)


class HostError(SizingError):
    """A host that cannot be reached or fails while it is being used."""

    code = ExitStatus.HOST

    def __init__(self, host: str, message: str) -> None:
        self.host = host
        super().__init__(f"{host}: {message}")


class ServerDied(SizingError):
    """The nginx under test stopped during a measurement: the sweep must stop too."""

    code = ExitStatus.HOST


class PreflightError(SizingError):
    """One or more pre-flight checks failed; carries one line per problem."""

    code = ExitStatus.HOST

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        head = f"pre-flight checks failed ({len(self.problems)}); nothing was run:"
        super().__init__(head + "\n" + "\n".join(f"  - {p}" for p in self.problems))


class ToolError(SizingError):
    """A tool the run needs (nginx, a load generator, ansible) is missing, cannot install or
    fails."""

    code = ExitStatus.TOOL


class Interrupted(SizingError):
    """The user pressed Ctrl-C; what was measured is kept."""

    code = ExitStatus.INTERRUPTED
