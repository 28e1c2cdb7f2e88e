"""The results store: SQLite, append-only, versioned.

A run holds points; a point holds its repetitions' samples. Nothing is overwritten: a new
``sizing run`` is a new run, and a resumed run appends the points it measures. Every
point is written (committed) the moment it is finished, so an interrupted sweep keeps
every point already measured.

The schema carries its version in ``PRAGMA user_version`` and sizing's mark in
``PRAGMA application_id``. Opening for writing (``Store(path)``) creates a new database or
brings an older one up to date with the ordered :data:`MIGRATIONS`, each in its own
transaction. Read-only commands use :meth:`Store.open_readonly`: the file is opened with
SQLite's ``mode=ro`` and never written, never created, never migrated. Either way, a file
that is not a sizing database (another application's, damaged, empty) or one written by a
newer sizing is refused with one :class:`StoreError` line naming the file, and left as it
was.

A writer's first write puts the database in WAL mode, where it stays, so that a reader
(``sizing results``, a BI tool, ``sqlite3`` left open before or during a run) never blocks
the run that writes. (A database written by a sizing before WAL is switched at its first
write; a reader holding it at that moment makes that write wait for it.) Another *writer*
can still hold the lock: every write retries with back-off for ``patience`` seconds (a
run's store waits for hours, :data:`RUN_PATIENCE_S`), saying so through ``on_wait``, and
gives up early when ``stop()`` says a stop signal came. A point that still cannot be
stored is kept in a recovery file beside the database (:func:`keep_for_recovery`) and
imported later with ``sizing import`` (:meth:`Store.import_points`). A file deleted or
replaced under a writer is refused, not written to an orphaned WAL.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from sizing.errors import ExitStatus, InputError, SizingError
from sizing.model import PointKey, PointResult, Sample, Status
from sizing.records import PointMeta, SampleMeta

T = TypeVar("T")

# PRAGMA application_id: "SIZg". A database that carries another id belongs to another
# application; one without (0) is sizing's only when it has sizing's tables.
APPLICATION_ID = 0x53495A67
BUSY_TIMEOUT_S = 30.0
# How long a run's writes wait for another writer before the point goes to the recovery
# file: as long as a long sweep may take, not the 30 s an interactive command waits.
RUN_PATIENCE_S = 6 * 3600.0
RUN_ATTEMPT_S = 2.0  # one attempt's busy wait in a patient store: a Ctrl-C is seen soon
RECOVERY_SUFFIX = ".recovery.jsonl"
RECOVERY_KIND = "sizing-point"
SQLITE_HEADER = b"SQLite format 3\x00"

# Version 1: the first schema (commit d6f0b9c), which databases written before the
# schema was versioned carry with user_version 0.
SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,            -- running | complete | interrupted | failed
    inventory TEXT NOT NULL,
    argv TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    options TEXT NOT NULL DEFAULT '{}',     -- JSON: the run's options (cores, ht, profiles, ...)
    environment TEXT NOT NULL DEFAULT '{}', -- JSON: per-host fingerprint
    note TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS points (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    created_at REAL NOT NULL,
    host TEXT NOT NULL,
    platform TEXT NOT NULL,
    cores INTEGER NOT NULL,
    ht TEXT NOT NULL,
    profile TEXT NOT NULL,
    status TEXT NOT NULL,            -- measured | invalid | skipped | failed
    reason TEXT NOT NULL DEFAULT '',
    value REAL,
    unit TEXT NOT NULL DEFAULT '',
    repetitions INTEGER NOT NULL DEFAULT 0,
    spread REAL,
    ci_low REAL,
    ci_high REAL,
    flags TEXT NOT NULL DEFAULT '[]',     -- JSON list
    metadata TEXT NOT NULL DEFAULT '{}'   -- JSON
);
CREATE INDEX IF NOT EXISTS points_run ON points(run_id);
CREATE TABLE IF NOT EXISTS samples (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    point_id INTEGER NOT NULL REFERENCES points(id),
    repetition INTEGER NOT NULL,     -- 0 is the warm-up
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    unit TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS samples_point ON samples(point_id);
"""


def _migrate_1(db: sqlite3.Connection) -> None:
    """The first schema (a no-op on a database that already has it)."""
    for statement in SCHEMA_V1.split(";"):
        if statement.strip():
            db.execute(statement)


