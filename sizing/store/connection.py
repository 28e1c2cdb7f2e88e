"""Opening a results database: created or migrated for writing, read-only otherwise; WAL
for writers; locks waited for with back-off, a deleted or replaced file refused."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Self, TypeVar
from urllib.parse import quote

from sizing.errors import ExitStatus
from sizing.paths import Database, DbUrl, database
from sizing.store.engines import DB_ERRORS, Db, EngineError, PgConnection
from sizing.store.engines import tables as engine_tables
from sizing.store.explain import explain, is_busy
from sizing.store.rows import StoreError
from sizing.store.schema import (
    APPLICATION_ID,
    MIGRATIONS,
    REQUIRED_COLUMNS,
    SCHEMA_VERSION,
)

T = TypeVar("T")


BUSY_TIMEOUT_S = 30.0


# How long a run's writes wait for another writer before the point goes to the recovery
# file: as long as a long sweep may take, not the 30 s an interactive command waits.
RUN_PATIENCE_S = 6 * 3600.0


RUN_ATTEMPT_S = 2.0  # one attempt's busy wait in a patient store: a Ctrl-C is seen soon


class Connection:
    """The connection to a results database.

    ``Store(path)`` opens for writing: it creates the database when ``path`` does not
    exist and migrates an older one; its writes put it in WAL mode. ``Store.open_readonly(path)``
    (or ``readonly=True``) only reads: SQLite's ``mode=ro``, nothing created or migrated.
    ``Store.exists`` opens nothing.

    ``timeout`` is one attempt's wait for a lock; a write retries for ``patience`` seconds
    in all (``timeout`` when not given), calling ``on_wait(seconds waited)`` before each
    retry and stopping early when ``stop()`` is true.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        readonly: bool = False,
        timeout: float = BUSY_TIMEOUT_S,
        patience: float | None = None,
    ) -> None:
        self.path: Database = database(path)  # a file, or a server's address
        self.readonly = readonly
        self.timeout = timeout
        self.patience = timeout if patience is None else max(patience, timeout)
        self.stop: Callable[[], bool] = lambda: False
        self.on_wait: Callable[[float], None] | None = None
        self._ident: tuple[int, int] | None = None  # the file this writer opened
        self.wal = False  # this writer put the file in WAL mode
        self._db: Db
        if isinstance(self.path, DbUrl):
            self.wal = True  # a server keeps its own log: nothing to switch
            self._open_server(self.path)
            return
        file = self.path
        _check_file(file, must_exist=readonly)
        # A writer that finds no data (no file, or an empty one: a database whose creation
        # failed, a disk full at the first write) creates the database; if that fails,
        # it leaves nothing behind.
        creating = not readonly and not _has_data(file)
        if not readonly:
            _check_writable(file)
        try:
            if readonly:
                db = sqlite3.connect(self._ro_uri(), uri=True, timeout=timeout)
            else:
                file.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(str(file), timeout=timeout)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(file, f"cannot open the results database: {exc}") from exc
        db.row_factory = sqlite3.Row
        self._db = db
        try:
            if readonly:
                self._readable()
            self._open_schema()
            if not readonly:
                st = file.stat()
                self._ident = (st.st_dev, st.st_ino)
        except BaseException:
            self._db.close()
            if creating:
                _remove_unborn(file)
            raise

    def _open_server(self, url: DbUrl) -> None:
        """A team's database on a PostgreSQL server: connected, then identified and
        migrated as a file is. A server that cannot be used (a wrong password, none
        answering, no such database) is one StoreError line with the store's exit code."""
        try:
            self._db = PgConnection(url, readonly=self.readonly, timeout=self.timeout)
        except EngineError as exc:
            why, code = explain(exc, self.timeout, url)
            raise StoreError(url, why, code=code) from None
        try:
            self._open_schema()
        except BaseException:
            self._db.close()
            raise

    def _open_schema(self) -> None:
        with self._guard():
            version = self._identify()
            if not self.readonly and version < SCHEMA_VERSION:
                self._migrate()

    @property
    def _file(self) -> Path:
        """The SQLite file (the methods that ask are SQLite's own)."""
        assert isinstance(self.path, Path)
        return self.path

    def _ro_uri(self, *, immutable: bool = False) -> str:
        uri = "file:" + quote(str(self._file.resolve()), safe="/") + "?mode=ro"
        return uri + ("&immutable=1" if immutable else "")

    def _readable(self) -> None:
        """A WAL database needs its ``-shm`` beside it, which a reader cannot create on a
        read-only file system (a copy on a read-only share): read it as immutable there,
        since nothing can write it."""
        try:
            self._db.execute("PRAGMA user_version").fetchone()
        except sqlite3.Error as exc:
            if "unable to open" not in str(exc) or os.access(self._file.parent, os.W_OK):
                return  # _identify says what it is
            self._db.close()
            db = sqlite3.connect(self._ro_uri(immutable=True), uri=True, timeout=self.timeout)
            db.row_factory = sqlite3.Row
            self._db = db

    @classmethod
    def for_run(cls, path: Database | str) -> Self:
        """The store a run writes through: short attempts, retried for hours."""
        return cls(path, timeout=RUN_ATTEMPT_S, patience=RUN_PATIENCE_S)

    def _use_wal(self) -> None:
        """WAL, from this writer's first write: readers never block it. Switching needs
        the database to itself for a moment; while another process holds it, the rollback
        journal serves (the write then waits for the reader, within ``patience``) and the
        next write tries again."""
        try:
            self._db.execute("PRAGMA busy_timeout = 200")
            mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()
            self.wal = str(mode[0]).lower() == "wal"
        except sqlite3.Error:
            pass
        finally:
            self._db.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")

    def _still_there(self) -> None:
        """Refuse to write when the file was deleted or replaced since it was opened: in
        WAL mode SQLite would go on writing to the orphaned WAL file, and lose it all."""
        if not isinstance(self.path, Path):
            return  # a server's database: its files are the server's
        try:
            st = self.path.stat()
            same = self._ident is None or (st.st_dev, st.st_ino) == self._ident
        except OSError:
            same = False
        if not same:
            raise StoreError(
                self.path,
                "the results database was deleted or moved while sizing used it",
                code=ExitStatus.STORE,
            )

    @property
    def journal_mode(self) -> str:
        with self._guard():
            return str(self._db.execute("PRAGMA journal_mode").fetchone()[0])

    @classmethod
    def open_readonly(cls, path: Database | str, *, timeout: float = BUSY_TIMEOUT_S) -> Self:
        """Open an existing database for reading only (``mode=ro``, a server's read-only
        transactions); never writes."""
        return cls(path, readonly=True, timeout=timeout)

    @staticmethod
    def exists(path: Database | str) -> bool:
        """Whether a results database file is there; a directory is refused (a ``--db``
        naming one is a mistake, never "nothing measured yet"). An empty file (0 bytes: a
        database whose creation failed) holds nothing: not there. A server's database is
        there once it holds tables (a new, empty one holds nothing yet); one that cannot be
        reached or logged into is a StoreError."""
        where = database(path)
        if isinstance(where, DbUrl):
            return _server_has_tables(where)
        p = Path(where)
        try:
            if p.is_dir():
                raise StoreError(p, "is a directory, not a results database")
            return p.is_file() and _has_data(p)
        except OSError as exc:  # a directory this user may not look into
            raise StoreError(p, f"cannot be read: {exc.strerror or exc}") from exc

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        with self._guard():
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _identify(self) -> int:
        """The schema version of a sizing database, or StoreError for anything else."""
        app_id = int(self._db.execute("PRAGMA application_id").fetchone()[0])
        version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        if app_id not in (0, APPLICATION_ID):
            raise StoreError(
                self.path,
                f"not a sizing results database (application id {app_id:#x}); "
                "give sizing its own --db",
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                self.path,
                f"written by a newer sizing (schema version {version}; this sizing knows up "
                f"to {SCHEMA_VERSION}): upgrade sizing to read it",
            )
        tables = engine_tables(self._db)
        if not tables and version == 0 and app_id == 0:
            if self.readonly:
                raise StoreError(self.path, "not a sizing results database (it holds no tables)")
            return 0  # a new database: every migration applies
        missing = [
            f"{t}.{c}" if t in tables else t
            for t, cols in REQUIRED_COLUMNS.items()
            for c in ([None] if t not in tables else sorted(cols - tables[t]))
            if t not in tables or c is not None
        ]
        if missing:
            if app_id == 0 and version == 0:
                held = ", ".join(sorted(tables))
                raise StoreError(
                    self.path,
                    f"not a sizing results database (it holds the tables {held}); "
                    "give sizing its own --db",
                )
            raise StoreError(
                self.path,
                f"damaged sizing results database (schema version {version}): missing "
                + ", ".join(missing[:5]),
            )
        return version

    def _migrate(self) -> None:
        """Apply the migrations this database lacks, each in its own transaction."""
        while True:
            self._db.execute("BEGIN IMMEDIATE")  # one writer migrates; others wait
            try:
                version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
                if version >= SCHEMA_VERSION:
                    self._db.rollback()
                    return
                MIGRATIONS[version](self._db)
                self._db.execute(f"PRAGMA user_version = {version + 1}")
                self._db.commit()
            except BaseException:
                self._db.rollback()
                raise

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """SQLite's errors as one StoreError line naming the file."""
        try:
            yield
        except DB_ERRORS as exc:
            why, code = explain(exc, self.timeout, self.path)
            raise StoreError(self.path, why, code=code) from exc

    def _write(self, fn: Callable[[], T]) -> T:
        """Run the write transaction ``fn``; while another process holds the lock, roll
        back and retry with back-off for ``patience`` seconds or until ``stop()``."""
        began = time.monotonic()
        delay = 0.25
        while True:
            self._still_there()
            if not self.wal:
                self._use_wal()  # at the first write (or a reader held the file then)
            try:
                return fn()
            except DB_ERRORS as exc:
                with contextlib.suppress(*DB_ERRORS):
                    self._db.rollback()
                waited = time.monotonic() - began
                busy = is_busy(exc)
                stopped = busy and self.stop()
                if busy and not stopped and waited + delay < self.patience:
                    if self.on_wait is not None:
                        self.on_wait(waited)
                    time.sleep(delay)
                    delay = min(delay * 2, 4.0)
                    continue
                why, code = explain(exc, max(waited, self.timeout), self.path)
                if stopped:
                    why = why.replace("; try again when it has finished", "; stopped by a signal")
                raise StoreError(self.path, why, code=code, stopped=stopped) from exc

    def _update(self, sql: str, params: tuple[Any, ...]) -> None:
        def update() -> None:
            self._db.execute(sql, params)
            self._db.commit()

        self._write(update)

    def _decode(self, decode: Callable[[Any], T], row: Any, table: str) -> T:
        """A row as sizing's type, or one StoreError line naming the row and the value."""
        try:
            return decode(row)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            ident = row["id"] if "id" in row.keys() else "?"
            raise StoreError(
                self.path, f"damaged row {table} id {ident}: {type(exc).__name__}: {exc}"
            ) from exc


