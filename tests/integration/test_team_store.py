"""A team's results store on PostgreSQL, end to end: two `sizing run`s from two processes
write into one database at the same time, each holding the lease of its own host; one,
standing for another machine, is killed (kill -9); `--resume` from this machine is refused
while its lease lives, and finishes the run once the lease has expired.

Real parts: the session's throwaway PostgreSQL cluster (tests/pgcluster.py), real
playbooks, nginx and wrk on loopback. "Another machine" is a real one to sizing: the first
run's process sees another /etc/machine-id (a bind mount in a mount namespace of its
own, ``unshare -m``), so this machine cannot know its process is gone and only the lease
in the database can say so. Each run's host lock lives under the test's directory
(``sizing_lock_path``); the test asserts no figure (``robust``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sizing.store import Store, StoreError
from sizing.store.leases import leases
from tests.integration.localnginx import INVENTORY, stop_nginx
from tests.integration.procs import load_processes
from tests.pgcluster import Cluster

pytestmark = [pytest.mark.robust]

# every process's lease time (SIZING_LEASE_S): long enough for the refused resume to start
# on a busy machine (it took 5 s on one), short for a test
LEASE_S = "20"
RUN = ["--cores", "1", "--profile", "static-rps", "--warmup", "0"]


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A world-readable temp dir: nginx workers (www-data) must read the content there."""
    path = Path(tempfile.mkdtemp(prefix="sizing-team-"))
    path.chmod(0o755)
    yield path
    for lab in ("a", "b"):
        stop_nginx(path / lab / "nginx.pid")
    shutil.rmtree(path, ignore_errors=True)


def inventory(tmp: Path, lab: str, http: int, https: int) -> Path:
    """A one-host lab named ``lab-<lab>`` (this machine, its own ports, paths and lock)."""
    where = tmp / lab
    where.mkdir()
    where.chmod(0o755)
    text = INVENTORY.format(http=http, https=https, tmp=where, extra="")
    inv = where / "inv.yml"
    inv.write_text(text.replace("localhost:", f"lab-{lab}:"), encoding="utf-8")
    return inv


def sizing(args: list[str], *, machine_id: Path | None = None) -> subprocess.Popen[str]:
    """`sizing ...` as its own process and session; with ``machine_id``, as seen from
    another machine (that file over /etc/machine-id, in a mount namespace of its own)."""
    env = {**os.environ, "SIZING_LEASE_S": LEASE_S}
    argv = [sys.executable, "-m", "sizing", *args]
    if machine_id is not None:
        script = f'mount --bind "{machine_id}" /etc/machine-id && exec "$@"'
        argv = ["unshare", "-m", "sh", "-c", script, "sh", *argv]
    return subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def wait_for(what: str, check: object, proc: subprocess.Popen[str], limit: float = 240) -> None:
    deadline = time.time() + limit
    while time.time() < deadline:
        if callable(check) and check():
            return
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the run ended before {what}: {proc.returncode}\n{out}\n{err}")
        time.sleep(0.2)
    pytest.fail(f"no {what} within {limit} s")


def held(db: str) -> dict[str, int | None]:
    """The live leases: name -> run id (none before the first run made the tables)."""
    try:
        with Store.open_readonly(db) as store:
            return {x.name: x.run_id for x in leases(store) if not x.expired}
    except StoreError:
        return {}


def test_two_machines_runs_share_a_database_and_a_dead_ones_run_is_resumed_elsewhere(
    pg_cluster: Cluster, tmp_path: Path, tools: None
) -> None:
    if shutil.which("unshare") is None:
        pytest.fail("unshare (util-linux) is missing")
    db = pg_cluster.url(pg_cluster.createdb("team"))
    inv_a = inventory(tmp_path, "a", 28390, 28391)
    inv_b = inventory(tmp_path, "b", 28392, 28393)
    other = tmp_path / "machine-id"
    other.write_text("0123456789abcdef0123456789abcdef\n", encoding="utf-8")
    a = sizing(
        ["run", "-i", str(inv_a), *RUN, "--duration", "4", "--repeat", "2", "--db", db],
        machine_id=other,
    )
    b = sizing(["run", "-i", str(inv_b), *RUN, "--duration", "3", "--repeat", "2", "--db", db])
    try:
        wait_for("both hosts' leases", lambda: {"host:lab-a", "host:lab-b"} <= set(held(db)), a)
        both = held(db)
        assert both["host:lab-a"] != both["host:lab-b"]  # each run holds its own host
        assert both["host:lab-a"] == both[f"run:{both['host:lab-a']}"]
        run_a = both["host:lab-a"]
        wait_for("the first run's load", lambda: load_processes("28390"), a)
        os.kill(a.pid, signal.SIGKILL)  # the other machine dies: sizing alone, as kill -9
        a.communicate(timeout=30)
        killed_at = time.monotonic()
        # from this machine, its process cannot be seen: refused while its lease lives
        early = sizing(["run", "--resume", str(run_a), "--db", db])
        out, err = early.communicate(timeout=120)
        assert early.returncode == 2, out + err
        assert f"run {run_a} is still measuring" in err and "its lease expires in" in err
        assert time.monotonic() - killed_at < float(LEASE_S)  # refused before it expired
        out_b, err_b = b.communicate(timeout=300)
        assert b.returncode == 0, out_b + err_b
        deadline = time.time() + 60  # the dead run's bounded load ends by itself
        while time.time() < deadline and load_processes("28390"):
            time.sleep(0.5)
        while time.monotonic() - killed_at < float(LEASE_S) + 1:
            time.sleep(0.2)
        late = sizing(["run", "--resume", str(run_a), "--db", db])
        out, err = late.communicate(timeout=300)
        assert late.returncode == 0, out + err
        said = " ".join(err.split())
        assert f"run {run_a}: took over its lease" in said
        assert "lab-a: took over the run lock of run" in said  # the dead one's host lock
    finally:
        for p in (a, b):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate(timeout=30)
    with Store.open_readonly(db) as store:
        runs = {r.id: r for r in store.runs()}
        assert runs[run_a].status == "complete"
        assert len(runs) == 2 and all(r.status == "complete" for r in runs.values())
        assert {p.result.key.host for p in store.points()} == {"lab-a", "lab-b"}
        assert leases(store) == []  # every lease given back
    doc = json.loads(
        subprocess.run(
            [sys.executable, "-m", "sizing", "results", "--json", "--db", db],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert sorted(r["run_id"] for r in doc["runs"]) == sorted(runs)