def _migrate_2(db: sqlite3.Connection) -> None:
    """Mark the database as sizing's and index points by configuration (``--resume``
    and the engine look points up by their key)."""
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute(
        "CREATE INDEX IF NOT EXISTS points_key ON points(host, platform, cores, ht, profile)"
    )


def upgrade_point_record(profile: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """A point record (its metadata JSON) as this sizing writes it. The one shape change so
    far: ``rps``/``tps`` points stored before they load-balanced (issue 13) carry no
    ``role``: nginx served the file itself then (``web``). Applied to every point read, so
    that a database opened read-only (never migrated) reads the same as a migrated one."""
    out = dict(data)
    if profile in ("rps", "tps") and not out.get("role"):
        out["role"] = "web"
    return out


def _migrate_3(db: sqlite3.Connection) -> None:
    """Point records in this sizing's shape (:func:`upgrade_point_record`)."""
    rows = db.execute("SELECT id, profile, metadata FROM points").fetchall()
    for pid, profile, raw in rows:
        try:
            data = _json(raw, dict)
        except (TypeError, ValueError):
            continue  # a damaged record is left as it is (read as unrecorded)
        new = upgrade_point_record(str(profile), data)
        if new != data:
            db.execute("UPDATE points SET metadata = ? WHERE id = ?",
                       (json.dumps(new, default=str), pid))  # fmt: skip


# Ordered: MIGRATIONS[n - 1] takes a database from user_version n - 1 to n. A new schema
# change is a new function appended here, never an edit of an earlier one.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _migrate_1,
    _migrate_2,
    _migrate_3,
)
SCHEMA_VERSION = len(MIGRATIONS)

# The tables and columns sizing reads; a database without them is not sizing's.
REQUIRED_COLUMNS = {
    "runs": {"id", "started_at", "finished_at", "status", "inventory", "argv",
             "tool_version", "options", "environment", "note"},
    "points": {"id", "run_id", "created_at", "host", "platform", "cores", "ht", "profile",
               "status", "reason", "value", "unit", "repetitions", "spread", "ci_low",
               "ci_high", "flags", "metadata"},
    "samples": {"id", "point_id", "repetition", "metric", "value", "unit", "metadata"},
}  # fmt: skip


class StoreError(SizingError):
    """The results database cannot be used: not sizing's, damaged, newer, locked, full."""

    code = ExitStatus.INPUT

    def __init__(
        self,
        path: Path | str,
        message: str,
        *,
        code: ExitStatus | None = None,
        stopped: bool = False,
    ) -> None:
        self.path = str(path)
        self.stopped = stopped  # a stop signal ended the wait for a lock
        super().__init__(f"{path}: {message}", code=code)


@dataclass(frozen=True)
class RunRecord:
    """One row of ``runs``."""

    id: int
    started_at: float
    finished_at: float | None
    status: str
    inventory: str
    argv: str
    tool_version: str
    options: dict[str, Any]
    environment: dict[str, Any]
    note: str

    @property
    def label(self) -> str:
        """The run's ``--label`` ("" without one)."""
        return str(self.options.get("label") or "")

    @property
    def owner(self) -> dict[str, Any] | None:
        """Who ran it (machine, PID and its start time) while it was running."""
        got = self.options.get("owner")
        return got if isinstance(got, dict) else None


@dataclass(frozen=True)
class StoredPoint:
    """A point as read back from the store."""

    id: int
    run_id: int
    created_at: float
    result: PointResult


