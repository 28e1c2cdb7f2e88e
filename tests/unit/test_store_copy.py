"""``sizing store copy FROM TO``: a SQLite store copied into PostgreSQL and back gives the
same ``sizing results --json``, byte for byte after sorting (the document's ``db``, which
names the database it read, aside); ids are kept, a resumed run goes on numbering after
them, an older source arrives up to date, and a destination that holds anything is refused
in one line.

SQLite files and databases on the session's throwaway PostgreSQL cluster; no mock.
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
from sizing.errors import ExitStatus
from sizing.model import PointKey, PointResult, Status
from sizing.paths import Database
from sizing.records import LockOwner, PointMeta
from sizing.store import MIGRATIONS, SCHEMA_VERSION, Store
from sizing.store.engines import connect
from sizing.store.leases import take
from sizing.store.recovery import point_record
from tests.labgen import store_container_run, store_lab, store_series
from tests.pgcluster import Cluster
from tests.unit.test_store_contract import new_run, samples

runner = CliRunner()
OTHER = LockOwner(controller="another-machine", controller_host="ctl-9", pid=99, pid_start=1)


def cli(*args: str) -> tuple[int, str, str]:
    got = runner.invoke(app, list(args))
    return got.exit_code, got.stdout, got.stderr


def results_json(db: str, *more: str) -> str:
    """``results --json`` as sorted text, without the ``db`` that names where it read."""
    code, out, err = cli("results", "--json", *more, "--db", db)
    assert code == 0, err
    doc = json.loads(out)
    doc.pop("db")
    return json.dumps(doc, sort_keys=True)


def filled(path: Path) -> Path:
    """A store with what runs leave: a lab run, a series, a container's invalid points, a
    failed point, a NaN figure and an infinite sample, recovered points imported."""
    with Store(path) as store:
        store_lab(store, cores=(1, 2), reps=3)
        store_series(store, {1: [50e3, 51e3, 50.5e3], 2: [98e3, 99e3]}, host="r640-09")
        store_container_run(store)
        run = new_run(store, "odd")
        failed = PointResult(
            key=PointKey("h1", "baremetal", 4, "on", "tps"),
            status=Status.FAILED,
            reason="nginx did not start",
            metadata=PointMeta.parse({"tool": "wrk"}),
        )
        store.add_point(run, failed, [])
        odd = PointResult(
            key=PointKey("h1", "baremetal", 1, "off", "rps"),
            status=Status.MEASURED,
            value=math.nan,
            unit="req/s",
            repetitions=2,
            metadata=PointMeta.parse({"tool": "wrk"}),
        )
        store.add_point(run, odd, samples([math.inf, 7.0]))
        rec = json.loads(json.dumps(point_record(run, odd, samples([3.0]))))
        store.import_points([rec])
        # left running by another machine, whose lease has expired: `results` says abandoned
        store.set_owner(run, OTHER)
        take(store, [f"run:{run}"], run_id=run, token="t0", owner=OTHER, seconds=0.01)
    return path


def test_sqlite_to_postgresql_and_back_gives_the_same_results(
    pg_cluster: Cluster, tmp_path: Path
) -> None:
    first = str(filled(tmp_path / "a.sqlite"))
    server = pg_cluster.url(pg_cluster.createdb("copy"))
    back = str(tmp_path / "b.sqlite")
    code, out, err = cli("store", "copy", first, server)
    assert code == 0, err
    assert out.startswith("copied 4 run(s), ") and f"into {server}" in out
    code, out, err = cli("store", "copy", server, back)
    assert code == 0, err
    for more in ((), ("--bases",)):
        a, p, b = (results_json(db, *more) for db in (first, server, back))
        assert a == p == b
    shown = json.loads(results_json(back))["runs"]
    assert [r["status"] for r in shown] == ["complete"] * 3 + ["abandoned"]  # the lease's say
    every = []
    for db in (first, server, back):  # and every sample, which the document sums up
        with Store.open_readonly(db) as store:
            every.append([(p.id, store.samples(p.id)) for p in store.points()])
    assert every[0] == every[1] == every[2] and len(every[0]) == 23
    with Store(server) as store:  # a new run follows the copied ids
        assert new_run(store) == 5


def test_a_destination_that_holds_anything_is_refused_in_one_line(
    pg_cluster: Cluster, tmp_path: Path
) -> None:
    source = str(filled(tmp_path / "a.sqlite"))
    server = pg_cluster.url(pg_cluster.createdb("copy"))
    assert cli("store", "copy", source, server)[0] == 0
    before = results_json(server)
    for dst in (server, source):
        code, out, err = cli("store", "copy", str(tmp_path / "a.sqlite"), dst)
        assert code == ExitStatus.INPUT and out == ""
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert results_json(server) == before
    code, _, err = cli("store", "copy", str(tmp_path / "none.sqlite"), str(tmp_path / "c.sqlite"))
    assert code == ExitStatus.INPUT and "no such results database" in err
    assert not (tmp_path / "c.sqlite").exists()


def test_an_older_source_arrives_up_to_date(store_url: Database, tmp_path: Path) -> None:
    """A store left at schema 3 (the owner inside the options, -e values unredacted)."""
    old = tmp_path / "old.sqlite"
    db = connect(old)
    for migrate in MIGRATIONS[:3]:
        migrate(db)
    db.execute("PRAGMA user_version = 3")
    db.execute(
        "INSERT INTO runs (started_at, status, inventory, argv, tool_version, options)"
        " VALUES (1.0, 'complete', 'inv.yml', ?, '0.1', ?)",
        (
            json.dumps(["sizing", "run", "-e", "token=abc"]),
            json.dumps({"cores": [1], "owner": {"host": "ctl", "pid": 9, "started": 2.0}}),
        ),
    )
    db.commit()
    db.close()
    code, _, err = cli("store", "copy", str(old), str(store_url))
    assert code == 0, err
    assert f"(schema version {SCHEMA_VERSION})" in _
    with Store.open_readonly(str(store_url)) as store:
        run = store.runs()[0]
        assert store.schema_version == SCHEMA_VERSION
        assert run.owner is not None and run.owner.pid == 9
        assert "abc" not in run.argv  # migration 5 ran on the copy
    with Store.open_readonly(old) as store:
        assert store.schema_version == 3  # the source is only read


FIGURE = st.floats(min_value=0.0, max_value=1e12, allow_nan=False)


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(values=st.lists(st.lists(FIGURE, min_size=1, max_size=3), min_size=1, max_size=4))
def test_any_store_copies_both_ways_unchanged(
    pg_cluster: Cluster, tmp_path_factory: pytest.TempPathFactory, values: list[list[float]]
) -> None:
    where = tmp_path_factory.mktemp("copy")
    with Store(where / "a.sqlite") as store:
        run = new_run(store)
        for cores, reps in enumerate(values, start=1):
            result = PointResult(
                key=PointKey("h", "baremetal", cores, "off", "rps"),
                status=Status.MEASURED,
                value=sorted(reps)[len(reps) // 2],
                unit="req/s",
                repetitions=len(reps),
                metadata=PointMeta.parse({"tool": "wrk"}),
            )
            store.add_point(run, result, samples(reps))
    server = pg_cluster.url(pg_cluster.createdb("prop"))
    assert cli("store", "copy", str(where / "a.sqlite"), server)[0] == 0
    assert cli("store", "copy", server, str(where / "b.sqlite"))[0] == 0
    assert results_json(str(where / "a.sqlite")) == results_json(str(where / "b.sqlite"))
    assert results_json(server) == results_json(str(where / "a.sqlite"))
