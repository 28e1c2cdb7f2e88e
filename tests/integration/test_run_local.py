"""`sizing run` end to end on this machine: real playbook, real nginx, real wrk."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.store import Store
from tests.integration.localnginx import stop_nginx, upstream_vars, write_inventory
from tests.integration.procs import load_processes

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
pytestmark = [pytest.mark.robust]  # asserts no figure; its own run lock: see pyproject


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A world-readable temp dir: nginx workers (www-data) must read the content there."""
    path = Path(tempfile.mkdtemp(prefix="sizing-it-"))
    path.chmod(0o755)
    yield path
    stop_nginx(path / "nginx.pid")
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def local_inv(tmp_path: Path) -> Iterator[Path]:
    yield write_inventory(tmp_path, 28080, 28443, extra=upstream_vars(tmp_path, 28180))
    stop_nginx(tmp_path / "up" / "nginx.pid")


# The 1,2,4,8-core rps,tps sweep on this machine (make run's) is checked by
# tests/integration/test_readme.py with localnginx.check_local_sweep: one sweep in CI, not two.


def test_nginx_config_test_failure_is_one_line(tmp_path: Path, tools: None) -> None:
    inv = write_inventory(
        tmp_path, 28081, 28444, extra="          sizing_listen_address: no-such-host.invalid"
    )
    result = runner.invoke(
        app,
        [
            "run",
            "-i",
            str(inv),
            "--cores",
            "1",
            "--profile",
            "rps",
            "--duration",
            "1",
            "--warmup",
            "0",
            "--repeat",
            "1",
            "--db",
            str(tmp_path / "r.sqlite"),
        ],
    )
    assert result.exit_code == 4, result.output
    assert "localhost" in result.stdout + result.stderr
    assert "Traceback" not in result.output
    assert "localhost: localhost:" not in result.output  # the host is named once
    with Store(tmp_path / "r.sqlite") as store:
        (run,) = store.runs()
    # every point failed (issue 27: it was stored "complete")
    assert run.status == "failed" and run.note.startswith("every point failed: localhost: "), run
    stop_nginx(tmp_path / "nginx.pid")


def _alive(pidfile: Path) -> bool:
    try:
        os.kill(int(pidfile.read_text().strip()), 0)
        return True
    except (OSError, ValueError):
        return False


def _kill_tree(pidfile: Path) -> None:
    pid = int(pidfile.read_text().strip())
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            children.append(int(stat.parent.name))
    for p in [pid, *children]:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_nginx_killed_mid_point_keeps_measured_points(
    local_inv: Path, tmp_path: Path, tools: None
) -> None:
    """The first point is measured; nginx dies during the second; the first stays stored."""
    db = tmp_path / "r.sqlite"
    pidfile = tmp_path / "nginx.pid"

    def killer() -> None:
        deadline = time.time() + 240
        while time.time() < deadline:
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
                    n = con.execute(
                        "SELECT count(*) FROM points WHERE status IN ('measured', 'invalid')"
                    ).fetchone()[0]
            except sqlite3.Error:  # not created yet, or being written
                n = 0
            if n >= 1 and load_processes("28443"):  # the tps point's load runs
                time.sleep(1.0)
                _kill_tree(pidfile)
                return
            time.sleep(0.2)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    result = runner.invoke(
        app,
        [
            "run",
            "-i",
            str(local_inv),
            "--cores",
            "1",
            "--profile",
            "rps,tps",
            "--duration",
            "2",
            "--warmup",
            "0",
            "--repeat",
            "2",
            "--db",
            str(db),
            "--json",
        ],
    )
    thread.join(timeout=5)
    assert result.exit_code == 4, result.output
    doc = json.loads(result.stdout)
    assert doc["status"] == "interrupted"
    first, second = doc["points"][0], doc["points"][1]
    assert first["status"] in ("measured", "invalid")  # invalid: a noisy shared host
    assert second["status"] == "failed" and "nginx died" in second["reason"]
    assert "server-died" in second["flags"]
    with Store(db) as store:
        assert store.get_run(doc["run_id"]).status == "interrupted"
        assert len(store.points(doc["run_id"])) == 2


def _listening(port: int) -> bool:
    out = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True)
    return bool(out.stdout.strip())