class Store:
    """A results database.

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
        self.path = Path(path)
        self.readonly = readonly
        self.timeout = timeout
        self.patience = timeout if patience is None else max(patience, timeout)
        self.stop: Callable[[], bool] = lambda: False
        self.on_wait: Callable[[float], None] | None = None
        self._ident: tuple[int, int] | None = None  # the file this writer opened
        self.wal = False  # this writer put the file in WAL mode
        _check_file(self.path, must_exist=readonly)
        if not readonly:
            _check_writable(self.path)
        try:
            if readonly:
                self._db = sqlite3.connect(self._ro_uri(), uri=True, timeout=timeout)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(str(self.path), timeout=timeout)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(self.path, f"cannot open the results database: {exc}") from exc
        self._db.row_factory = sqlite3.Row
        try:
            if readonly:
                self._readable()
            with self._guard():
                version = self._identify()
                if not readonly and version < SCHEMA_VERSION:
                    self._migrate()
            if not readonly:
                st = self.path.stat()
                self._ident = (st.st_dev, st.st_ino)
        except BaseException:
            self._db.close()
            raise

    def _ro_uri(self, *, immutable: bool = False) -> str:
        uri = "file:" + quote(str(self.path.resolve()), safe="/") + "?mode=ro"
        return uri + ("&immutable=1" if immutable else "")

    def _readable(self) -> None:
        """A WAL database needs its ``-shm`` beside it, which a reader cannot create on a
        read-only file system (a copy on a read-only share): read it as immutable there,
        since nothing can write it."""
        try:
            self._db.execute("PRAGMA user_version").fetchone()
        except sqlite3.Error as exc:
            if "unable to open" not in str(exc) or os.access(self.path.parent, os.W_OK):
                return  # _identify says what it is
            self._db.close()
            self._db = sqlite3.connect(self._ro_uri(immutable=True), uri=True,
                                       timeout=self.timeout)  # fmt: skip
            self._db.row_factory = sqlite3.Row

    @classmethod
    def for_run(cls, path: Path | str) -> Store:
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
    def open_readonly(cls, path: Path | str, *, timeout: float = BUSY_TIMEOUT_S) -> Store:
        """Open an existing database for reading only (``mode=ro``); never writes."""
        return cls(path, readonly=True, timeout=timeout)

    @staticmethod
    def exists(path: Path | str) -> bool:
        """Whether a results database file is there; a directory is refused (a ``--db``
        naming one is a mistake, never "nothing measured yet")."""
        p = Path(path)
        try:
            if p.is_dir():
                raise StoreError(p, "is a directory, not a results database")
            return p.is_file()
        except OSError as exc:  # a directory this user may not look into
            raise StoreError(p, f"cannot be read: {exc.strerror or exc}") from exc

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- identity and migrations ------------------------------------------------------------

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
        tables = {
            str(r[0]): {str(c[1]) for c in self._db.execute(f'PRAGMA table_info("{r[0]}")')}
            for r in self._db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        }
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
        except sqlite3.Error as exc:
            why, code = _explain(exc, self.timeout, self.path)
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
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    self._db.rollback()
                waited = time.monotonic() - began
                busy = _busy(exc)
                stopped = busy and self.stop()
                if busy and not stopped and waited + delay < self.patience:
                    if self.on_wait is not None:
                        self.on_wait(waited)
                    time.sleep(delay)
                    delay = min(delay * 2, 4.0)
                    continue
                why, code = _explain(exc, max(waited, self.timeout), self.path)
                if stopped:
                    why = why.replace("; try again when it has finished", "; stopped by a signal")
                raise StoreError(self.path, why, code=code, stopped=stopped) from exc

    # -- runs ---------------------------------------------------------------------------

    def start_run(
        self,
        *,
        inventory: str,
        argv: Sequence[str],
        tool_version: str,
        options: dict[str, Any],
    ) -> int:
        def insert() -> int:
            cur = self._db.execute(
                "INSERT INTO runs (started_at, status, inventory, argv, tool_version, options)"
                " VALUES (?, 'running', ?, ?, ?, ?)",
                (
                    time.time(),
                    inventory,
                    json.dumps(list(argv)),
                    tool_version,
                    json.dumps(options, default=str),
                ),
            )
            self._db.commit()
            assert cur.lastrowid is not None
            return cur.lastrowid

        return self._write(insert)

    def set_owner(self, run_id: int, owner: dict[str, Any]) -> None:
        """Record which process measures the run (``options["owner"]``: controller, pid,
        its start time), so that a run whose process is gone can be named abandoned."""
        run = self.get_run(run_id)
        self._update(
            "UPDATE runs SET options = ? WHERE id = ?",
            (json.dumps({**run.options, "owner": owner}, default=str), run_id),
        )

    def _update(self, sql: str, params: tuple[Any, ...]) -> None:
        def update() -> None:
            self._db.execute(sql, params)
            self._db.commit()

        self._write(update)

    def reopen_run(self, run_id: int) -> None:
        """Mark an earlier run as running again (``--resume``)."""
        self.get_run(run_id)
        self._update(
            "UPDATE runs SET status = 'running', finished_at = NULL WHERE id = ?", (run_id,)
        )

    def set_environment(self, run_id: int, environment: dict[str, Any]) -> None:
        run = self.get_run(run_id)
        merged = {**run.environment, **environment}
        self._update(
            "UPDATE runs SET environment = ? WHERE id = ?",
            (json.dumps(merged, default=str), run_id),
        )

    def finish_run(self, run_id: int, status: str, note: str = "") -> None:
        """Mark a run ended. On a full disk the update is retried with the rollback
        journal in memory: rewriting the run's row in place needs no new space, so even a
        run stopped by a full disk ends ``failed`` with its reason."""
        update = (
            "UPDATE runs SET status = ?, finished_at = ?, note = ? WHERE id = ?",
            (status, time.time(), note, run_id),
        )
        try:
            self._update(*update)
        except StoreError as exc:
            if not isinstance(exc.__cause__, sqlite3.OperationalError) or "full" not in str(
                exc.__cause__
            ):
                raise
            with self._guard():
                self._db.rollback()
                self._db.execute("PRAGMA journal_mode = MEMORY")
                self._db.execute(*update)
                self._db.commit()

    def get_run(self, run_id: int) -> RunRecord:
        with self._guard():
            row = self._db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise SizingError(f"{self.path}: no run {run_id}")
        return self._decode(_run, row, "runs")

    def runs(self) -> list[RunRecord]:
        with self._guard():
            rows = self._db.execute("SELECT * FROM runs ORDER BY id").fetchall()
        return [self._decode(_run, r, "runs") for r in rows]

    def latest_run_id(self) -> int | None:
        with self._guard():
            row = self._db.execute("SELECT max(id) AS id FROM runs").fetchone()
        return None if row is None or row["id"] is None else int(row["id"])

    # -- points -------------------------------------------------------------------------

    def add_point(
        self, run_id: int, result: PointResult, samples: Sequence[tuple[int, Sample]]
    ) -> int:
        """Store a finished point and its samples, committed at once (retried while
        another process holds the lock, see :meth:`_write`)."""

        def insert() -> int:
            with self._db:
                return self._insert_point(run_id, result, samples)

        point_id = self._write(insert)
        with contextlib.suppress(sqlite3.Error):  # the main file current: a copy of it alone
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")  # holds every point
        return point_id

    def _insert_point(
        self,
        run_id: int,
        result: PointResult,
        samples: Sequence[tuple[int, Sample]],
        created_at: float | None = None,
    ) -> int:
        k = result.key
        cur = self._db.execute(
            "INSERT INTO points (run_id, created_at, host, platform, cores, ht, profile,"
            " status, reason, value, unit, repetitions, spread, ci_low, ci_high, flags,"
            " metadata) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                run_id,
                time.time() if created_at is None else created_at,
                k.host,
                k.platform,
                k.cores,
                k.ht,
                k.profile,
                str(result.status),
                result.reason,
                result.value,
                result.unit,
                result.repetitions,
                result.spread,
                result.ci_low,
                result.ci_high,
                json.dumps(list(result.flags)),
                json.dumps(result.metadata.to_json(), default=str),
            ),
        )
        point_id = cur.lastrowid
        assert point_id is not None
        self._db.executemany(
            "INSERT INTO samples (point_id, repetition, metric, value, unit, metadata)"
            " VALUES (?,?,?,?,?,?)",
            [
                (point_id, rep, s.metric, s.value, s.unit,
                 json.dumps(s.metadata.to_json(), default=str))  # fmt: skip
                for rep, s in samples
            ],
        )
        return point_id

    def import_points(self, records: Sequence[dict[str, Any]]) -> tuple[int, int]:
        """Add recovered points (:func:`read_recovery`) to their runs, in one transaction:
        (added, already there). A record whose ``recovery_id`` a point of its run carries
        is skipped, so importing a file twice adds nothing."""
        for rec in records:
            self.get_run(int(rec["run_id"]))  # "no run N" before anything is written

        def insert() -> tuple[int, int]:
            added = skipped = 0
            with self._db:
                for rec in records:
                    run_id, result, samples = _from_record(rec)
                    there = self._db.execute(
                        "SELECT 1 FROM points WHERE run_id = ? AND "
                        "json_extract(metadata, '$.recovery_id') = ?",
                        (run_id, rec["recovery_id"]),
                    ).fetchone()
                    if there:
                        skipped += 1
                        continue
                    self._insert_point(run_id, result, samples, float(rec["created_at"]))
                    added += 1
            return added, skipped

        return self._write(insert)

    def points(self, run_id: int | None = None) -> list[StoredPoint]:
        with self._guard():
            if run_id is None:
                rows = self._db.execute("SELECT * FROM points ORDER BY id").fetchall()
            else:
                rows = self._db.execute(
                    "SELECT * FROM points WHERE run_id = ? ORDER BY id", (run_id,)
                ).fetchall()
        return [self._decode(_point, r, "points") for r in rows]

    def samples(self, point_id: int) -> list[tuple[int, Sample]]:
        with self._guard():
            rows = self._db.execute(
                "SELECT * FROM samples WHERE point_id = ? ORDER BY id", (point_id,)
            ).fetchall()
        return [self._decode(_sample, r, "samples") for r in rows]

    def done_keys(self, run_id: int) -> set[PointKey]:
        """Keys of a run's points that need no new attempt (measured, invalid or skipped)."""
        return {
            p.result.key
            for p in self.points(run_id)
            if p.result.status in (Status.MEASURED, Status.INVALID, Status.SKIPPED)
        }

    def iter_valid(self) -> Iterator[StoredPoint]:
        for p in self.points():
            if p.result.status is Status.MEASURED and p.result.value is not None:
                yield p

    def _decode(self, decode: Callable[[sqlite3.Row], T], row: sqlite3.Row, table: str) -> T:
        """A row as sizing's type, or one StoreError line naming the row and the value."""
        try:
            return decode(row)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            ident = row["id"] if "id" in row.keys() else "?"
            raise StoreError(
                self.path, f"damaged row {table} id {ident}: {type(exc).__name__}: {exc}"
            ) from exc


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
            raise StoreError(
                path,
                "empty file (0 bytes), not a sizing results database; give a path that "
                "does not exist and sizing creates its database there",
            )
        with path.open("rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(path, f"cannot read the results database: {exc.strerror or exc}") from exc
    if head != SQLITE_HEADER:
        raise StoreError(path, "not an SQLite database (damaged, or a file of another kind)")


def _explain(
    exc: sqlite3.Error, timeout: float, path: Path | None = None
) -> tuple[str, ExitStatus]:
    """One line for an SQLite error, and its exit status: :attr:`ExitStatus.STORE` when
    the machine, not the file's content, is in the way (locked, disk full, the file gone or
    read-only), :attr:`ExitStatus.INPUT` when the file is not a usable database."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if _busy(exc):
        return (
            f"the results database is locked by another process (waited {_seconds(timeout)}); "
            "try again when it has finished"
        ), ExitStatus.STORE
    if name.startswith("SQLITE_FULL"):
        return "the disk is full: cannot write the results database", ExitStatus.STORE
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return f"damaged results database ({exc})", ExitStatus.INPUT
    if path is not None and not path.exists():
        return (
            "the results database was deleted or moved while sizing used it",
            ExitStatus.STORE,
        )
    if name.startswith(("SQLITE_READONLY", "SQLITE_IOERR", "SQLITE_CANTOPEN")):
        return f"cannot write the results database ({exc})", ExitStatus.STORE
    return f"results database error: {exc}", ExitStatus.INPUT


def _json(text: Any, kind: type) -> Any:
    value = json.loads(text)
    if not isinstance(value, kind):
        raise ValueError(f"expected a JSON {kind.__name__}, got {type(value).__name__}")
    return value


def _run(row: sqlite3.Row) -> RunRecord:
    return RunRecord(
        id=int(row["id"]),
        started_at=float(row["started_at"]),
        finished_at=None if row["finished_at"] is None else float(row["finished_at"]),
        status=str(row["status"]),
        inventory=str(row["inventory"]),
        argv=str(row["argv"]),
        tool_version=str(row["tool_version"]),
        options=_json(row["options"], dict),
        environment=_json(row["environment"], dict),
        note=str(row["note"]),
    )


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _point(row: sqlite3.Row) -> StoredPoint:
    key = PointKey(
        str(row["host"]), str(row["platform"]), int(row["cores"]), str(row["ht"]),
        str(row["profile"]),
    )  # fmt: skip
    return StoredPoint(
        id=int(row["id"]),
        run_id=int(row["run_id"]),
        created_at=float(row["created_at"]),
        result=_result(key, row, _json(row["flags"], list), _json(row["metadata"], dict)),
    )


def _result(key: PointKey, m: Any, flags: list[Any], metadata: Mapping[str, Any]) -> PointResult:
    """A point's result from its stored columns: a row of ``points`` or a recovery
    record (both keyed by the column names)."""
    return PointResult(
        key=key,
        status=Status(m["status"]),
        reason=str(m["reason"]),
        value=_opt_float(m["value"]),
        unit=str(m["unit"]),
        repetitions=int(m["repetitions"]),
        spread=_opt_float(m["spread"]),
        ci_low=_opt_float(m["ci_low"]),
        ci_high=_opt_float(m["ci_high"]),
        flags=tuple(str(f) for f in flags),
        metadata=PointMeta.parse(upgrade_point_record(key.profile, metadata)),
    )


def _sample(row: sqlite3.Row) -> tuple[int, Sample]:
    return (
        int(row["repetition"]),
        Sample(str(row["metric"]), float(row["value"]), str(row["unit"]),
               SampleMeta.parse(_json(row["metadata"], dict))),
    )  # fmt: skip


def _busy(exc: sqlite3.Error) -> bool:
    """Whether another connection holds the lock (worth waiting for)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc)


