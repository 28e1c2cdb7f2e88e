"""The two engines behind the store, and the one place their dialects differ.

A results database is a file (SQLite, through :mod:`sqlite3`) or a database on a
PostgreSQL server (a team's, through psycopg 3; docs/team-store.md). The store's queries,
its schema and its one migration sequence are written once, in SQLite's dialect;
:class:`PgConnection` answers them the way :class:`sqlite3.Connection` does:

- ``?`` placeholders become psycopg's, and an ``INSERT`` returns its row's ``id``
  (``lastrowid``);
- the schema's ``INTEGER PRIMARY KEY AUTOINCREMENT`` is an identity column, ``REAL`` a
  ``DOUBLE PRECISION``;
- ``PRAGMA user_version`` and ``PRAGMA application_id`` (the schema's version and sizing's
  mark) live in a one-row table, ``sizing_schema``; the PRAGMAs that tune SQLite's files
  (journal, checkpoints, busy timeout) mean nothing on a server and do nothing;
- ``BEGIN IMMEDIATE`` (one writer migrates, the others wait) takes a transaction-scoped
  advisory lock;
- a NaN is stored as NULL, as SQLite stores it, so that both engines read the same figures;
- a transaction begins at the first write, as :mod:`sqlite3` begins one, so that a reader
  never holds a snapshot open;
- psycopg's errors become one :class:`EngineError` whose ``kind`` says what the store tells
  the user: a wrong password, an unreachable server and a missing database are each their
  own line.

psycopg is imported only when a server's database is opened: ``sizing --help`` and a
SQLite store never load it.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, Self
from urllib.parse import urlsplit

from sizing.paths import DbUrl, data_dir, database

# The kinds of EngineError, and the ones a write waits out (another writer holds a lock).
BUSY = "busy"
AUTH = "auth"  # the server refused who we are: a wrong or missing password, no such role
UNREACHABLE = "unreachable"  # no server answered at that address
NO_DATABASE = "no-database"
DENIED = "denied"  # the role may not do this (a read-only role's write)
LOST = "lost"  # the connection broke while in use (the server went away)
FULL = "full"
OTHER = "other"


class EngineError(Exception):
    """A database server's error, as the store reports it: ``kind`` is one of the module's
    kinds; the message is the server's or libpq's, which never holds a password."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


# What the store catches around a statement, whichever engine runs it.
DB_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, EngineError)


class Cursor(Protocol):
    """What the store reads of a cursor."""

    @property
    def lastrowid(self) -> int | None: ...

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Db(Protocol):
    """What the store uses of a connection: :class:`sqlite3.Connection` or
    :class:`PgConnection`."""

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Any: ...

    def executemany(self, sql: str, parameters: Any, /) -> Any: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: Any) -> Any: ...


def beside(where: Path | str, suffix: str) -> Path:
    """A local file that belongs with a results database (its recovery file, its cache):
    beside the file; for a server's database, in the user's data directory under a name
    made of the server's address (``servers/<host>-<dbname>-<hash><suffix>``), one per
    address, since no file can sit beside a server's database."""
    at = database(where)
    if not isinstance(at, DbUrl):
        return at.with_name(at.name + suffix)
    parts = urlsplit(str(at))
    label = "-".join(x for x in (parts.hostname or "local", parts.path.strip("/")) if x)
    label = re.sub(r"[^A-Za-z0-9._-]+", "_", label)[:60]
    digest = hashlib.sha256(str(at).encode()).hexdigest()[:12]
    folder = data_dir() / "servers"
    with contextlib.suppress(OSError):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder / f"{label}-{digest}{suffix}"


def now(db: Db) -> float:
    """The database's clock (seconds since the epoch): a server's, which every machine of a
    team shares (their own clocks may differ); a file's, this machine's."""
    if isinstance(db, PgConnection):
        row = db.execute("SELECT extract(epoch FROM clock_timestamp())::float8").fetchone()
        assert row is not None
        return float(row[0])
    return time.time()


def tables(db: Db) -> dict[str, set[str]]:
    """The database's own tables and their columns (not the engine's bookkeeping)."""
    if isinstance(db, PgConnection):
        rows = db.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name <> ?",
            (SCHEMA_TABLE,),
        ).fetchall()
        out: dict[str, set[str]] = {}
        for r in rows:
            out.setdefault(str(r[0]), set()).add(str(r[1]))
        return out
    return {
        str(r[0]): {str(c[1]) for c in db.execute(f'PRAGMA table_info("{r[0]}")')}
        for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    }


class Row(tuple[Any, ...]):
    """A row read by name or by position, as :class:`sqlite3.Row` is."""

    _index: dict[str, int]

    def __new__(cls, values: Sequence[Any], index: dict[str, int]) -> Self:
        row = super().__new__(cls, values)
        row._index = index
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)


