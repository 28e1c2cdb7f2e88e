"""A team's database on a server that cannot be used: a wrong or missing password, no
server at the address, no such database. Each is one line naming the database and the
store's exit code (6), for a reading command and a writing one. The password comes from
PGPASSWORD, ~/.pgpass (PGPASSFILE) or a service file, never from the command line: an
address that carries one is refused without repeating it, and a password given the right
way reaches no output and nothing stored.

Against the session's throwaway PostgreSQL cluster (tests/pgcluster.py); no mock.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.errors import ExitStatus
from sizing.model import PointKey, PointResult, Status
from sizing.paths import database
from sizing.records import PointMeta
from sizing.store import Store, StoreError, recovery_path
from sizing.store.engines import connect
from sizing.store.recovery import point_record
from tests.pgcluster import PASSWORD, Cluster

runner = CliRunner()
POINT = PointResult(
    key=PointKey("h1", "baremetal", 1, "off", "rps"),
    status=Status.MEASURED,
    value=1000.0,
    unit="req/s",
    repetitions=1,
    metadata=PointMeta.parse({"tool": "wrk"}),
)


def cli(*args: str) -> tuple[int, str, str]:
    got = runner.invoke(app, list(args))
    return got.exit_code, got.stdout, got.stderr


@pytest.fixture
def no_pg_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No password nor service of the machine's user reaches the test (HOME is empty)."""
    for var in ("PGPASSWORD", "PGPASSFILE", "PGSERVICE", "PGSERVICEFILE", "PGUSER", "PGHOST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PGSYSCONFDIR", str(tmp_path))
    return tmp_path


def one_store_line(code: int, out: str, err: str, url: str, words: str) -> None:
    assert code == ExitStatus.STORE, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {url}: ") and words in lines[0], err
    assert "Traceback" not in err


def faults(cluster: Cluster) -> dict[str, tuple[str, str]]:
    """Each fault's address and the words its line must say."""
    name = cluster.createdb("f")
    return {
        "wrong password": (cluster.url(name, "sizing_pw"), "refused the login"),
        "no server": (f"postgresql://sizing@/{name}?host={cluster.root}/none", "cannot reach"),
        "no database": (cluster.url("no_such_db"), "no such database"),
    }


@pytest.mark.parametrize("fault", ["wrong password", "no server", "no database"])
@pytest.mark.parametrize("command", ["results", "import"])
def test_a_server_that_cannot_be_used_is_one_line_and_the_store_code(
    pg_cluster: Cluster,
    no_pg_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    fault: str,
    command: str,
) -> None:
    monkeypatch.setenv("PGPASSWORD", "not-" + PASSWORD)
    url, words = faults(pg_cluster)[fault]
    rec = tmp_path / "points.recovery.jsonl"
    rec.write_text(json.dumps(point_record(1, POINT, [])) + "\n", encoding="utf-8")
    args = ["results", "--json"] if command == "results" else ["import", str(rec)]
    code, out, err = cli(*args, "--db", url)
    one_store_line(code, out, err, url, words)
    assert PASSWORD not in err


def test_no_password_at_all_is_the_refused_login(pg_cluster: Cluster, no_pg_env: Path) -> None:
    url = pg_cluster.url(pg_cluster.createdb("f"), "sizing_pw")
    code, out, err = cli("results", "--db", url)
    one_store_line(code, out, err, url, "refused the login")


