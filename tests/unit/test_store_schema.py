"""The versioned results store: migrations from every earlier schema, read-only opening,
and one clear line (a StoreError naming the file) for anything that is not a usable sizing
database, which is left byte-for-byte unchanged."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from sizing.cli import app
from sizing.model import PointKey, PointResult, Sample, Status
from sizing.records import RunOptionsRecord, SampleMeta
from sizing.store import APPLICATION_ID, SCHEMA_VERSION, Store, StoreError

SCHEMAS = Path(__file__).parent.parent / "data" / "store"
runner = CliRunner()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def first_schema_db(path: Path) -> Path:
    """A database as sizing wrote it before the schema was versioned (commit d6f0b9c)."""
    db = sqlite3.connect(path)
    db.executescript((SCHEMAS / "schema_d6f0b9c.sql").read_text())
    db.execute(
        "INSERT INTO runs (started_at, finished_at, status, inventory, argv, tool_version,"
        " options, environment, note) VALUES (1.0, 2.0, 'complete', 'inv.yml',"
        " '[\"sizing\", \"run\"]', '0.1', '{\"cores\": [1]}', '{}', '')"
    )
    db.execute(
        "INSERT INTO points (run_id, created_at, host, platform, cores, ht, profile, status,"
        " reason, value, unit, repetitions, spread, ci_low, ci_high, flags, metadata)"
        " VALUES (1, 1.5, 'local', 'baremetal', 1, 'off', 'rps', 'measured', '', 130000.0,"
        " 'req/s', 3, 0.01, 129000.0, 131000.0, '[]', '{\"nginx\": \"1.22\"}')"
    )
    db.execute(
        "INSERT INTO samples (point_id, repetition, metric, value, unit, metadata)"
        " VALUES (1, 1, 'rps', 130000.0, 'req/s', '{}')"
    )
    db.commit()
    db.close()
    return path


def pragma(path: Path, name: str) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute(f"PRAGMA {name}").fetchone()[0])
    finally:
        db.close()


def test_a_new_database_has_the_current_version(tmp_path: Path) -> None:
    db = tmp_path / "new" / "r.sqlite"
    Store(db).close()
    assert pragma(db, "user_version") == SCHEMA_VERSION
    assert pragma(db, "application_id") == APPLICATION_ID


def test_migrating_from_the_first_schema_keeps_every_row(tmp_path: Path) -> None:
    db = first_schema_db(tmp_path / "old.sqlite")
    assert pragma(db, "user_version") == 0
    with Store(db) as store:
        assert store.schema_version == SCHEMA_VERSION
        (run,) = store.runs()
        assert (run.status, run.options) == ("complete", RunOptionsRecord(cores=(1,)))
        (point,) = store.points(run.id)
        assert point.result.key == PointKey("local", "baremetal", 1, "off", "rps")
        assert point.result.value == 130000.0
        # an rps point stored before it load-balanced: nginx served the file itself
        assert point.result.metadata.to_json() == {"nginx": "1.22", "role": "web"}
        assert store.samples(point.id) == [(1, Sample("rps", 130000.0, "req/s", SampleMeta()))]
        # and it is writable in the new schema
        run2 = store.start_run(inventory="i", argv=[], tool_version="t", options={})
        assert run2 == 2
    assert pragma(db, "application_id") == APPLICATION_ID
    index = sqlite3.connect(db).execute(
        "SELECT name FROM sqlite_master WHERE type='index' AND name='points_key'"
    )
    assert index.fetchone() is not None
    # the migration wrote the record in this sizing's shape
    (raw,) = sqlite3.connect(db).execute("SELECT metadata FROM points").fetchone()
    assert json.loads(raw) == {"nginx": "1.22", "role": "web"}


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_migrating_from_every_versioned_schema(tmp_path: Path, version: int) -> None:
    """A database left at each intermediate version reaches the current one."""
    from sizing.store import MIGRATIONS

    path = tmp_path / f"v{version}.sqlite"
    db = sqlite3.connect(path)
    for migrate in MIGRATIONS[:version]:
        migrate(db)
    db.execute(f"PRAGMA user_version = {version}")
    db.commit()
    db.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.runs() == []


def test_opening_twice_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    Store(db).close()
    before = digest(db)
    Store(db).close()
    assert digest(db) == before


def test_readonly_reads_an_old_database_without_touching_it(tmp_path: Path) -> None:
    db = first_schema_db(tmp_path / "old.sqlite")
    before = digest(db)
    with Store.open_readonly(db) as store:
        assert [r.id for r in store.runs()] == [1]
        assert len(list(store.iter_valid())) == 1
        # never migrated, read the same: the store upgrades the record as it reads it
        (point,) = store.points(1)
        assert point.result.metadata.workload.role == "web"
    assert digest(db) == before
    assert pragma(db, "user_version") == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.sqlite"]  # no -journal/-wal


def test_readonly_never_writes(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    Store(db).close()
    with Store.open_readonly(db) as store, pytest.raises(StoreError, match="cannot write"):
        store.start_run(inventory="i", argv=[], tool_version="t", options={})


def test_readonly_never_creates(tmp_path: Path) -> None:
    db = tmp_path / "absent.sqlite"
    with pytest.raises(StoreError, match="no such results database"):
        Store.open_readonly(db)
    assert not db.exists()


def foreign(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    db.execute("INSERT INTO customers (name) VALUES ('acme')")
    db.commit()
    db.close()


def foreign_app_id(path: Path) -> None:
    foreign(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA application_id = 1234")
    db.close()


def damaged(path: Path) -> None:
    path.write_bytes(os.urandom(8192))


def damaged_after_header(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))


def test_an_empty_file_is_no_data_a_writer_creates_the_database_in_it(tmp_path: Path) -> None:
    """Issue 45: a disk full when the database was first created left a 0-byte file, which
    every command refused. 0 bytes is not data: readers find nothing measured, a writer
    creates the database there."""
    db = tmp_path / "x.sqlite"
    db.write_bytes(b"")
    assert not Store.exists(db)
    res = runner.invoke(app, ["results", "--db", str(db)])
    assert res.exit_code == 0 and res.stdout.startswith("nothing measured yet"), res.output
    res = runner.invoke(app, ["results", "--json", "--db", str(db)])
    assert res.exit_code == 0 and json.loads(res.stdout)["runs"] == [], res.output
    with Store(db) as store:
        store.start_run(inventory="i", argv=[], tool_version="t", options={})
    assert Store.exists(db)
    with Store.open_readonly(db) as store:
        assert len(store.runs()) == 1


def test_dev_null_is_not_taken_for_an_empty_database() -> None:
    with pytest.raises(StoreError, match="not a regular file"):
        Store("/dev/null").close()


def newer(path: Path) -> None:
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()


def truncated_sizing(path: Path) -> None:
    """A sizing database whose samples table is gone."""
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE samples")
    db.commit()
    db.close()


UNUSABLE: list[tuple[Callable[[Path], None], str]] = [
    (foreign, "not a sizing results database (it holds the tables customers)"),
    (foreign_app_id, "not a sizing results database (application id 0x4d2)"),
    (damaged, "not an SQLite database"),
    (damaged_after_header, "not an SQLite database (damaged, or a file of another kind)"),
    (newer, f"written by a newer sizing (schema version {SCHEMA_VERSION + 1}"),
    (truncated_sizing, "damaged sizing results database"),
]


@pytest.mark.parametrize(("make", "message"), UNUSABLE, ids=[m.__name__ for m, _ in UNUSABLE])
@pytest.mark.parametrize("readonly", [False, True], ids=["write", "readonly"])
def test_unusable_databases_are_one_line_and_left_unchanged(
    tmp_path: Path, make: Callable[[Path], None], message: str, readonly: bool
) -> None:
    db = tmp_path / "x.sqlite"
    make(db)
    before = digest(db)
    with pytest.raises(StoreError) as info:
        Store(db, readonly=readonly).close()
    text = str(info.value)
    assert text.startswith(f"{db}: ")
    assert message in text
    assert "\n" not in text
    assert digest(db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.sqlite"]


@pytest.mark.parametrize(("make", "message"), UNUSABLE, ids=[m.__name__ for m, _ in UNUSABLE])
@pytest.mark.parametrize(
    "command",
    [["results"], ["results", "--json"], ["recommend", "--rps", "1000", "--source", "measured"]],
)
def test_commands_refuse_unusable_databases_in_one_line(
    tmp_path: Path, make: Callable[[Path], None], message: str, command: list[str]
) -> None:
    db = tmp_path / "x.sqlite"
    make(db)
    before = digest(db)
    result = runner.invoke(app, [*command, "--db", str(db)])
    assert result.exit_code == 3, result.output
    assert result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr
    assert "internal error" not in result.stderr
    assert result.stdout == ""
    assert digest(db) == before


def bad_row(tmp_path: Path, table: str, column: str, value: str) -> Path:
    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        run = store.start_run(inventory="i", argv=[], tool_version="t", options={})
        store.add_point(
            run,
            PointResult(PointKey("h", "baremetal", 1, "off", "rps"), Status.MEASURED, value=1.0),
            [(1, Sample("rps", 1.0, "req/s"))],
        )
    raw = sqlite3.connect(db)
    raw.execute(f"UPDATE {table} SET {column} = ?", (value,))
    raw.commit()
    raw.close()
    return db


@pytest.mark.parametrize(
    ("table", "column", "value", "message"),
    [
        ("points", "status", "weird", "damaged row points id 1: ValueError: 'weird'"),
        ("points", "flags", "{not json", "damaged row points id 1: JSONDecodeError"),
        (
            "points",
            "metadata",
            "[1, 2]",
            "damaged row points id 1: ValueError: expected a JSON dict",
        ),
        ("points", "cores", "many", "damaged row points id 1: ValueError"),
        ("runs", "options", "nope", "damaged row runs id 1: JSONDecodeError"),
        ("runs", "started_at", "yesterday", "damaged row runs id 1: ValueError"),
        ("samples", "metadata", "null", "damaged row samples id 1: ValueError"),
    ],
)
def test_damaged_rows_are_one_line(
    tmp_path: Path, table: str, column: str, value: str, message: str
) -> None:
    db = bad_row(tmp_path, table, column, value)
    with Store.open_readonly(db) as store, pytest.raises(StoreError, match="damaged row") as info:
        for run in store.runs():
            for p in store.points(run.id):
                store.samples(p.id)
    assert message in str(info.value)
    assert str(info.value).startswith(f"{db}: ")


def test_damaged_rows_through_the_cli(tmp_path: Path) -> None:
    db = bad_row(tmp_path, "points", "status", "weird")
    result = runner.invoke(app, ["results", "--db", str(db), "--json"])
    assert result.exit_code == 3
    assert "damaged row points id 1" in result.stderr
    assert "internal error" not in result.stderr


@pytest.mark.parametrize("readonly", [False, True], ids=["write", "readonly"])
def test_a_lock_held_past_the_timeout_is_one_line(tmp_path: Path, readonly: bool) -> None:
    db = tmp_path / "r.sqlite"
    Store(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError) as info:
            with Store(db, readonly=readonly, timeout=0.2) as store:
                store.runs()
                store.start_run(inventory="i", argv=[], tool_version="t", options={})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert str(info.value) == (
        f"{db}: the results database is locked by another process (waited 0.2 s); "
        "try again when it has finished"
    )


def test_a_directory_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        Store(tmp_path)


def test_json_options_round_trip(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        run = store.start_run(
            inventory="i", argv=["a"], tool_version="t", options={"path": Path("/x")}
        )
        assert store.get_run(run).options.verbatim_unknown == {"path": "/x"}
        assert json.loads(store.get_run(run).argv) == ["a"]


def test_a_fixed_rate_point_stored_under_its_profiles_generator_names_the_tool_that_ran(
    tmp_path: Path,
) -> None:
    """Schema 6 (issue 60): before it, a fixed-rate point whose profile named wrk ran on
    vegeta, and was stored as wrk with vegeta's version; the migration (and a read-only
    reading) names vegeta and says why. An open-loop tool's points are left alone."""
    records = {
        "latency": {
            "mode": "fixed-rate",
            "tool": "wrk",
            "generator": "wrk",
            "tool_version": "12.12.0",
        },
        "latency-100k": {
            "mode": "fixed-rate",
            "tool": "oha",
            "generator": "oha",
            "tool_version": "1.4.5",
        },
        "rps": {"tool": "wrk", "generator": "wrk", "tool_version": "4.1.0"},
    }
    path = database_at(5, tmp_path / "v5.sqlite", records)
    for opener in (Store.open_readonly, Store):
        with opener(path) as store:
            env = {p.result.key.profile: p.result.metadata.env for p in store.points(1)}
        assert (env["latency"].tool, env["latency"].generator) == ("vegeta", "vegeta")
        assert env["latency"].tool_version == "12.12.0"
        assert "stored as wrk" in (env["latency"].tool_mended or "")
        assert (env["latency-100k"].tool, env["latency-100k"].tool_mended) == ("oha", None)
        assert (env["rps"].tool, env["rps"].tool_mended) == ("wrk", None)
    raw = dict(sqlite3.connect(path).execute("SELECT profile, metadata FROM points").fetchall())
    assert json.loads(raw["latency"])["tool"] == "vegeta"


