"""``sizing store copy FROM TO``: a results database copied whole into a new one, on either
engine (a SQLite file into a team's PostgreSQL database, and back), losslessly.

Every row of ``runs``, ``points`` and ``samples`` is copied with its id, so that run and
point ids (which ``--resume``, ``--run`` and ``--compare`` name) are the same on both
sides and ``sizing results --json`` prints the same document from either. The copy is made
at the source's schema version, through the same migrations, and the destination is then
brought up to date as any older database is: a source written by an older sizing is read
as it was and upgraded the one way there is. The source is only read. The destination
must hold nothing yet (a file that does not exist or is empty, a database with no table):
merging two stores would renumber one of them. The copy is one transaction: a copy that
fails leaves no half-filled database (a new file is removed).
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from sizing.paths import Database, database
from sizing.store import Store
from sizing.store.connection import error_of
from sizing.store.engines import DB_ERRORS, Db, EngineError, connect, restart_ids, tables
from sizing.store.rows import StoreError
from sizing.store.schema import MIGRATIONS

# parents first: the references hold at every row; the leases too (who held a run, whose
# expiry makes `results` name it abandoned, reads the same from the copy)
TABLES = ("runs", "points", "samples", "leases")
BATCH = 5000


@dataclass(frozen=True)
class Copied:
    """What ``store copy`` copied: rows per table, and the destination's schema version."""

    runs: int
    points: int
    samples: int
    version: int


def copy_store(source: Path | str, destination: Path | str) -> Copied:
    """Copy the results database ``source`` into the new, empty ``destination``."""
    src, dst = database(source), database(destination)
    if str(src) == str(dst):
        raise StoreError(dst, "is the source itself: copy into a new database")
    if Store.exists(dst):
        raise StoreError(
            dst, "already holds a results database (or other tables): copy into a new one"
        )
    created = isinstance(dst, Path)  # it held nothing (above): removed if the copy fails
    counts: dict[str, int] = {}
    with Store.open_readonly(src) as reader:
        version = reader.schema_version
        try:
            if isinstance(dst, Path):
                dst.parent.mkdir(parents=True, exist_ok=True)
            out = connect(dst)
        except (OSError, sqlite3.Error, EngineError) as exc:
            raise _store_error(dst, exc) from None
        try:
            with reader._guard():
                have = tables(reader._db)
            _fill(reader._db, out, version, have, counts)
            out.commit()
        except BaseException as exc:
            with contextlib.suppress(*DB_ERRORS):
                out.rollback()
            out.close()
            if created and isinstance(dst, Path):
                for suffix in ("-journal", "-wal", "-shm", ""):
                    Path(str(dst) + suffix).unlink(missing_ok=True)
            if isinstance(exc, (OSError, sqlite3.Error, EngineError)):
                raise _store_error(dst, exc) from None
            raise
        out.close()
    with Store(dst) as store:  # brought up to date as any older database is
        final = store.schema_version
    return Copied(counts["runs"], counts["points"], counts["samples"], final)


def _fill(
    reader: Db, out: Db, version: int, have: dict[str, set[str]], counts: dict[str, int]
) -> None:
    """The source's schema (at its version) and rows, into ``out``, uncommitted."""
    # a database from before the schema was versioned (0) has the first schema's tables
    for migrate in MIGRATIONS[: max(version, 1)]:
        migrate(out)
    out.execute(f"PRAGMA user_version = {version}")
    made = tables(out)
    for table in TABLES:
        columns = sorted(have.get(table, set()) & made.get(table, set()))
        if not columns:  # a source from before the table (leases: schema 7)
            counts[table] = 0
            continue
        names = ", ".join(columns)
        marks = ", ".join("?" for _ in columns)
        rows = reader.execute(f"SELECT {names} FROM {table} ORDER BY id").fetchall()
        for at in range(0, len(rows), BATCH):
            out.executemany(
                f"INSERT INTO {table} ({names}) VALUES ({marks})",
                [tuple(r) for r in rows[at : at + BATCH]],
            )
        restart_ids(out, table)
        counts[table] = len(rows)


def _store_error(where: Database, exc: BaseException) -> StoreError:
    if isinstance(exc, OSError):
        return StoreError(where, f"cannot write the copy: {exc.strerror or exc}")
    assert isinstance(exc, Exception)
    return error_of(where, exc)
