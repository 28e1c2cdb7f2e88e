"""The results store: SQLite, append-only.

A run holds points; a point holds its repetitions' samples. Nothing is overwritten: a new
``sizing run`` is a new run, and a resumed run appends the points it measures. Every
point is written (committed) the moment it is finished, so an interrupted sweep keeps
every point already measured.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sizing.errors import SizingError
from sizing.model import PointKey, PointResult, Sample, Status

SCHEMA = """
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


@dataclass(frozen=True)
class StoredPoint:
    """A point as read back from the store."""

    id: int
    run_id: int
    created_at: float
    result: PointResult


class Store:
    """A results database. Opening creates the schema; ``Store.exists`` does not."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), timeout=30)
            self._db.row_factory = sqlite3.Row
            self._db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise SizingError(f"{self.path}: cannot open the results database: {exc}") from exc

    @staticmethod
    def exists(path: Path | str) -> bool:
        return Path(path).is_file()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- runs ---------------------------------------------------------------------------

    def start_run(
        self,
        *,
        inventory: str,
        argv: Sequence[str],
        tool_version: str,
        options: dict[str, Any],
    ) -> int:
        cur = self._db.execute(
            "INSERT INTO runs (started_at, status, inventory, argv, tool_version, options)"
            " VALUES (?, 'running', ?, ?, ?, ?)",
            (time.time(), inventory, json.dumps(list(argv)), tool_version, json.dumps(options)),
        )
        self._db.commit()
        assert cur.lastrowid is not None
        return cur.lastrowid

    def reopen_run(self, run_id: int) -> None:
        """Mark an earlier run as running again (``--resume``)."""
        self.get_run(run_id)
        self._db.execute(
            "UPDATE runs SET status = 'running', finished_at = NULL WHERE id = ?", (run_id,)
        )
        self._db.commit()

    def set_environment(self, run_id: int, environment: dict[str, Any]) -> None:
        run = self.get_run(run_id)
        merged = {**run.environment, **environment}
        self._db.execute(
            "UPDATE runs SET environment = ? WHERE id = ?", (json.dumps(merged), run_id)
        )
        self._db.commit()

    def finish_run(self, run_id: int, status: str, note: str = "") -> None:
        self._db.execute(
            "UPDATE runs SET status = ?, finished_at = ?, note = ? WHERE id = ?",
            (status, time.time(), note, run_id),
        )
        self._db.commit()

    def get_run(self, run_id: int) -> RunRecord:
        row = self._db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise SizingError(f"{self.path}: no run {run_id}")
        return _run(row)

    def runs(self) -> list[RunRecord]:
        return [_run(r) for r in self._db.execute("SELECT * FROM runs ORDER BY id")]

    def latest_run_id(self) -> int | None:
        row = self._db.execute("SELECT max(id) AS id FROM runs").fetchone()
        return None if row is None or row["id"] is None else int(row["id"])

    # -- points -------------------------------------------------------------------------

    def add_point(
        self, run_id: int, result: PointResult, samples: Sequence[tuple[int, Sample]]
    ) -> int:
        """Store a finished point and its samples, committed at once."""
        k = result.key
        with self._db:
            cur = self._db.execute(
                "INSERT INTO points (run_id, created_at, host, platform, cores, ht, profile,"
                " status, reason, value, unit, repetitions, spread, ci_low, ci_high, flags,"
                " metadata) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    run_id,
                    time.time(),
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
                    json.dumps(result.metadata, default=str),
                ),
            )
            point_id = cur.lastrowid
            assert point_id is not None
            self._db.executemany(
                "INSERT INTO samples (point_id, repetition, metric, value, unit, metadata)"
                " VALUES (?,?,?,?,?,?)",
                [
                    (point_id, rep, s.metric, s.value, s.unit, json.dumps(s.metadata, default=str))
                    for rep, s in samples
                ],
            )
        return point_id

    def points(self, run_id: int | None = None) -> list[StoredPoint]:
        if run_id is None:
            rows = self._db.execute("SELECT * FROM points ORDER BY id")
        else:
            rows = self._db.execute("SELECT * FROM points WHERE run_id = ? ORDER BY id", (run_id,))
        return [_point(r) for r in rows]

    def samples(self, point_id: int) -> list[tuple[int, Sample]]:
        rows = self._db.execute("SELECT * FROM samples WHERE point_id = ? ORDER BY id", (point_id,))
        return [
            (
                int(r["repetition"]),
                Sample(r["metric"], float(r["value"]), r["unit"], json.loads(r["metadata"])),
            )
            for r in rows
        ]

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


def _run(row: sqlite3.Row) -> RunRecord:
    return RunRecord(
        id=int(row["id"]),
        started_at=float(row["started_at"]),
        finished_at=None if row["finished_at"] is None else float(row["finished_at"]),
        status=row["status"],
        inventory=row["inventory"],
        argv=row["argv"],
        tool_version=row["tool_version"],
        options=json.loads(row["options"]),
        environment=json.loads(row["environment"]),
        note=row["note"],
    )


def _point(row: sqlite3.Row) -> StoredPoint:
    key = PointKey(row["host"], row["platform"], int(row["cores"]), row["ht"], row["profile"])
    return StoredPoint(
        id=int(row["id"]),
        run_id=int(row["run_id"]),
        created_at=float(row["created_at"]),
        result=PointResult(
            key=key,
            status=Status(row["status"]),
            reason=row["reason"],
            value=row["value"],
            unit=row["unit"],
            repetitions=int(row["repetitions"]),
            spread=row["spread"],
            ci_low=row["ci_low"],
            ci_high=row["ci_high"],
            flags=tuple(json.loads(row["flags"])),
            metadata=json.loads(row["metadata"]),
        ),
    )
