"""The files a demand is read from: each a regular file, each counted once.

A path given twice (``a.log a.log``, ``a.log ./a.log``, a link) is one file (same device
and inode); the readers then leave out a file whose lines are another's (its gzip'd copy),
by the SHA-256 of what was read. Summed twice, one server's traffic would size a fleet for
twice the demand.
"""

from __future__ import annotations

from pathlib import Path

from sizing.demand.reader import check_input, check_kind


def distinct_files(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The paths that name distinct files (device and inode: ``a.log``, ``./a.log``, a
    link), each checked to be a regular file, and a note per path given again."""
    seen: dict[tuple[int, int], Path] = {}
    out: list[Path] = []
    notes: list[str] = []
    for path in paths:
        check_input(path)  # a regular file, or one line naming what it is
        check_kind(path)  # not bzip2, xz, zstd, zip or UTF-16: named, not "binary data"
        st = path.stat()
        ident = (st.st_dev, st.st_ino)
        if ident in seen:
            notes.append(f"{path}: the same file as {seen[ident]}, given twice: counted once")
            continue
        seen[ident] = path
        out.append(path)
    return out, notes
