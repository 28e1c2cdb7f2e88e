"""Leases: which process works on a run and on its hosts now, kept in the results database
so that every machine of a team sees it.

A run holds a lease on itself (``run:<id>``) and on each server host it measures
(``host:<inventory name>``), under its run token. A thread renews them while the run lives
(:class:`LeaseKeeper`, every quarter of the lease time); the run gives them back when it
ends. A run whose machine died renews nothing: its leases expire :func:`lease_seconds`
after their last renewal (60 s, or ``$SIZING_LEASE_S``), by the database's clock, which
every machine shares. Then another process takes them over: ``--resume`` of that run from
any machine, or a new run on its hosts. A holder known to be gone sooner (a process of
this machine that ended: ``gone``) is taken over at once, as a stale host lock is.

Taking is all or nothing, in one transaction, and race-free on both engines: a name is
inserted if no row has it, else taken by a conditional update that names the token it
saw (compare and swap). The lease rows are the one part of the database that changes in
place: they say who works now, not what was measured.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sizing.errors import ExitStatus
from sizing.paths import Database
from sizing.records import LockOwner, dump
from sizing.store.connection import Connection
from sizing.store.engines import DB_ERRORS, EngineError, now
from sizing.store.rows import StoreError
from sizing.store.schema import json_column

LEASE_S = 60.0  # how long a lease outlives its last renewal: a dead run's is taken after it


def lease_seconds() -> float:
    """The lease time: ``$SIZING_LEASE_S`` (seconds, at least 0.5) or :data:`LEASE_S`."""
    raw = os.environ.get("SIZING_LEASE_S", "")
    try:
        value = float(raw) if raw else LEASE_S
    except ValueError:
        return LEASE_S
    return max(0.5, value) if math.isfinite(value) else LEASE_S


@dataclass(frozen=True)
class Lease:
    """One lease as read, with the database's time of the reading (``at``)."""

    name: str
    run_id: int | None
    token: str
    owner: LockOwner
    taken_at: float
    renewed_at: float
    expires_at: float
    at: float

    @property
    def expired(self) -> bool:
        return self.expires_at <= self.at

    def describe(self) -> str:
        """Who holds it and until when, in words (no address, no token)."""
        o = self.owner
        who = f"pid {o.pid if o.pid is not None else '?'} on {o.controller_host or '?'}"
        run = f"run {self.run_id}, " if self.run_id is not None else ""
        ago = max(0.0, self.at - self.renewed_at)
        left = max(0.0, self.expires_at - self.at)
        return (
            f"{run}{who}, renewed {ago:.0f} s ago; it expires in {left:.0f} s if that "
            "process is gone"
        )


class LeaseHeld(StoreError):
    """Another live process holds a lease this one asked for."""

    def __init__(self, where: Database, lease: Lease) -> None:
        self.lease = lease
        what = lease.name.replace(":", " ", 1)
        super().__init__(
            where,
            f"{what} is held by another sizing run ({lease.describe()})",
            code=ExitStatus.STORE,
        )


def _lease(row: Any, at: float) -> Lease:
    owner = json_column(row["owner"], dict)
    return Lease(
        name=str(row["name"]),
        run_id=None if row["run_id"] is None else int(row["run_id"]),
        token=str(row["token"]),
        owner=LockOwner.parse(owner),
        taken_at=float(row["taken_at"]),
        renewed_at=float(row["renewed_at"]),
        expires_at=float(row["expires_at"]),
        at=at,
    )


def leases(store: Connection, names: Sequence[str] | None = None) -> list[Lease]:
    """The leases held (those named, or every one), expired ones included (``expired``).
    A database from before leases (schema 6, read-only) holds none."""
    with store._guard():
        if "leases" not in _tables(store):
            return []
        at = now(store._db)
        rows = store._db.execute("SELECT * FROM leases ORDER BY name").fetchall()
    got = [store._decode(lambda r: _lease(r, at), r, "leases") for r in rows]
    return [x for x in got if names is None or x.name in names]


def _tables(store: Connection) -> set[str]:
    from sizing.store.engines import tables

    return set(tables(store._db))