def test_a_master_killed_mid_point_leaves_no_orphaned_worker(
    local_inv: Path, tmp_path: Path, tools: None
) -> None:
    """Issue 27: kill -9 of the nginx master alone (its worker keeps serving, parent PID 1,
    and held 28080/28443 for the next run). The run ends interrupted with the point
    failed, and then nothing of the instance listens and no worker of its group is left;
    the next run on the same ports provisions and measures."""
    db = tmp_path / "r.sqlite"
    pidfile = tmp_path / "nginx.pid"

    def killer() -> None:
        deadline = time.time() + 240
        while time.time() < deadline:
            if load_processes("28080") and _alive(pidfile):
                time.sleep(1.0)
                os.kill(int(pidfile.read_text().strip()), signal.SIGKILL)  # the master only
                return
            time.sleep(0.2)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    args = [
        "run",
        "-i",
        str(local_inv),
        "--cores",
        "1",
        "--profile",
        "rps",
        "--duration",
        "2",
        "--warmup",
        "0",
        "--repeat",
        "2",
        "--db",
        str(db),
        "--json",
    ]
    result = runner.invoke(app, args)
    thread.join(timeout=5)
    assert result.exit_code == 4, result.output
    doc = json.loads(result.stdout)
    assert doc["status"] == "interrupted" and "server-died" in doc["points"][0]["flags"]
    group = pidfile.read_text().strip()
    ps = subprocess.run(
        ["ps", "-o", "pid=,stat=,cmd=", "-g", group], capture_output=True, text=True
    ).stdout
    # zombies are dead (this container's PID 1 does not reap them): only live ones count
    left = [line for line in ps.splitlines() if line.split()[1][0] != "Z"]
    assert left == [], f"processes of the killed master's group still run:\n{ps}"
    assert not _listening(28080) and not _listening(28443)
    again = runner.invoke(app, [*args[:-2], str(tmp_path / "r2.sqlite"), "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["points"][0]["status"] in ("measured", "invalid")


def test_ctrl_c_keeps_points_and_marks_run_interrupted(
    local_inv: Path, tmp_path: Path, tools: None
) -> None:
    db = tmp_path / "r.sqlite"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sizing",
            "run",
            "-i",
            str(local_inv),
            "--cores",
            "1",
            "--profile",
            "rps,tps",
            "--duration",
            "2",
            "--warmup",
            "0",
            "--repeat",
            "2",
            "--db",
            str(db),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 180
        while time.time() < deadline and proc.poll() is None:
            if db.exists():
                with sqlite3.connect(db) as con:
                    if con.execute("SELECT count(*) FROM points").fetchone()[0] >= 1:
                        break
            time.sleep(0.5)
        # the tps point's window runner and wrk are running (its HTTPS port)
        while time.time() < deadline and proc.poll() is None and not load_processes("28443"):
            time.sleep(0.2)
        time.sleep(1)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    with Store(db) as store:
        run = store.runs()[-1]
        assert run.status == "interrupted"
        assert len(store.points(run.id)) == 1
    # No load left behind, and the sizing nginx stopped with the run (no --keep-running).
    assert load_processes("28443") == [] and load_processes("28080") == []
    assert not _alive(tmp_path / "nginx.pid")


# -- issue 27: faults during a real run, each ending with every point kept -----------------

RUN1 = ["--cores", "1", "--profile", "rps", "--duration", "2", "--warmup", "0", "--repeat", "2"]


def _live_group(pidfile: Path) -> list[str]:
    """The live (not zombie) processes of the group a pid file's master led."""
    group = pidfile.read_text().strip()
    ps = subprocess.run(
        ["ps", "-o", "pid=,stat=,cmd=", "-g", group], capture_output=True, text=True
    ).stdout
    return [line for line in ps.splitlines() if line.split()[1][0] != "Z"]


def _wait_for_load(port: str, proc: subprocess.Popen[str] | None = None) -> None:
    deadline = time.time() + 240
    while time.time() < deadline and not load_processes(port):
        assert proc is None or proc.poll() is None, "the run ended before its load began"
        time.sleep(0.2)


def _sizing(args: list[str]) -> subprocess.Popen[str]:
    """`sizing ...` as its own process (its own session: a terminal's Ctrl-C is a signal
    to the group), stdout and stderr kept."""
    return subprocess.Popen(
        [sys.executable, "-m", "sizing", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_a_reader_holding_the_database_through_the_run_costs_no_point(
    local_inv: Path, tmp_path: Path, tools: None
) -> None:
    """Was: a reader holding a read transaction made the run wait 30 s, fail "locked" and
    lose the point it had just measured. A reader (another process, as a BI tool or an
    open `sqlite3` would be) holds one from before the run starts to after it ends."""
    db = tmp_path / "r.sqlite"
    with Store(db) as earlier:  # a database an earlier run wrote (WAL at rest)
        earlier.start_run(inventory="i", argv=[], tool_version="t", options={})
    code = (
        "import sqlite3, sys, time\n"
        f"c = sqlite3.connect('file:{db}?mode=ro', uri=True, isolation_level=None)\n"
        "c.execute('BEGIN'); c.execute('SELECT count(*) FROM runs').fetchone()\n"
        "print('held', flush=True); sys.stdin.readline(); c.execute('COMMIT')\n"
    )
    reader = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "held"
        began = time.time()
        result = runner.invoke(app, ["run", "-i", str(local_inv), *RUN1, "--db", str(db), "--json"])
        ended = time.time()
        assert reader.poll() is None  # it held the database the whole run
    finally:
        reader.communicate("\n", timeout=20)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["status"] == "complete"
    with Store.open_readonly(db) as store:
        [p] = store.points(doc["run_id"])
        assert p.result.status.value in ("measured", "invalid")
        assert began < p.created_at < ended
        assert store.get_run(doc["run_id"]).status == "complete"


def test_a_writer_holding_the_database_then_ctrl_c_keeps_the_point_for_import(
    local_inv: Path, tmp_path: Path, tools: None
) -> None:
    """Another writer takes the lock while the point is measured and keeps it: the run
    says it waits, Ctrl-C ends the wait, the point goes to the recovery file with the
    command that imports it, and that command stores it."""
    db = tmp_path / "r.sqlite"
    proc = _sizing(["run", "-i", str(local_inv), *RUN1, "--db", str(db)])
    holder: sqlite3.Connection | None = None
    try:
        _wait_for_load("28080", proc)
        holder = sqlite3.connect(db, isolation_level=None, timeout=30)
        holder.execute("BEGIN IMMEDIATE")
        assert proc.stderr is not None
        waited = ""
        deadline = time.time() + 180
        while time.time() < deadline and "locked by another process" not in waited:
            line = proc.stderr.readline()
            assert line, f"the run ended without waiting for the lock: {waited}"
            waited += line
        time.sleep(3)  # it waits on
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(2)
        holder.execute("ROLLBACK")  # the final status can be written now
        out, err = proc.communicate(timeout=120)
        err = waited + err
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        if holder is not None:
            holder.close()
    kept = tmp_path / "r.sqlite.recovery.jsonl"
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    said = " ".join(err.split())  # a long line may be folded at the width
    assert f"it is kept in {kept}: import it with `sizing import {kept} --db {db}`" in said
    assert "keeps its 0 finished points (1 more in the recovery file)" in err
    with Store.open_readonly(db) as store:
        [run] = store.runs()
        assert run.status == "interrupted" and store.points(run.id) == []
    imported = runner.invoke(app, ["import", str(kept), "--db", str(db)])
    assert imported.exit_code == 0, imported.output
    with Store.open_readonly(db) as store:
        [p] = store.points(run.id)
        assert p.result.status.value in ("measured", "invalid") and p.result.value
    assert not _listening(28080) and not _listening(28443) and not _listening(28180)


def test_an_upstream_master_killed_mid_point_fails_it_and_leaves_nothing(
    local_inv: Path, tmp_path: Path, tools: None
) -> None:
    """Was: the point was stored `measured` and a worker kept 8090. Now the point fails
    (server-died, the upstream named), the run ends interrupted, and nothing of the
    upstream's group lives or listens."""
    db = tmp_path / "r.sqlite"
    up_pid = tmp_path / "up" / "nginx.pid"

    def killer() -> None:
        deadline = time.time() + 240
        while time.time() < deadline:
            if load_processes("28080") and _alive(up_pid):
                time.sleep(1.0)
                os.kill(int(up_pid.read_text().strip()), signal.SIGKILL)  # the master only
                return
            time.sleep(0.2)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    result = runner.invoke(app, ["run", "-i", str(local_inv), *RUN1, "--db", str(db), "--json"])
    thread.join(timeout=5)
    assert result.exit_code == 4, result.output
    doc = json.loads(result.stdout)
    [point] = doc["points"]
    assert doc["status"] == "interrupted"
    assert point["status"] == "failed" and "server-died" in point["flags"]
    assert point["reason"].startswith("the upstream nginx died on localhost during ")
    assert _live_group(up_pid) == []
    assert not _listening(28180) and not _listening(28080) and not _listening(28443)
    with Store.open_readonly(db) as store:
        assert [p.result.status.value for p in store.points(doc["run_id"])] == ["failed"]


def test_an_upstream_dead_in_repetition_1_ends_the_point_there(
    local_inv: Path, tmp_path: Path, tools: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 62, as typed (docs/latency.md:33): the upstream died in repetition 1 and the
    run measured 9 more repetitions against it (2,827,643 refused connections in the
    proxy's log). Adaptive repetitions, one a batch after the first (a copy of profiles/
    whose rps asks for 1 repetition first: one repetition alone never meets the stop rule,
    so without the fix repetition 2 always runs): the upstream's master killed by its PID
    during repetition 1 ends the point after it, failed (server-died) with the reason."""
    import sizing.paths

    profiles = tmp_path / "profiles"
    shutil.copytree(ROOT / "profiles", profiles)
    rps = profiles / "rps.yml"
    assert "repetitions: 3\n" in rps.read_text()
    rps.write_text(rps.read_text().replace("repetitions: 3\n", "repetitions: 1\n"))
    monkeypatch.setattr(sizing.paths, "PROFILES", profiles)
    db = tmp_path / "r.sqlite"
    up_pid = tmp_path / "up" / "nginx.pid"
    killed: list[float] = []

    def killer() -> None:
        deadline = time.time() + 240
        while time.time() < deadline:
            if load_processes("28080") and _alive(up_pid):
                time.sleep(1.0)  # inside repetition 1 (3 s)
                os.kill(int(up_pid.read_text().strip()), signal.SIGKILL)  # the master only
                killed.append(time.time())
                return
            time.sleep(0.2)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    argv = ["run", "-i", str(local_inv), "--cores", "1", "--profile", "rps", "--duration", "3"]
    argv += ["--warmup", "0", "--max-repeat", "6", "--db", str(db), "--json"]
    started = time.time()
    result = runner.invoke(app, argv)
    took = time.time() - started
    thread.join(timeout=5)
    assert killed, "the upstream was never seen under load"
    assert result.exit_code == 4, result.output
    doc = json.loads(result.stdout)
    [point] = doc["points"]
    assert point["status"] == "failed" and "server-died" in point["flags"]
    assert point["reason"].startswith("the upstream nginx died on localhost during repetition 1")
    assert "repetition 2" not in result.stderr, result.stderr
    with Store.open_readonly(db) as store:
        [stored] = store.points(doc["run_id"])
        reps = {rep for rep, _ in store.samples(stored.id)}
    assert reps and max(reps) == 1, reps  # no sample of a repetition after the death
    assert not _listening(28180) and not _listening(28080) and not _listening(28443)
    print(f"killed {killed[0] - started:.1f} s into the run, which took {took:.1f} s")


def test_a_killed_sizing_run_is_named_abandoned_and_the_next_run_takes_over(
    local_inv: Path, tmp_path: Path, tools: None
) -> None:
    """kill -9 of `sizing run` mid-point: its nginx and upstream stay (nothing can stop
    them then), the run stays `running` in the store and results names it abandoned; the
    next run (one that needs no upstream) says it took over the run lock of that run,
    measures, and leaves nothing: the dead run's upstream stopped too. The dead run's
    ansible-runner directory (its extravars inside, issue 45) is left by the kill, and
    removed by the next run."""
    db = tmp_path / "r.sqlite"
    proc = _sizing(["run", "-i", str(local_inv), *RUN1, "--db", str(db)])
    try:
        _wait_for_load("28080", proc)
        time.sleep(1)
        os.kill(proc.pid, signal.SIGKILL)  # sizing alone, as `kill -9 PID` does
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    left = list(Path(tempfile.gettempdir()).glob(f"sizing-runner-{proc.pid}-*"))
    assert left and all(p.stat().st_mode & 0o777 == 0o700 for p in left)
    deadline = time.time() + 60  # the dead run's bounded load ends by itself
    while time.time() < deadline and load_processes("28080"):
        time.sleep(0.5)
    shown = runner.invoke(app, ["results", "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("run 1 ") and " abandoned (its process is gone" in shown.stdout
    assert _listening(28180)  # the dead run's upstream serves on
    # the next run needs no upstream (static files): it still stops the dead run's one
    static = [a if a != "rps" else "static-rps" for a in RUN1]
    again = runner.invoke(app, ["run", "-i", str(local_inv), *static, "--db", str(db)])
    assert again.exit_code == 0, again.output
    assert "localhost: took over the run lock of run 1 " in " ".join(again.stderr.split()) + " "
    assert again.stderr.count("took over the run lock") == 1  # said once
    assert not [p for p in left if p.exists()]  # the dead run's extravars are gone
    with Store.open_readonly(db) as store:
        runs = store.runs()
        assert [r.status for r in runs] == ["running", "complete"]
        assert len(store.points(runs[1].id)) == 1
    assert not _listening(28080) and not _listening(28443) and not _listening(28180)
