"""The results database's schema and its ``user_version`` migrations; a point record in
this sizing's shape (:func:`upgrade_point_record`). One schema and one sequence for both
engines: written in SQLite's dialect, which :mod:`sizing.store.engines` translates for a
PostgreSQL server."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from sizing.extravars import redact_argv
from sizing.load import (
    FIXED_RATE_FALLBACK_AT_SCHEMA_6,
    HOST_FACT_GENERATOR,
    OPEN_LOOP_AT_SCHEMA_6,
)
from sizing.store.engines import Db

# PRAGMA application_id: "SIZg". A database that carries another id belongs to another
# application; one without (0) is sizing's only when it has sizing's tables.
APPLICATION_ID = 0x53495A67


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


def _migrate_1(db: Db) -> None:
    """The first schema (a no-op on a database that already has it)."""
    for statement in SCHEMA_V1.split(";"):
        if statement.strip():
            db.execute(statement)


def _migrate_2(db: Db) -> None:
    """Mark the database as sizing's and index points by configuration (``--resume``
    and the engine look points up by their key)."""
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute(
        "CREATE INDEX IF NOT EXISTS points_key ON points(host, platform, cores, ht, profile)"
    )


def upgrade_point_record(profile: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """A point record (its metadata JSON) as this sizing writes it. Applied to every point
    read, so that a database opened read-only (never migrated) reads the same as a migrated
    one. The shape changes so far:

    - ``rps``/``tps`` points stored before they load-balanced (issue 13) carry no ``role``:
      nginx served the file itself then (``web``);
    - a fixed-rate point whose profile named a closed-loop generator ran on the open-loop
      fallback (``sizing.load.FIXED_RATE_FALLBACK_AT_SCHEMA_6``), but was stored with
      ``tool`` and ``generator`` the profile's and ``tool_version`` the fallback's (issue
      60): its tool is the one that ran, and ``tool_mended`` says so."""
    out = dict(data)
    if profile in ("rps", "tps") and not out.get("role"):
        out["role"] = "web"
    tool = out.get("tool")
    if out.get("mode") == "fixed-rate" and tool and tool not in OPEN_LOOP_AT_SCHEMA_6:
        out["tool_mended"] = f"stored as {tool}; its rates were offered by"
        out["tool_mended"] += f" {FIXED_RATE_FALLBACK_AT_SCHEMA_6} (schema 6)"
        out["tool"] = out["generator"] = FIXED_RATE_FALLBACK_AT_SCHEMA_6
    return out


def _migrate_3(db: Db) -> None:
    """Point records in this sizing's shape (:func:`upgrade_point_record`)."""
    rows = db.execute("SELECT id, profile, metadata FROM points").fetchall()
    for pid, profile, raw in rows:
        try:
            data = json_column(raw, dict)
        except (TypeError, ValueError):
            continue  # a damaged record is left as it is (read as unrecorded)
        new = upgrade_point_record(str(profile), data)
        if new != data:
            db.execute(
                "UPDATE points SET metadata = ? WHERE id = ?", (json.dumps(new, default=str), pid)
            )