@pytest.mark.parametrize("where", ["user", "query"])
def test_an_address_with_a_password_is_refused_without_repeating_it(
    pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    name = pg_cluster.createdb("f")
    host = pg_cluster.root
    url = (
        f"postgresql://sizing_pw:{PASSWORD}@/{name}?host={host}"
        if where == "user"
        else f"postgresql://sizing_pw@/{name}?host={host}&password={PASSWORD}"
    )
    code, out, err = cli("results", "--db", url)
    assert code == ExitStatus.USAGE and out == ""
    assert "carries a password" in err and len(err.strip().splitlines()) == 1
    assert PASSWORD not in err
    monkeypatch.setenv("SIZING_DB", url)
    code, out, err = cli("results")
    assert code == ExitStatus.USAGE and "SIZING_DB" in err and PASSWORD not in err + out


def _write_and_read(url: str) -> str:
    """A run stored and read back through the commands, and everything the database then
    holds, as text."""
    with Store(url) as store:
        store.start_run(inventory="inv.yml", argv=["sizing", "run"], tool_version="0", options={})
    code, out, err = cli("results", "--json", "--db", url)
    assert code == 0, err
    db = connect(url)
    held = [
        json.dumps(list(r), default=str)
        for table in ("runs", "points", "samples", "sizing_schema")
        for r in db.execute(f"SELECT * FROM {table}").fetchall()
    ]
    db.close()
    return out + err + "\n".join(held)


def test_the_password_from_pgpassword_is_used_and_never_shown_nor_stored(
    pg_cluster: Cluster, no_pg_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    url = pg_cluster.url(pg_cluster.createdb("f"), "sizing_pw")
    everything = _write_and_read(url)
    assert "sizing_pw" in everything  # the address is shown: the read went through
    assert PASSWORD not in everything


def test_the_password_from_a_pgpass_file_and_from_a_service_file(
    pg_cluster: Cluster, no_pg_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = pg_cluster.createdb("f")
    pgpass = no_pg_env / ".pgpass"
    pgpass.write_text(f"*:*:{name}:sizing_pw:{PASSWORD}\n", encoding="utf-8")
    pgpass.chmod(0o600)  # libpq ignores a file others may read
    assert PASSWORD not in _write_and_read(pg_cluster.url(name, "sizing_pw"))
    services = no_pg_env / "pg_service.conf"
    services.write_text(
        f"[lab]\nhost={pg_cluster.root}\ndbname={name}\nuser=sizing_pw\n", encoding="utf-8"
    )
    monkeypatch.setenv("PGSERVICEFILE", str(services))
    code, out, err = cli("results", "--json", "--db", "postgresql://?service=lab")
    assert code == 0, err
    assert json.loads(out)["runs"] and PASSWORD not in out + err


def test_a_point_the_server_cannot_take_is_kept_for_import(
    pg_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server ends the run's connection mid-run (as a restart or a cut network does):
    the sweep's own ``store_point`` keeps the point in the recovery file (in the user's
    data directory: nothing sits beside a server's database), names the import command
    and ends the run with the store's error; the import puts the point back."""
    from sizing.model import RunStatus, RunSummary
    from sizing.sweep import OpenRun
    from sizing.sweep.stages import store_point

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    name = pg_cluster.createdb("gone")
    url = database(pg_cluster.url(name))
    store = Store.for_run(url)
    run_id = store.start_run(inventory="i", argv=[], tool_version="t", options={})
    notes: list[str] = []

    class Notes:
        def note(self, message: str) -> None:
            notes.append(message)

    class Context:  # the stage reads only the context's progress
        progress = Notes()

    summary = RunSummary(run_id=run_id, status=RunStatus.RUNNING)
    pg_cluster.sql(
        "postgres",
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        f" WHERE datname = '{name}' AND application_name = 'sizing'",
    )
    with pytest.raises(StoreError) as got:
        store_point(Context(), OpenRun(store, summary), POINT, [])  # type: ignore[arg-type]
    assert got.value.code == ExitStatus.STORE
    assert "the connection to the database server was lost" in str(got.value)
    kept = recovery_path(url)
    assert kept.is_relative_to(tmp_path / "data" / "sizing" / "servers") and kept.is_file()
    [note] = notes
    assert f"import it with `sizing import {kept} --db {url}`" in note
    store.finish_run(run_id, "failed", "the server went away")  # a new connection
    store.close()
    code, out, err = cli("import", str(kept), "--db", url)
    assert code == 0 and out.startswith("imported 1 point(s) into run 1"), err
    with Store.open_readonly(url) as st:
        assert [p.result.value for p in st.points(run_id)] == [POINT.value]
        assert st.get_run(run_id).status == "failed"
