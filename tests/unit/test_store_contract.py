"""The store's contract, on both engines: every test takes ``store_url`` (a new SQLite file,
and a new database on the session's throwaway PostgreSQL cluster; tests/conftest.py) and
never asks which engine it got. What holds for one holds for the other: the schema's
version and the refusal of a newer one, append-only runs and points, a resumed run, the
import of recovered points, the migrations from every earlier version, one line for a
damaged row, schema 8's move of a host's generator version onto its points (old rows),
and the commands above the store reading the same figures.

Real engines both (SQLite, and Debian's PostgreSQL server started by the test session);
no mock.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sizing.cli import app
from sizing.errors import SizingError
from sizing.model import PointKey, PointResult, Sample, Status
from sizing.paths import Database
from sizing.records import LockOwner, PointMeta, SampleMeta
from sizing.store import MIGRATIONS, SCHEMA_VERSION, Store, StoreError
from sizing.store.engines import connect
from sizing.store.recovery import point_record
from tests.labgen import store_lab, store_series

runner = CliRunner()


def cli(*args: str) -> tuple[int, str, str]:
    got = runner.invoke(app, list(args))
    return got.exit_code, got.stdout, got.stderr


def point(value: float | None, *, cores: int = 1, host: str = "h1") -> PointResult:
    return PointResult(
        key=PointKey(host, "baremetal", cores, "off", "rps"),
        status=Status.MEASURED if value is not None else Status.FAILED,
        value=value,
        unit="req/s",
        repetitions=3,
        ci_low=None if value is None else value * 0.99,
        ci_high=None if value is None else value * 1.01,
        flags=("virtualized-host",) if cores == 2 else (),
        metadata=PointMeta.parse({"tool": "wrk", "file_size": 128}),
    )


def samples(values: list[float]) -> list[tuple[int, Sample]]:
    return [
        (rep, Sample("requests_per_second", v, "req/s", SampleMeta.parse({"repetition": rep})))
        for rep, v in enumerate(values, start=1)
    ]


def new_run(store: Store, label: str = "") -> int:
    return store.start_run(
        inventory="/lab/inventories/lab.yml",
        argv=["sizing", "run", "-e", "secret=hunter2"],
        tool_version="0.1",
        options={"cores": [1, 2], "label": label} if label else {"cores": [1, 2]},
    )


def test_a_new_database_has_the_current_version(store_url: Database) -> None:
    assert not Store.exists(store_url)
    with Store(store_url) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.runs() == []
        assert store.latest_run_id() is None
    assert Store.exists(store_url)
    with Store(store_url) as again, Store.open_readonly(store_url) as ro:
        assert again.schema_version == ro.schema_version == SCHEMA_VERSION


def test_readonly_never_creates(store_url: Database) -> None:
    with pytest.raises(StoreError) as got:
        Store.open_readonly(store_url)
    assert str(got.value).startswith(f"{store_url}: ")
    assert "\n" not in str(got.value)
    assert not Store.exists(store_url)


@pytest.mark.parametrize("readonly", [False, True])
def test_a_newer_schema_is_refused(store_url: Database, readonly: bool) -> None:
    Store(store_url).close()
    db = connect(store_url)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="written by a newer sizing") as got:
        Store(store_url, readonly=readonly)
    assert "\n" not in str(got.value)


def test_runs_points_and_samples_round_trip_append_only(store_url: Database) -> None:
    with Store(store_url) as store:
        first = new_run(store, "monday")
        p1 = store.add_point(first, point(120_000.0), samples([119_000.0, 120_000.0, 121_000.0]))
        p2 = store.add_point(first, point(230_000.0, cores=2), samples([230_000.0] * 3))
        store.add_point(first, point(None, cores=4), [])
        store.set_owner(first, LockOwner.parse({"host": "ctl-1", "pid": 4242, "started": 1.5}))
        store.finish_run(first, "complete", "all good")
        second = new_run(store)
    with Store.open_readonly(store_url) as ro:
        runs = ro.runs()
        assert [r.id for r in runs] == [first, second]
        assert runs[0].status == "complete" and runs[0].note == "all good"
        assert runs[0].label == "monday"
        assert runs[0].finished_at is not None and runs[1].finished_at is None
        assert runs[0].owner is not None and runs[0].owner.pid == 4242
        assert "hunter2" not in runs[0].argv  # -e values are never stored
        assert ro.latest_run_id() == second
        points = ro.points(first)
        assert [p.id for p in points] == [p1, p2, points[2].id]
        assert points[0].result.value == 120_000.0
        assert points[0].result.ci_low == pytest.approx(118_800.0)
        assert "virtualized-host" in points[1].result.flags
        assert points[2].result.value is None and points[2].result.status is Status.FAILED
        assert [v for _, s in ro.samples(p1) for v in [s.value]] == [119e3, 120e3, 121e3]
        assert ro.done_keys(first) == {points[0].result.key, points[1].result.key}
        assert ro.points(second) == []
        assert [p.id for p in ro.iter_valid()] == [p1, p2]


def test_a_resumed_run_appends_to_its_points(store_url: Database) -> None:
    with Store.for_run(store_url) as store:
        run = new_run(store)
        store.add_point(run, point(100.0), samples([100.0]))
        store.finish_run(run, "interrupted", "stopped")
    with Store.for_run(store_url) as store:
        store.reopen_run(run)
        assert store.get_run(run).status == "running"
        assert store.get_run(run).finished_at is None
        store.add_point(run, point(200.0, cores=2), samples([200.0]))
        store.finish_run(run, "complete")
    with Store.open_readonly(store_url) as ro:
        assert [p.result.value for p in ro.points(run)] == [100.0, 200.0]
        assert ro.get_run(run).status == "complete"
        with pytest.raises(SizingError, match="no run 99"):
            ro.get_run(99)


def test_a_nan_is_read_as_no_figure_and_an_infinity_is_kept(store_url: Database) -> None:
    """SQLite keeps a NaN as NULL; the server does as SQLite does."""
    with Store(store_url) as store:
        run = new_run(store)
        pid = store.add_point(run, point(math.nan), samples([math.inf, 5.0]))
    with Store.open_readonly(store_url) as ro:
        assert ro.points(run)[0].result.value is None
        assert [s.value for _, s in ro.samples(pid)] == [math.inf, 5.0]


def test_recovered_points_import_once(store_url: Database) -> None:
    with Store(store_url) as store:
        run = new_run(store)
        records = [
            json.loads(json.dumps(point_record(run, point(v, cores=c), samples([v]))))
            for c, v in ((1, 10.0), (2, 20.0))
        ]
        assert store.import_points(records) == (2, 0)
        assert store.import_points(records) == (0, 2)
        assert sorted(p.result.value or 0 for p in store.points(run)) == [10.0, 20.0]
        with pytest.raises(SizingError, match="no run 7"):
            store.import_points([{**records[0], "run_id": 7}])


def test_a_reader_reads_while_a_writer_writes(store_url: Database) -> None:
    with Store.for_run(store_url) as writer:
        run = new_run(writer)
        writer.add_point(run, point(1.0), samples([1.0]))
        with Store.open_readonly(store_url) as reader:
            assert len(reader.points(run)) == 1
            writer.add_point(run, point(2.0, cores=2), samples([2.0]))
            assert len(reader.points(run)) == 2  # each read sees what is committed


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_migrating_from_every_earlier_version(store_url: Database, version: int) -> None:
    """A database left at ``version`` (its migrations applied through the store's one
    sequence, with a run stored as that sizing stored it) is brought up to date and reads
    as a new one."""
    db = connect(store_url)
    for n in range(version):
        MIGRATIONS[n](db)
    db.execute(f"PRAGMA user_version = {version}")
    options = {"cores": [1], "owner": {"host": "ctl", "pid": 7, "started": 2.0}}
    db.execute(
        "INSERT INTO runs (started_at, status, inventory, argv, tool_version, options)"
        " VALUES (?, 'complete', 'inv.yml', ?, '0.1', ?)",
        (1.0, json.dumps(["sizing", "run", "-e", "k=v"]), json.dumps(options)),
    )
    db.commit()
    db.close()
    with Store.open_readonly(store_url) as ro:  # read as it is, never migrated
        assert ro.schema_version == version
        assert ro.runs()[0].owner is not None
    with Store(store_url) as store:
        assert store.schema_version == SCHEMA_VERSION
        run = store.runs()[0]
        assert run.owner is not None and run.owner.pid == 7
        assert "owner" not in run.options.verbatim_unknown
        assert ("k=v" in run.argv) is (version >= 5)  # redacted by migration 5


def test_schema_8_moves_a_hosts_generator_version_onto_its_points(store_url: Database) -> None:
    """Schema 8 (issue 60) on old rows, on either engine: the generator version a run's
    hosts kept moves onto the points measured from them, and what cannot be mended says
    why in ``tool_mended``; a read-only reading (never migrated) reads the same."""
    db = connect(store_url)
    for migrate in MIGRATIONS[:7]:
        migrate(db)
    db.execute("PRAGMA user_version = 7")
    environment = {
        "srv": {"kernel": "6.1", "wrk_version": "4.1.0"},
        "c1": {"kernel": "6.1", "wrk_version": "4.1.0"},
        "c2": {"kernel": "6.1", "wrk_version": "4.2.0"},
    }
    db.execute(
        "INSERT INTO runs (started_at, finished_at, status, inventory, argv, tool_version,"
        " options, environment, note) VALUES (1.0, 2.0, 'complete', 'inv.yml', '[]', '0.1',"
        " '{}', ?, '')",
        (json.dumps(environment),),
    )
    records = {
        "rps": {"tool": "wrk", "clients": ["c1"]},
        "tps": {"tool": "wrk", "clients": ["c1", "c2"]},
        "static-rps": {"nginx": "1.22"},
        "proxy": {"tool": "wrk", "tool_version": "4.2.1", "clients": ["c1"]},
    }
    for profile, meta in records.items():
        db.execute(
            "INSERT INTO points (run_id, created_at, host, platform, cores, ht, profile,"
            " status, value, unit, repetitions, metadata) VALUES (1, 1.5, 'srv', 'baremetal',"
            " 1, 'off', ?, 'measured', 1.0, 'req/s', 3, ?)",
            (profile, json.dumps(meta)),
        )
    db.commit()
    db.close()
    for opener in (Store.open_readonly, Store):
        with opener(store_url) as store:
            env = {p.result.key.profile: p.result.metadata.env for p in store.points(1)}
            hosts = store.get_run(1).environment
            version = store.schema_version
        assert version == (7 if opener == Store.open_readonly else SCHEMA_VERSION)
        assert (env["rps"].tool_version, env["rps"].measured_by) == ("4.1.0", "wrk 4.1.0")
        assert "host facts (schema 8)" in (env["rps"].tool_mended or "")
        assert env["tps"].tool_version is None
        assert "4.1.0, 4.2.0" in (env["tps"].tool_mended or "")
        assert "no generator recorded" in (env["static-rps"].tool_mended or "")
        assert (env["proxy"].tool_version, env["proxy"].tool_mended) == ("4.2.1", None)
        assert all(h.verbatim_facts == {} for h in hosts.values())


def test_a_damaged_row_is_one_line_naming_it(store_url: Database) -> None:
    with Store(store_url) as store:
        new_run(store)
    db = connect(store_url)
    db.execute("UPDATE runs SET options = ? WHERE id = 1", ("{not json",))
    db.commit()
    db.close()
    with Store.open_readonly(store_url) as ro, pytest.raises(StoreError) as got:
        ro.runs()
    assert "damaged row runs id 1" in str(got.value) and "\n" not in str(got.value)
    code, _, err = cli("results", "--db", str(store_url))
    assert code == 3 and "damaged row runs id 1" in err and "Traceback" not in err


def test_another_applications_tables_are_not_taken(store_url: Database) -> None:
    db = connect(store_url)
    db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    db.commit()
    db.close()
    for readonly in (False, True):
        with pytest.raises(StoreError, match="not a sizing results database"):
            Store(store_url, readonly=readonly)


# Hosts and reasons a run may carry (an inventory's names, a tool's words): any text but
# NUL, which no PostgreSQL text column holds (docs/team-store.md)
TEXT = st.text(
    st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=20
)
FIGURE = st.floats(min_value=0.0, max_value=1e12, allow_nan=False)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(host=TEXT, reason=TEXT, values=st.lists(FIGURE, min_size=1, max_size=4))
def test_any_point_reads_back_as_it_was_stored(
    store_url: Database, host: str, reason: str, values: list[float]
) -> None:
    with Store(store_url) as store:
        run = new_run(store)
        result = PointResult(
            key=PointKey(host, "baremetal", 1, "off", "rps"),
            status=Status.INVALID,
            reason=reason,
            value=values[0],
            unit="req/s",
            repetitions=len(values),
            metadata=PointMeta.parse({"tool": "wrk"}),
        )
        pid = store.add_point(run, result, samples(values))
        got = next(p for p in store.points(run) if p.id == pid)
        assert got.result.key == result.key and got.result.reason == reason
        assert got.result.value == values[0]
        assert [s.value for _, s in store.samples(pid)] == values


def test_the_commands_read_the_same_figures_from_either_engine(
    store_url: Database, tmp_path: Path
) -> None:
    with Store(store_url) as store:
        store_lab(store, cores=(1, 2), hts=("off",), guests=False, reps=3)
        store_series(store, {1: [50e3, 51e3, 50.5e3], 2: [98e3, 99e3, 97e3]}, host="r640-09")
    code, out, err = cli("results", "--json", "--db", str(store_url))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["db"] == str(store_url)
    assert [len(r["points"]) for r in doc["runs"]] == [4, 2]
    code, out, err = cli(
        "recommend", "--rps", "100000", "--article-prices", "--json", "--db", str(store_url)
    )
    assert code == 0, err
    assert json.loads(out)