def _server_has_tables(url: DbUrl) -> bool:
    try:
        db = PgConnection(url, readonly=True, timeout=BUSY_TIMEOUT_S)
    except EngineError as exc:
        why, code = explain(exc, BUSY_TIMEOUT_S, url)
        raise StoreError(url, why, code=code) from None
    try:
        return bool(engine_tables(db))
    except EngineError as exc:
        why, code = explain(exc, BUSY_TIMEOUT_S, url)
        raise StoreError(url, why, code=code) from None
    finally:
        db.close()


def _check_writable(path: Path) -> None:
    """Refuse, before any work, a database this process could not write: the file and its
    directory (SQLite writes its journal there) or, for a new one, the nearest existing
    directory (a read-only file system, no permission). A run never measures for an hour
    and then fails to store."""
    if path.exists():
        targets = [path, path.resolve().parent]
    else:
        targets = [next((d for d in path.resolve().parents if d.exists()), Path("/"))]
    for target in targets:
        if os.access(target, os.W_OK) and (target == path or os.access(target, os.X_OK)):
            continue
        what = "the results database" if target == path else f"its directory {target}"
        ro = False
        with contextlib.suppress(OSError):
            ro = bool(os.statvfs(target).f_flag & os.ST_RDONLY)
        why = "a read-only file system" if ro else "no permission to write"
        raise StoreError(path, f"cannot write {what} ({why})", code=ExitStatus.STORE)


