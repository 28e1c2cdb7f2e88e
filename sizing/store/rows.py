"""A results database's rows as sizing reads them: runs, points with their typed records,
samples; the error a database that cannot be used raises."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sizing.errors import ExitStatus, SizingError
from sizing.model import PointKey, PointResult, Sample, Status
from sizing.records import (
    HostRecord,
    LockOwner,
    PointMeta,
    RunOptionsRecord,
    SampleMeta,
    hosts_of,
)
from sizing.store.schema import (
    json_column,
    upgrade_environment,
    upgrade_point_record,
    upgrade_point_version,
    upgrade_run_row,
)


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
    """One row of ``runs``, typed: the options it was measured with, its environment host
    by host (each host's facts and what the run kept beside them) and who measured it
    (machine, PID and its start time, while it ran)."""

    id: int
    started_at: float
    finished_at: float | None
    status: str
    inventory: str
    argv: str
    tool_version: str
    options: RunOptionsRecord
    environment: dict[str, HostRecord]
    note: str
    owner: LockOwner | None = None

    @property
    def label(self) -> str:
        """The run's ``--label`` ("" without one)."""
        return self.options.label or ""


@dataclass(frozen=True)
class StoredPoint:
    """A point as read back from the store."""

    id: int
    run_id: int
    created_at: float
    result: PointResult


def run_from_row(row: sqlite3.Row) -> RunRecord:
    """A run as read back from a row of ``runs``."""
    options, owner = upgrade_run_row(json_column(row["options"], dict))
    if "owner" in row.keys() and row["owner"] is not None:
        owner = json_column(row["owner"], dict)
    return RunRecord(
        id=int(row["id"]),
        started_at=float(row["started_at"]),
        finished_at=None if row["finished_at"] is None else float(row["finished_at"]),
        status=str(row["status"]),
        inventory=str(row["inventory"]),
        argv=str(row["argv"]),
        tool_version=str(row["tool_version"]),
        options=RunOptionsRecord.parse(options),
        environment=hosts_of(upgrade_environment(json_column(row["environment"], dict))),
        note=str(row["note"]),
        owner=None if owner is None else LockOwner.parse(owner),
    )


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def point_from_row(row: sqlite3.Row, versions: Mapping[str, str] | None = None) -> StoredPoint:
    """A point as read back from a row of ``points``; ``versions``: its run's hosts' generator
    versions, stored before schema 8 (:func:`~sizing.store.schema.upgrade_point_version`),
    when the database was not migrated."""
    key = PointKey(
        str(row["host"]),
        str(row["platform"]),
        int(row["cores"]),
        str(row["ht"]),
        str(row["profile"]),
    )
    return StoredPoint(
        id=int(row["id"]),
        run_id=int(row["run_id"]),
        created_at=float(row["created_at"]),
        result=result_from_columns(
            key,
            row,
            json_column(row["flags"], list),
            _upgraded(json_column(row["metadata"], dict), versions),
        ),
    )


def result_from_columns(
    key: PointKey, m: Any, flags: list[Any], metadata: Mapping[str, Any]
) -> PointResult:
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


def is_repetition(row: sqlite3.Row) -> bool:
    """Whether a timed sample row repeats its point: not a warm-up window, nor one window
    of an open-loop sweep (each at its own offered ``rate``: different loads, not
    repetitions of one, so no interval nor trend is read from them)."""
    meta = json_column(row["metadata"], dict)
    return not meta.get("warmup") and meta.get("rate") is None


def sample_from_row(row: sqlite3.Row) -> tuple[int, Sample]:
    """A sample and its repetition as read back from a row of ``samples``."""
    return (
        int(row["repetition"]),
        Sample(
            str(row["metric"]),
            float(row["value"]),
            str(row["unit"]),
            SampleMeta.parse(json_column(row["metadata"], dict)),
        ),
    )


def _upgraded(metadata: dict[str, Any], versions: Mapping[str, str] | None) -> dict[str, Any]:
    """A point's metadata as schema 8 holds it: only a database not migrated gives the
    hosts' ``versions`` (a migrated one's points hold their own)."""
    return upgrade_point_version(metadata, versions) if versions else metadata
