"""The files a demand is read from: each a regular file, each counted once.

A path given twice (``a.log a.log``, ``a.log ./a.log``, a link) is one file (same device
and inode); the readers then leave out a file whose lines are another's (its gzip'd copy),
by the SHA-256 of what was read. Summed twice, one server's traffic would size a fleet for
twice the demand.
"""

from __future__ import annotations

import stat
from pathlib import Path

from sizing.errors import UsageError


def file_problem(path: Path) -> str:
    """Why ``path`` cannot be read as a log or counters file, in words ("" when it can)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    if stat.S_ISDIR(mode):
        return "is a directory: give the log files in it (e.g. DIR/access.log*)"
    if stat.S_ISFIFO(mode):
        return "is a FIFO (named pipe): give the file it reads from (sizing reads a file twice)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a log file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a log file"
    if not stat.S_ISREG(mode):
        return "is not a regular file"
    return ""


def distinct_files(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The paths that name distinct files (device and inode: ``a.log``, ``./a.log``, a
    link), each checked to be a regular file, and a note per path given again."""
    seen: dict[tuple[int, int], Path] = {}
    out: list[Path] = []
    notes: list[str] = []
    for path in paths:
        problem = file_problem(path)
        if problem:
            raise UsageError(f"{path}: {problem}")
        st = path.stat()
        ident = (st.st_dev, st.st_ino)
        if ident in seen:
            notes.append(f"{path}: the same file as {seen[ident]}, given twice: counted once")
            continue
        seen[ident] = path
        out.append(path)
    return out, notes
