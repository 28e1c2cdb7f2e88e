"""Writing an output file without harming anything: never onto an input, never half-way.

Every file sizing writes for a user (a demand file, a guide) goes through :func:`write_atomic`:
the bytes go to a temporary file in the same directory, are flushed to disk, and the
temporary file is renamed over the target, so a reader sees the old file or the new one,
never a part; a full disk or a vanished directory leaves the target as it was and no
temporary file behind. :func:`refuse_inputs` refuses an output that is one of the command's
inputs, by inode and not only by name (``access.log`` and ``./logs/../access.log``, a hard
link, a symbolic link), before any work is done.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from sizing.errors import SizingError, UsageError


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def refuse_inputs(out: Path, inputs: Iterable[Path], option: str = "--out") -> None:
    """A UsageError when ``out`` is one of ``inputs`` (same file: device and inode)."""
    target = _identity(out)
    if target is None:
        return
    for src in inputs:
        if _identity(src) == target:
            raise UsageError(
                f"{option} {out}: is the input {src}: it would be overwritten; write elsewhere"
            )


def check_target(out: Path, what: str) -> None:
    """One clear line, before any work, when ``out`` cannot be written as a file."""
    parent = out.parent if str(out.parent) else Path(".")
    try:
        if out.is_dir():
            raise SizingError(f"{out}: cannot write the {what}: is a directory")
        if out.exists() and not stat.S_ISREG(out.stat().st_mode):
            raise SizingError(f"{out}: cannot write the {what}: not a regular file")
        if not parent.is_dir():
            raise SizingError(f"{out}: cannot write the {what}: no directory {parent}")
        if not os.access(parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
            ro = bool(os.statvfs(parent).f_flag & os.ST_RDONLY)
            why = "a read-only file system" if ro else "permission denied"
            raise SizingError(f"{out}: cannot write the {what}: {why}")
    except OSError as exc:  # a parent this user may not even look into
        raise SizingError(f"{out}: cannot write the {what}: {exc.strerror or exc}") from exc


def write_atomic(out: Path, data: bytes | str, what: str) -> None:
    """Write ``data`` to ``out`` all at once (temporary file, fsync, rename), or raise one
    SizingError naming the file and the reason, leaving ``out`` as it was."""
    check_target(out, what)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    parent = out.parent if str(out.parent) else Path(".")
    mode = 0o644
    with contextlib.suppress(OSError):
        mode = stat.S_IMODE(out.stat().st_mode)  # an existing file keeps its mode
    tmp = ""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent)
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, out)
        tmp = ""
    except OSError as exc:
        raise SizingError(f"{out}: cannot write the {what}: {exc.strerror or exc}") from None
    finally:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
