"""One line, and its exit status, for what an engine says went wrong: SQLite's errors by
their names, a server's by the kind :mod:`sizing.store.engines` gave them."""

from __future__ import annotations

from pathlib import Path

from sizing.errors import ExitStatus
from sizing.paths import Database
from sizing.store.engines import (
    AUTH,
    BUSY,
    DENIED,
    FULL,
    LOST,
    NO_DATABASE,
    UNREACHABLE,
    EngineError,
)


def explain(exc: Exception, timeout: float, path: Database | None = None) -> tuple[str, ExitStatus]:
    """One line for an engine's error, and its exit status: :attr:`ExitStatus.STORE` when
    the machine, not the file's content, is in the way (locked, disk full, the file gone or
    read-only, the server refusing or gone), :attr:`ExitStatus.INPUT` when the file is not a
    usable database."""
    if isinstance(exc, EngineError):
        return explain_server(exc, timeout)
    name = getattr(exc, "sqlite_errorname", "") or ""
    if is_busy(exc):
        return (
            f"the results database is locked by another process (waited {seconds_text(timeout)}); "
            "try again when it has finished"
        ), ExitStatus.STORE
    if name.startswith("SQLITE_FULL"):
        return "the disk is full: cannot write the results database", ExitStatus.STORE
    if name.startswith("SQLITE_NOTADB"):
        return "not an SQLite database (damaged, or a file of another kind)", ExitStatus.INPUT
    if name.startswith("SQLITE_CORRUPT"):
        return f"damaged results database ({exc})", ExitStatus.INPUT
    if isinstance(path, Path) and not path.exists():
        return (
            "the results database was deleted or moved while sizing used it",
            ExitStatus.STORE,
        )
    if name.startswith(("SQLITE_READONLY", "SQLITE_IOERR", "SQLITE_CANTOPEN")):
        return f"cannot write the results database ({exc})", ExitStatus.STORE
    return f"results database error: {exc}", ExitStatus.INPUT


def explain_server(exc: EngineError, timeout: float) -> tuple[str, ExitStatus]:
    """One line for a server's error (libpq's or the server's words after sizing's)."""
    why = {
        AUTH: "the server refused the login (wrong or missing password, or no such "
        "role; the password comes from PGPASSWORD, ~/.pgpass or a service file)",
        UNREACHABLE: "cannot reach the database server",
        NO_DATABASE: "no such database on the server (create it first: docs/team-store.md)",
        DENIED: "this role may not write the results database (a read-only role reads only)",
        LOST: "the connection to the database server was lost",
        FULL: "the database server's disk is full",
    }.get(exc.kind)
    if exc.kind == BUSY:
        return (
            f"the results database is locked by another process (waited {seconds_text(timeout)}); "
            "try again when it has finished"
        ), ExitStatus.STORE
    if why is None:
        return f"results database error: {exc}", ExitStatus.INPUT
    return f"{why}: {exc}", ExitStatus.STORE


def is_busy(exc: Exception) -> bool:
    """Whether another connection holds the lock (worth waiting for)."""
    if isinstance(exc, EngineError):
        return exc.kind == BUSY
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc)


def seconds_text(s: float) -> str:
    if s < 10:
        return f"{s:.1f}".rstrip("0").rstrip(".") + " s"
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"