def upgrade_run_row(options: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """A run's options object and its owner as this sizing stores them. Before schema 4 the
    process that measured the run was kept in the options object (``owner``): it is the
    run's own column now. Applied to every run read, as :func:`upgrade_point_record`."""
    out = dict(options)
    owner = out.pop("owner", None)
    return out, owner


def _migrate_4(db: Db) -> None:
    """A run's owner in its own column (:func:`upgrade_run_row`)."""
    db.execute("ALTER TABLE runs ADD COLUMN owner TEXT")
    rows = db.execute("SELECT id, options FROM runs").fetchall()
    for rid, raw in rows:
        try:
            data = json_column(raw, dict)
        except (TypeError, ValueError):
            continue  # a damaged record is left as it is (read as unrecorded)
        options, owner = upgrade_run_row(data)
        if owner is not None:
            db.execute(
                "UPDATE runs SET options = ?, owner = ? WHERE id = ?",
                (json.dumps(options, default=str), json.dumps(owner), rid),
            )


def _migrate_5(db: Db) -> None:
    """Runs stored before their command line was redacted keep no ``-e`` value now
    (:func:`~sizing.extravars.redact_argv`): a value may be a password."""
    rows = db.execute("SELECT id, argv FROM runs").fetchall()
    for rid, raw in rows:
        try:
            argv = [str(a) for a in json_column(raw, list)]
        except (TypeError, ValueError):
            continue  # a damaged record is left as it is (read as unrecorded)
        redacted = redact_argv(argv)
        if redacted != argv:
            db.execute("UPDATE runs SET argv = ? WHERE id = ?", (json.dumps(redacted), rid))


def _migrate_6(db: Db) -> None:
    """Fixed-rate points stored with the profile's closed-loop generator as their tool, and
    the open-loop one's version, name the tool that ran (:func:`upgrade_point_record`)."""
    _migrate_3(db)


LEASES = """
CREATE TABLE IF NOT EXISTS leases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,       -- run:<id> | host:<inventory name>
    run_id INTEGER,
    token TEXT NOT NULL,             -- the holding process's run token
    owner TEXT NOT NULL DEFAULT '{}',  -- JSON: controller, host, pid (LockOwner)
    taken_at REAL NOT NULL,
    renewed_at REAL NOT NULL,
    expires_at REAL NOT NULL         -- the database's clock: renewed_at + the lease time
)
"""


def _migrate_7(db: Db) -> None:
    """Leases: who holds a run and its hosts, renewed while it lives, so that a run on
    another machine knows when a holder is gone (:mod:`sizing.store.leases`). The one
    table whose rows change: they say who works now, not what was measured."""
    db.execute(LEASES)


# Before schema 8 a host's facts kept one generator's version (issue 60).
_HOST_VERSION = f"{HOST_FACT_GENERATOR}_version"
MOVED_VERSIONS = 8  # the schema that moved it onto the points (_migrate_8)


def upgrade_environment(environment: Mapping[str, Any]) -> dict[str, Any]:
    """A run's environment (host by host) as this sizing stores it: no host keeps a
    generator's version, which is its points' (:func:`upgrade_point_version`). Applied to
    every run read, as :func:`upgrade_point_record`."""
    return {
        host: {k: v for k, v in facts.items() if k != _HOST_VERSION}
        if isinstance(facts, Mapping)
        else facts
        for host, facts in environment.items()
    }


def host_versions(environment: Mapping[str, Any]) -> dict[str, str]:
    """The generator's version each host of a run stored before schema 8, by host."""
    return {
        str(host): str(facts[_HOST_VERSION])
        for host, facts in environment.items()
        if isinstance(facts, Mapping) and facts.get(_HOST_VERSION)
    }


def upgrade_point_version(data: Mapping[str, Any], versions: Mapping[str, str]) -> dict[str, Any]:
    """A point record stored before schema 8 with its generator's version, which its run's
    hosts kept (``versions``, :func:`host_versions`). The version is read from the hosts
    that ran the generator (the point's ``clients``; every host of the run when it recorded
    none), and only when the point has none of its own: one version among them is the
    point's, said in ``tool_mended``; several, or a point that recorded no generator, cannot
    be mended, and ``tool_mended`` says what the hosts held."""
    out = dict(data)
    tool = out.get("tool")
    if out.get("tool_version") or tool not in (None, HOST_FACT_GENERATOR):
        return out
    clients = out.get("clients")
    ran = [str(c) for c in clients] if isinstance(clients, list) and clients else sorted(versions)
    found = sorted({versions[h] for h in ran if h in versions})
    if not found:
        return out
    held = ", ".join(found)
    if tool is None:
        gen = HOST_FACT_GENERATOR
        out["tool_mended"] = f"no generator recorded; its hosts held {gen} {held} (schema 8)"
    elif len(found) == 1:
        out["tool_version"] = found[0]
        out["tool_mended"] = "tool_version read from its load generators' host facts (schema 8)"
    else:
        out["tool_mended"] = f"tool_version unknown: its load generators held {held} (schema 8)"
    return out


def _migrate_8(db: Db) -> None:
    """A generator's version is its point's, never its host's: each host's version moves
    onto its run's points (:func:`upgrade_point_version`) and leaves the run's environment
    (:func:`upgrade_environment`)."""
    for rid, raw in db.execute("SELECT id, environment FROM runs").fetchall():
        try:
            environment = json_column(raw, dict)
        except (TypeError, ValueError):
            continue  # a damaged record is left as it is (read as unrecorded)
        versions = host_versions(environment)
        if not versions:
            continue
        points = db.execute("SELECT id, metadata FROM points WHERE run_id = ?", (rid,))
        for pid, meta in points.fetchall():
            try:
                data = json_column(meta, dict)
            except (TypeError, ValueError):
                continue
            new = upgrade_point_version(data, versions)
            if new != data:
                db.execute(
                    "UPDATE points SET metadata = ? WHERE id = ?",
                    (json.dumps(new, default=str), pid),
                )
        db.execute(
            "UPDATE runs SET environment = ? WHERE id = ?",
            (json.dumps(upgrade_environment(environment), default=str), rid),
        )


# Ordered: MIGRATIONS[n - 1] takes a database from user_version n - 1 to n. A new schema
# change is a new function appended here, never an edit of an earlier one.
MIGRATIONS: tuple[Callable[[Db], None], ...] = (
    _migrate_1,
    _migrate_2,
    _migrate_3,
    _migrate_4,
    _migrate_5,
    _migrate_6,
    _migrate_7,
    _migrate_8,
)


SCHEMA_VERSION = len(MIGRATIONS)


# The tables and columns sizing reads; a database without them is not sizing's. (A run's
# ``owner`` is read when there: a database before schema 4, opened read-only, has none.)
REQUIRED_COLUMNS = {
    "runs": {
        "id",
        "started_at",
        "finished_at",
        "status",
        "inventory",
        "argv",
        "tool_version",
        "options",
        "environment",
        "note",
    },
    "points": {
        "id",
        "run_id",
        "created_at",
        "host",
        "platform",
        "cores",
        "ht",
        "profile",
        "status",
        "reason",
        "value",
        "unit",
        "repetitions",
        "spread",
        "ci_low",
        "ci_high",
        "flags",
        "metadata",
    },
    "samples": {"id", "point_id", "repetition", "metric", "value", "unit", "metadata"},
}


def json_column(text: Any, kind: type) -> Any:
    """A JSON column's value, which must be a ``kind`` (dict, list); raises ValueError."""
    value = json.loads(text)
    if not isinstance(value, kind):
        raise ValueError(f"expected a JSON {kind.__name__}, got {type(value).__name__}")
    return value