class _Cursor:
    """A statement's rows, fetched at once (the store's reads are whole tables)."""

    def __init__(self, rows: list[Row], lastrowid: int | None = None, rowcount: int = -1) -> None:
        self._rows = rows
        self._at = 0
        self.lastrowid = lastrowid
        self.rowcount = rowcount

    def fetchone(self) -> Row | None:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchall(self) -> list[Row]:
        rows, self._at = self._rows[self._at :], len(self._rows)
        return rows

    def __iter__(self) -> Iterator[Row]:
        return iter(self.fetchall())


SCHEMA_TABLE = "sizing_schema"
# the advisory lock a migration holds (its transaction's): sizing's mark, as an id
_MIGRATION_LOCK = 0x53495A67

_PRAGMA = re.compile(r"\s*PRAGMA\s+(\w+)\s*(?:=\s*(\S+)|\((.*)\))?\s*$", re.I)
_WRITES = re.compile(r"\s*(INSERT|UPDATE|DELETE|CREATE|ALTER|DROP)\b", re.I)
_INSERT = re.compile(r"\s*INSERT\s+INTO\b", re.I)
_DDL = (
    (
        re.compile(r"INTEGER PRIMARY KEY AUTOINCREMENT", re.I),
        "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    ),
    (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"),
)


def _sql(sql: str, parameters: Sequence[Any]) -> str:
    """SQLite's statement in psycopg's terms: ``?`` placeholders, a literal ``%`` doubled."""
    if _WRITES.match(sql) and re.match(r"\s*(CREATE|ALTER)\b", sql, re.I):
        for pattern, repl in _DDL:
            sql = pattern.sub(repl, sql)
    if not parameters:
        return sql
    return sql.replace("%", "%%").replace("?", "%s")


def _value(v: Any) -> Any:
    # SQLite keeps a NaN as NULL: so does the server, and both read the same figures
    return None if isinstance(v, float) and math.isnan(v) else v


def _kind(exc: Exception) -> str:
    """What a psycopg error means to the user: its SQLSTATE where the server gave one;
    libpq's words where it failed before any (a login refused, no such database, no
    server: psycopg's OperationalError without a state)."""
    state = str(getattr(exc, "sqlstate", "") or "")
    text = str(exc) if not state else ""
    if state in ("40001", "40P01", "55P03", "55006"):
        return BUSY
    if state.startswith("28") or "password" in text or "no pg_hba.conf entry" in text:
        return AUTH
    if state == "3D000" or ("database" in text and "does not exist" in text):
        return NO_DATABASE
    if state in ("42501", "25006"):
        return DENIED
    if state == "53100":
        return FULL
    if state.startswith(("08", "57P")) or (not state and type(exc).__name__ == "OperationalError"):
        return LOST
    return OTHER


class PgConnection:
    """A PostgreSQL database, answering the store as :class:`sqlite3.Connection` would
    (see the module's notes). ``readonly`` makes every transaction read-only: the server
    itself refuses a write."""

    def __init__(self, url: DbUrl, *, readonly: bool, timeout: float) -> None:
        try:
            import psycopg  # lazy: only a server's database needs it
        except ImportError as exc:  # pragma: no cover - a dependency of sizing
            raise EngineError(f"psycopg is not installed ({exc})", OTHER) from exc
        self._psycopg = psycopg
        self.url = url
        self.readonly = readonly
        self.timeout = timeout
        self._tx = False
        self._conn: Any = None
        self._connect()

    def _connect(self) -> None:
        psycopg = self._psycopg
        try:
            # autocommit: a read holds no transaction open; a write begins one (execute)
            conn = psycopg.connect(
                str(self.url),
                autocommit=True,
                connect_timeout=max(2, int(min(self.timeout, 10))),
                application_name="sizing",
            )
        except psycopg.Error as exc:
            kind = _kind(exc)
            raise EngineError(_first_line(exc), UNREACHABLE if kind == LOST else kind) from None
        try:
            with conn.cursor() as cur:
                cur.execute(f"SET lock_timeout = {max(1, int(self.timeout * 1000))}")
                if self.readonly:
                    cur.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        except psycopg.Error as exc:
            conn.close()
            raise EngineError(_first_line(exc), _kind(exc)) from None
        self._conn = conn
        self._tx = False

    # -- sqlite3.Connection's surface -------------------------------------------------

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> _Cursor:
        pragma = _PRAGMA.match(sql)
        if pragma:
            return self._pragma(pragma.group(1).lower(), pragma.group(2))
        if re.match(r"\s*BEGIN\s+IMMEDIATE\b", sql, re.I):
            self._begin()
            return self._run(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})", ())
        if _WRITES.match(sql):
            self._begin()
            if _INSERT.match(sql) and "RETURNING" not in sql.upper():
                cur = self._run(sql + " RETURNING id", parameters)
                row = cur.fetchone()
                cur.lastrowid = None if row is None else int(row[0])
                return cur
        return self._run(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> _Cursor:
        rows = [tuple(_value(v) for v in p) for p in parameters]
        if not rows:
            return _Cursor([])
        self._begin()
        try:
            with self._conn.cursor() as cur:
                cur.executemany(_sql(sql, rows[0]), rows)
        except self._psycopg.Error as exc:
            raise self._error(exc) from None
        return _Cursor([])

    def commit(self) -> None:
        if self._tx:
            self._tx = False
            self._raw("COMMIT")

    def rollback(self) -> None:
        if self._tx:
            self._tx = False
            self._raw("ROLLBACK")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: Any, *exc: Any) -> None:
        """A transaction, as ``with sqlite3.Connection`` is: committed unless it raised."""
        if kind is None:
            self.commit()
        else:
            try:
                self.rollback()
            except EngineError:
                pass  # the statement's own error is the one to report

    # -- the translation -------------------------------------------------------------

    def _begin(self) -> None:
        if not self._tx:
            if self._conn.closed:  # the server went away since: a new connection
                self._connect()
            self._raw("BEGIN")
            self._tx = True

    def _raw(self, sql: str) -> None:
        try:
            self._conn.execute(sql)
        except self._psycopg.Error as exc:
            raise self._error(exc) from None

    def _run(self, sql: str, parameters: Sequence[Any]) -> _Cursor:
        params = tuple(_value(v) for v in parameters)
        if self._conn.closed and not self._tx:
            self._connect()
        try:
            with self._conn.cursor() as cur:
                cur.execute(_sql(sql, params), params or None)
                if cur.description is None:
                    return _Cursor([], rowcount=cur.rowcount)
                index = {c.name: i for i, c in enumerate(cur.description)}
                return _Cursor([Row(v, index) for v in cur.fetchall()], rowcount=cur.rowcount)
        except self._psycopg.Error as exc:
            raise self._error(exc) from None

    def _error(self, exc: Exception) -> EngineError:
        kind = _kind(exc)
        if self._conn.closed:
            kind, self._tx = LOST, False
        return EngineError(_first_line(exc), kind)

    def _pragma(self, name: str, value: str | None) -> _Cursor:
        """The two PRAGMAs that carry the schema's identity, in ``sizing_schema``; the
        others tune SQLite's files and do nothing here."""
        column = {"user_version": "user_version", "application_id": "application_id"}.get(name)
        if column is None:
            return _Cursor([Row(("server",), {name: 0})])
        if value is None:
            there = self._run(f"SELECT to_regclass('{SCHEMA_TABLE}') IS NOT NULL", ()).fetchone()
            if not there or not there[0]:
                return _Cursor([Row((0,), {name: 0})])
            row = self._run(f"SELECT {column} FROM {SCHEMA_TABLE}", ()).fetchone()
            return _Cursor([Row((0 if row is None else int(row[0]),), {name: 0})])
        self._begin()
        self._run(
            f"CREATE TABLE IF NOT EXISTS {SCHEMA_TABLE} (one INTEGER PRIMARY KEY CHECK (one = 1),"
            " application_id BIGINT NOT NULL DEFAULT 0, user_version INTEGER NOT NULL DEFAULT 0)",
            (),
        )
        self._run(
            f"INSERT INTO {SCHEMA_TABLE} (one, {column}) VALUES (1, ?)"
            f" ON CONFLICT (one) DO UPDATE SET {column} = EXCLUDED.{column}",
            (int(value),),
        )
        return _Cursor([])


def _first_line(exc: Exception) -> str:
    """libpq's message on one line (it adds hints and the socket's path on others)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = lines[0] if lines else type(exc).__name__
    for ln in lines[1:]:
        if ln.lower().startswith(("fatal:", "error:")):
            text = ln
            break
    return text.removeprefix("FATAL:  ").removeprefix("ERROR:  ")


def connect(where: Path | str, *, timeout: float = 30.0) -> Db:
    """A plain connection to a results database, for writing, with nothing checked,
    created or migrated: the tests build older and damaged databases through it, on
    either engine, in the store's one dialect."""
    at = database(where)
    if isinstance(at, DbUrl):
        return PgConnection(at, readonly=False, timeout=timeout)
    db = sqlite3.connect(str(at), timeout=timeout)
    db.row_factory = sqlite3.Row
    return db


def restart_ids(db: Db, table: str) -> None:
    """After rows were written with their own ids (a copy): the next new row's id follows
    the highest. SQLite's AUTOINCREMENT keeps track itself; a server's identity column
    is told."""
    if isinstance(db, PgConnection):
        db.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
            f" COALESCE((SELECT max(id) FROM {table}), 0) + 1, false)"
        )
