"""The results store: append-only, versioned; a SQLite file, or a team's database on a
PostgreSQL server (``--db postgresql://...``: :mod:`sizing.store.engines` translates the one
dialect the store is written in, and nothing above this package knows which engine it is;
docs/team-store.md). What follows says it in SQLite's terms; a server has the same rules:
the same schema version and migrations, read-only transactions for a reader, the server's
errors as the same one line (a login refused, no server, no such database: exit code 6),
and leases (:mod:`sizing.store.leases`) for runs on several machines.

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
import math
import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from sizing.errors import SizingError
from sizing.extravars import redact_argv
from sizing.model import PointKey, PointResult, Sample, Status
from sizing.paths import Database
from sizing.records import HostRecord, LockOwner, RunOptionsRecord, dump
from sizing.store.connection import BUSY_TIMEOUT_S, RUN_ATTEMPT_S, RUN_PATIENCE_S, Connection
from sizing.store.drift_flag import with_run_drift
from sizing.store.engines import DB_ERRORS, beside
from sizing.store.ranges import with_ranges
from sizing.store.recovery import (
    RECOVERY_KIND,
    RECOVERY_SUFFIX,
    keep_for_recovery,
    point_from_record,
    point_record,
    read_recovery,
    recovery_path,
)
from sizing.store.rows import (
    RunRecord,
    StoredPoint,
    StoreError,
    is_repetition,
    point_from_row,
    run_from_row,
    sample_from_row,
)
from sizing.store.schema import (
    APPLICATION_ID,
    MIGRATIONS,
    MOVED_VERSIONS,
    SCHEMA_VERSION,
    host_versions,
    json_column,
    upgrade_point_record,
)

__all__ = [
    "APPLICATION_ID",
    "BUSY_TIMEOUT_S",
    "MIGRATIONS",
    "RECOVERY_KIND",
    "RECOVERY_SUFFIX",
    "RUN_ATTEMPT_S",
    "RUN_PATIENCE_S",
    "SCHEMA_VERSION",
    "RunRecord",
    "Store",
    "StoreError",
    "StoredPoint",
    "beside",
    "keep_for_recovery",
    "point_record",
    "read_recovery",
    "recovery_path",
    "upgrade_point_record",
]


class Store(Connection):
    """A results database: its runs, their points and samples. Opening, migrating,
    read-only use and the retries of a locked write are :class:`Connection`'s."""

    def start_run(
        self,
        *,
        inventory: str,
        argv: Sequence[str],
        tool_version: str,
        options: RunOptionsRecord | Mapping[str, Any],
    ) -> int:
        """A new run, ``running``, with the options it is measured with (a mapping is read
        as its stored JSON: a run written by hand, as the tests and benchmarks do). Its
        command line is kept without the values of ``-e`` (:func:`redact_argv`)."""
        record = options
        if not isinstance(record, RunOptionsRecord):
            record = RunOptionsRecord.parse(record)

        def insert() -> int:
            cur = self._db.execute(
                "INSERT INTO runs (started_at, status, inventory, argv, tool_version, options)"
                " VALUES (?, 'running', ?, ?, ?, ?)",
                (
                    time.time(),
                    inventory,
                    json.dumps(redact_argv(argv)),
                    tool_version,
                    json.dumps(record.to_json(), default=str),
                ),
            )
            self._db.commit()
            assert cur.lastrowid is not None
            return int(cur.lastrowid)

        return self._write(insert)

    def set_owner(self, run_id: int, owner: LockOwner) -> None:
        """Record which process measures the run (its ``owner``: controller, pid, its start
        time), so that a run whose process is gone can be named abandoned."""
        self.get_run(run_id)
        self._update("UPDATE runs SET owner = ? WHERE id = ?", (json.dumps(dump(owner)), run_id))

    @classmethod
    def backfill_environment(
        cls, path: Database, patches: Mapping[int, Mapping[str, HostRecord]]
    ) -> None:
        """Write what a read found missing from older runs' environment records (run id ->
        hosts' records), once, so that no later command derives it again. Best effort: a
        store that cannot be written now (a read-only file, locked) is left as it is, and
        the reader keeps the records for this command only."""
        if not patches:
            return
        try:
            with cls(path, timeout=1.0) as store:
                for run_id, patch in patches.items():
                    store.set_environment(run_id, patch)
        except (SizingError, OSError):
            pass
        except DB_ERRORS:
            pass

    def reopen_run(self, run_id: int) -> None:
        """Mark an earlier run as running again (``--resume``)."""
        self.get_run(run_id)
        self._update(
            "UPDATE runs SET status = 'running', finished_at = NULL WHERE id = ?", (run_id,)
        )

    def set_environment(
        self, run_id: int, environment: Mapping[str, HostRecord | Mapping[str, Any]]
    ) -> None:
        """Keep these hosts' records with the run, each in place of the one it had (a
        mapping is read as a host's stored JSON)."""
        run = self.get_run(run_id)
        merged = {**run.environment, **{h: _host(r) for h, r in environment.items()}}
        self._update(
            "UPDATE runs SET environment = ? WHERE id = ?",
            (json.dumps(dump(merged), default=str), run_id),
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
        return self._decode(run_from_row, row, "runs")

    def runs(self) -> list[RunRecord]:
        with self._guard():
            rows = self._db.execute("SELECT * FROM runs ORDER BY id").fetchall()
        return [self._decode(run_from_row, r, "runs") for r in rows]

    def latest_run_id(self) -> int | None:
        with self._guard():
            row = self._db.execute("SELECT max(id) AS id FROM runs").fetchone()
        return None if row is None or row["id"] is None else int(row["id"])

    def add_point(
        self, run_id: int, result: PointResult, samples: Sequence[tuple[int, Sample]]
    ) -> int:
        """Store a finished point and its samples, committed at once (retried while
        another process holds the lock, see :meth:`_write`)."""

        def insert() -> int:
            with self._db:
                return self._insert_point(run_id, result, samples)

        point_id = self._write(insert)
        with contextlib.suppress(*DB_ERRORS):  # the main file current: a copy of it alone
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
        assert cur.lastrowid is not None
        point_id = int(cur.lastrowid)
        self._db.executemany(
            "INSERT INTO samples (point_id, repetition, metric, value, unit, metadata)"
            " VALUES (?,?,?,?,?,?)",
            [
                (
                    point_id,
                    rep,
                    s.metric,
                    s.value,
                    s.unit,
                    json.dumps(s.metadata.to_json(), default=str),
                )
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
                    run_id, result, samples = point_from_record(rec)
                    # the record's JSON as json.dumps writes it: one query for both engines
                    mark = "%" + json.dumps({"recovery_id": str(rec["recovery_id"])})[1:-1] + "%"
                    there = self._db.execute(
                        "SELECT 1 FROM points WHERE run_id = ? AND metadata LIKE ?",
                        (run_id, mark),
                    ).fetchone()
                    if there:
                        skipped += 1
                        continue
                    self._insert_point(run_id, result, samples, float(rec["created_at"]))
                    added += 1
            return added, skipped

        return self._write(insert)

    def points(self, run_id: int | None = None) -> list[StoredPoint]:
        """A run's points (every run's with None), the ``drift`` flag decided across each
        run's points (:mod:`sizing.store.drift_flag`)."""
        return self.timed_points(run_id)[0]

    def timed_points(
        self, run_id: int | None = None
    ) -> tuple[list[StoredPoint], dict[int, tuple[float, ...]]]:
        """:meth:`points`, and each point's timed repetitions by point id (the values
        :func:`sizing.store.drift_flag.timed_values` takes from its samples, read here
        without decoding a sample): what a reader that sizes needs of the samples."""
        where, args = ("", ()) if run_id is None else (" WHERE run_id = ?", (run_id,))
        with self._guard():
            rows = self._db.execute(f"SELECT * FROM points{where} ORDER BY id", args).fetchall()
            # the timed aggregate values only (the rule of timed_values) without decoding each
            # sample's record, which took three quarters of the read; its JSON is read in
            # Python, which takes the Infinity that SQLite's json_extract refuses
            reps = self._db.execute(
                "SELECT id, point_id, value, metadata FROM samples WHERE repetition >= 1"
                " AND metric NOT LIKE '%.client'"
                f" AND point_id IN (SELECT id FROM points{where}) ORDER BY id",
                args,
            ).fetchall()
        by_point: dict[int, list[float]] = defaultdict(list)
        for r in reps:
            if self._decode(is_repetition, r, "samples"):
                # SQLite keeps a NaN as NULL: it reads back as NaN, out of range
                v = r["value"]
                by_point[int(r["point_id"])].append(math.nan if v is None else float(v))
        versions = self._host_versions(run_id) if self.schema_version < MOVED_VERSIONS else {}
        points = [
            self._decode(lambda r: point_from_row(r, versions.get(int(r["run_id"]))), r, "points")
            for r in rows
        ]
        timed = {p: tuple(v) for p, v in by_point.items()}
        return with_ranges(with_run_drift(points, by_point), by_point), timed

    def _host_versions(self, run_id: int | None = None) -> dict[int, dict[str, str]]:
        """Each run's hosts' generator versions (``run_id``'s alone when given), in a
        database not migrated to schema 8 (opened read-only): its points read them as a
        migrated one's hold them."""
        where, args = ("", ()) if run_id is None else (" WHERE id = ?", (run_id,))
        with self._guard():
            rows = self._db.execute(f"SELECT id, environment FROM runs{where}", args).fetchall()
        out: dict[int, dict[str, str]] = {}
        for r in rows:
            with contextlib.suppress(TypeError, ValueError):
                out[int(r["id"])] = host_versions(json_column(r["environment"], dict))
        return out

    def samples(self, point_id: int) -> list[tuple[int, Sample]]:
        with self._guard():
            rows = self._db.execute(
                "SELECT * FROM samples WHERE point_id = ? ORDER BY id", (point_id,)
            ).fetchall()
        return [self._decode(sample_from_row, r, "samples") for r in rows]

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


def _host(record: HostRecord | Mapping[str, Any]) -> HostRecord:
    return record if isinstance(record, HostRecord) else HostRecord.parse(record)