def database_at(
    version: int, path: Path, records: dict[str, Any], environment: dict[str, Any] | None = None
) -> Path:
    """A database left at schema ``version``: one run (its hosts' ``environment``) with one
    point of host ``srv`` per profile in ``records`` (its stored metadata)."""
    from sizing.store import MIGRATIONS

    db = sqlite3.connect(path)
    for migrate in MIGRATIONS[:version]:
        migrate(db)
    db.execute(f"PRAGMA user_version = {version}")
    db.execute(
        "INSERT INTO runs (started_at, finished_at, status, inventory, argv, tool_version,"
        " options, environment, note) VALUES (1.0, 2.0, 'complete', 'inv.yml', '[]', '0.1',"
        " '{}', ?, '')",
        (json.dumps(environment or {}),),
    )
    for profile, meta in records.items():
        db.execute(
            "INSERT INTO points (run_id, created_at, host, platform, cores, ht, profile,"
            " status, value, unit, repetitions, metadata) VALUES (1, 1.5, 'srv', 'baremetal',"
            " 1, 'off', ?, 'measured', 1.0, 'req/s', 3, ?)",
            (profile, json.dumps(meta)),
        )
    db.commit()
    db.close()
    return path


def test_a_hosts_generator_version_moves_onto_its_points(tmp_path: Path) -> None:
    """Schema 8 (issue 60): a generator's version is its point's, never its host's. The
    version the run's hosts kept moves onto the points its generator measured from them (the
    point's clients; every host when it recorded none), only where the point has none; what
    cannot be mended (clients that disagree, a point that recorded no generator) says so in
    ``tool_mended``. A read-only reading of the old database reads the same."""
    environment = {
        "srv": {"kernel": "6.1", "wrk_version": "4.1.0"},
        "c1": {"kernel": "6.1", "wrk_version": "4.1.0"},
        "c2": {"kernel": "6.1", "wrk_version": "4.2.0"},
    }
    records = {
        "rps": {"tool": "wrk", "clients": ["c1"]},
        "tps": {"tool": "wrk", "clients": ["c1", "c2"]},
        "static-rps": {"nginx": "1.22"},
        "proxy": {"tool": "wrk", "tool_version": "4.2.1", "clients": ["c1"]},
        "latency": {"mode": "fixed-rate", "tool": "vegeta", "tool_version": "12.12.0"},
    }
    path = database_at(7, tmp_path / "v7.sqlite", records, environment)
    before = digest(path)
    for opener in (Store.open_readonly, Store):
        with opener(path) as store:
            env = {p.result.key.profile: p.result.metadata.env for p in store.points(1)}
            hosts = store.get_run(1).environment
        assert (env["rps"].tool_version, env["rps"].measured_by) == ("4.1.0", "wrk 4.1.0")
        assert "host facts (schema 8)" in (env["rps"].tool_mended or "")
        assert env["tps"].tool_version is None
        assert "unknown" in (env["tps"].tool_mended or "")
        assert "4.1.0, 4.2.0" in (env["tps"].tool_mended or "")
        assert env["static-rps"].tool is None
        assert "no generator recorded" in (env["static-rps"].tool_mended or "")
        assert (env["proxy"].tool_version, env["proxy"].tool_mended) == ("4.2.1", None)
        assert (env["latency"].measured_by, env["latency"].tool_mended) == ("vegeta 12.12.0", None)
        # no host keeps a generator's version, not even as a foreign fact
        assert {h.kernel for h in hosts.values()} == {"6.1"}
        assert all(h.verbatim_facts == {} for h in hosts.values())
        if opener == Store.open_readonly:
            assert digest(path) == before
    db = sqlite3.connect(path)
    (raw_env,) = db.execute("SELECT environment FROM runs").fetchone()
    assert all("wrk_version" not in facts for facts in json.loads(raw_env).values())
    raw = dict(db.execute("SELECT profile, metadata FROM points").fetchall())
    assert json.loads(raw["rps"])["tool_version"] == "4.1.0"
    assert json.loads(raw["latency"]) == records["latency"]