def take(
    store: Connection,
    names: Sequence[str],
    *,
    run_id: int | None,
    token: str,
    owner: LockOwner,
    gone: Callable[[LockOwner], bool] = lambda _: False,
    seconds: float | None = None,
) -> list[Lease]:
    """Take every lease of ``names`` for ``token``, or none: :class:`LeaseHeld` names the
    first that another live process holds. A lease this token holds is renewed; one that
    expired, or whose holder is ``gone``, is taken over. Returns the leases taken over."""
    span = lease_seconds() if seconds is None else seconds
    record = json.dumps(dump(owner))

    def attempt() -> list[Lease]:
        took_over: list[Lease] = []
        with store._db:
            at = now(store._db)
            for name in names:
                row, inserted = None, False
                for _ in range(3):  # a lease given back between the two statements
                    added = store._db.execute(
                        "INSERT INTO leases (name, run_id, token, owner, taken_at, renewed_at,"
                        " expires_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
                        (name, run_id, token, record, at, at, at + span),
                    )
                    if added.rowcount == 1:
                        inserted = True
                        break
                    row = store._db.execute(
                        "SELECT * FROM leases WHERE name = ?", (name,)
                    ).fetchone()
                    if row is not None:
                        break
                if inserted:
                    continue
                if row is None:  # pragma: no cover - given back and taken, three times
                    raise StoreError(store.path, f"lease {name}: taken and given back meanwhile")
                held = _lease(row, at)
                if held.token != token and not (held.expired or gone(held.owner)):
                    raise LeaseHeld(store.path, held)
                swapped = store._db.execute(
                    "UPDATE leases SET run_id = ?, token = ?, owner = ?, taken_at = ?,"
                    " renewed_at = ?, expires_at = ? WHERE name = ? AND token = ?",
                    (run_id, token, record, at, at, at + span, name, held.token),
                )
                if swapped.rowcount != 1:  # another process took it meanwhile
                    again = store._db.execute(
                        "SELECT * FROM leases WHERE name = ?", (name,)
                    ).fetchone()
                    raise LeaseHeld(store.path, held if again is None else _lease(again, at))
                if held.token != token:
                    took_over.append(held)
        return took_over

    return store._write(attempt)


def renew(store: Connection, token: str, seconds: float | None = None) -> int:
    """Renew every lease ``token`` holds; how many it still holds."""
    span = lease_seconds() if seconds is None else seconds

    def attempt() -> int:
        with store._db:
            at = now(store._db)
            cur = store._db.execute(
                "UPDATE leases SET renewed_at = ?, expires_at = ? WHERE token = ?",
                (at, at + span, token),
            )
            return int(cur.rowcount)

    return store._write(attempt)


def release(store: Connection, token: str) -> None:
    """Give back every lease ``token`` holds."""

    def attempt() -> None:
        with store._db:
            store._db.execute("DELETE FROM leases WHERE token = ?", (token,))

    store._write(attempt)


class LeaseKeeper:
    """Renews a run's leases from a thread of its own, on a connection of its own, every
    quarter of the lease time; ``lost`` once a renewal found fewer leases than were taken
    (another process took one over: this run must store nothing more)."""

    def __init__(self, where: Database, token: str, held: int) -> None:
        self.where = where
        self.token = token
        self.held = held
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sizing-lease", daemon=True)

    def start(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def _loop(self) -> None:
        every = lease_seconds() / 4
        store: Connection | None = None  # this thread's own
        while not self._stop.wait(every):
            try:
                if store is None:
                    store = Connection(self.where, timeout=min(every, 5.0))
                if renew(store, self.token) < self.held:
                    self.lost = True
            except (StoreError, sqlite3.Error, EngineError):
                if store is not None:  # a new connection next time (a server back)
                    with contextlib.suppress(*DB_ERRORS):
                        store.close()
                    store = None
        if store is not None:
            store.close()

    def halt(self) -> None:
        """Renew no more (the thread ends after a renewal under way)."""
        self._stop.set()

    def stop(self) -> None:
        """Renew no more, and wait (10 s at most) for the thread to end."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