def _seconds(s: float) -> str:
    if s < 10:
        return f"{s:.1f}".rstrip("0").rstrip(".") + " s"
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


# -- recovery: a measured point that could not be stored ---------------------------------


def recovery_path(db: Path | str) -> Path:
    """The recovery file beside a results database."""
    p = Path(db)
    return p.with_name(p.name + RECOVERY_SUFFIX)


def point_record(
    run_id: int, result: PointResult, samples: Sequence[tuple[int, Sample]]
) -> dict[str, Any]:
    """A point as one self-contained JSON object (a line of a recovery file)."""
    rid = uuid.uuid4().hex
    k = result.key
    return {
        "kind": RECOVERY_KIND,
        "version": 1,
        "recovery_id": rid,
        "run_id": run_id,
        "created_at": time.time(),
        "key": {"host": k.host, "platform": k.platform, "cores": k.cores, "ht": k.ht,
                "profile": k.profile},
        "status": str(result.status),
        "reason": result.reason,
        "value": result.value,
        "unit": result.unit,
        "repetitions": result.repetitions,
        "spread": result.spread,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "flags": list(result.flags),
        "metadata": replace(result.metadata, recovery_id=rid).to_json(),
        "samples": [[rep, s.metric, s.value, s.unit, s.metadata.to_json()]
                    for rep, s in samples],
    }  # fmt: skip