_NAMES = st.sampled_from(["srv", "c1", "c2", "c3"])
_VERSIONS = st.dictionaries(_NAMES, st.sampled_from(["4.1.0", "4.2.0", "5"]), max_size=4)
_RECORDS = st.fixed_dictionaries(
    {},
    optional={
        "tool": st.sampled_from(["wrk", "vegeta", "oha", "h2load"]),
        "tool_version": st.sampled_from(["4.2.1", "", "12.12.0"]),
        "clients": st.lists(_NAMES, max_size=3),
        "nginx": st.just("1.22"),
    },
)


@given(data=_RECORDS, versions=_VERSIONS)
def test_a_moved_version_is_one_of_its_hosts_and_nothing_else_changes(
    data: dict[str, Any], versions: dict[str, str]
) -> None:
    """Whatever a stored point and its hosts held: the upgrade changes only the version and
    the note, sets a version only where the point had none and only to one its hosts held,
    and applying it twice changes nothing more."""
    from sizing.store.schema import upgrade_point_version

    new = upgrade_point_version(data, versions)
    changed = {k for k in set(new) | set(data) if new.get(k) != data.get(k)}
    assert changed <= {"tool_version", "tool_mended"}
    if "tool_version" in changed:
        assert not data.get("tool_version")
        assert new["tool_version"] in versions.values()
        assert new["tool_mended"]
    assert upgrade_point_version(new, versions) == new
    assert upgrade_point_version(data, {}) == data