def _has_data(path: Path) -> bool:
    """Whether ``path`` is a file with something in it (0 bytes is not data)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    return not (os.path.isfile(path) and st.st_size == 0)


def _remove_unborn(path: Path) -> None:
    """Remove a database this writer failed to create (and SQLite's files beside it), so
    that no empty file is left for later commands to refuse: only while it holds nothing."""
    with contextlib.suppress(OSError):
        if _has_data(path):
            db = sqlite3.connect(f"file:{quote(str(path.resolve()), safe='/')}?mode=ro", uri=True)
            try:
                tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            except sqlite3.Error:
                return  # not readable as a database: not ours to delete
            finally:
                db.close()
            if tables:
                return  # another process created it meanwhile
        for suffix in ("-journal", "-wal", "-shm", ""):
            with contextlib.suppress(FileNotFoundError):
                Path(str(path) + suffix).unlink()


def _check_file(path: Path, *, must_exist: bool) -> None:
    """Refuse, before SQLite sees it, a path that cannot be a sizing database."""
    try:
        if not path.exists():
            if must_exist:
                raise StoreError(path, "no such results database")
            return
        if path.is_dir():
            raise StoreError(path, "is a directory, not a results database")
        if path.stat().st_size == 0:
            if not path.is_file():  # /dev/null, a FIFO
                raise StoreError(path, "not a regular file, not a results database")
            if must_exist:
                raise StoreError(path, "empty file (0 bytes): no run is stored in it yet")
            return  # a writer creates the database in it
    except OSError as exc:
        raise StoreError(path, f"cannot read the results database: {exc.strerror or exc}") from exc
    # Its first bytes are SQLite's to read (a file of another kind is SQLITE_NOTADB, said
    # by explain()), never through a descriptor of sizing's own: closing any descriptor of
    # a file drops every POSIX lock the process holds on it, the SQLite connections' too.
    # A run's lease keeper opens a second connection while the run's is open; with the
    # run's shared lock gone, another process's closing connection took itself for the
    # last one, checkpointed and deleted the WAL, and the run's later writes (its end
    # among them) went on into the deleted file and were lost.


def error_of(where: Database, exc: Exception) -> StoreError:
    """An engine's error as the one StoreError line the store says for it."""
    why, code = explain(exc, BUSY_TIMEOUT_S, where)
    return StoreError(where, why, code=code)