def _from_record(rec: dict[str, Any]) -> tuple[int, PointResult, list[tuple[int, Sample]]]:
    k = rec["key"]
    key = PointKey(str(k["host"]), str(k["platform"]), int(k["cores"]), str(k["ht"]),
                   str(k["profile"]))  # fmt: skip
    result = _result(key, rec, list(rec["flags"]), dict(rec["metadata"]))
    samples = [(int(r), Sample(str(m), float(v), str(u), SampleMeta.parse(md)))
               for r, m, v, u, md in rec["samples"]]  # fmt: skip
    return int(rec["run_id"]), result, samples


def keep_for_recovery(
    db: Path | str, run_id: int, result: PointResult, samples: Sequence[tuple[int, Sample]]
) -> tuple[Path | None, str]:
    """Append a point that could not be stored to the recovery file beside ``db`` (or,
    when that cannot be written, one in the temporary directory), synced to disk.
    Returns (the file, the JSON line); the file is None when neither could be written,
    and the caller prints the line."""
    line = json.dumps(point_record(run_id, result, samples), default=str)
    fallback = Path(tempfile.gettempdir()) / f"sizing-{os.getpid()}{RECOVERY_SUFFIX}"
    for path in (recovery_path(db), fallback):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, (line + "\n").encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            return path, line
        except OSError:
            continue
    return None, line


def read_recovery(path: Path) -> list[dict[str, Any]]:
    """The points of a recovery file, or a SizingError naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            str(path), [f"not a recovery file (not UTF-8 text: {exc.reason})"]
        ) from exc
    except OSError as exc:
        why = f"cannot read the recovery file: {exc.strerror or exc}"
        raise InputError(str(path), [why]) from exc
    records: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            if not isinstance(rec, dict) or rec.get("kind") != RECOVERY_KIND:
                raise ValueError("not a sizing point record")
            _from_record(rec)
            str(rec["recovery_id"])
            float(rec["created_at"])
        except (ValueError, TypeError, KeyError) as exc:
            raise InputError(
                str(path), [f"line {n}: not a point sizing kept for recovery ({exc})"]
            ) from exc
        records.append(rec)
    if not records:
        raise InputError(str(path), ["holds no point to import"])
    return records
