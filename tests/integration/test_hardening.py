"""Issue 16, part B, with real processes: a run always ends, leaves no load and no nginx
behind, notices its server's death whatever the host order, and keeps one run per host.

Local tests use this machine's nginx on their own ports and paths; the SSH tests use the
network-namespace lab (``netns.py``) with one client, its hosts renamed ``a-web`` (server)
and ``b-load`` (client) so that the server sorts first. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from sizing.cli import app
from sizing.store import Store
from tests.integration.localnginx import stop_nginx, write_inventory
from tests.integration.procs import load_processes

sys.path.insert(0, str(Path(__file__).parent))
import netns  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.robust]

ROOT = Path(__file__).resolve().parents[2]
SHORT = ["--duration", "2", "--warmup", "0", "--repeat", "1"]
# NGINX serving files (no upstream to provision): these tests are about the run's ends
PROFILES = "static-rps,static-tps"
cli = CliRunner()


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A world-readable temp dir: nginx workers (www-data) must read the content there."""
    path = Path(tempfile.mkdtemp(prefix="sizing-h16-"))
    path.chmod(0o755)
    yield path
    stop_nginx(path / "nginx.pid")
    shutil.rmtree(path, ignore_errors=True)


def wait_for(what: Callable[[], bool], timeout_s: float, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        if what():
            return
        time.sleep(0.2)
    if proc.poll() is not None:  # it ended: what it said is the reason
        out, err = proc.communicate(timeout=30)
        raise AssertionError(
            f"the run ended (exit {proc.returncode}) before that:\n{err[-3000:]}\n{out[-2000:]}"
        ) from None
    raise AssertionError(f"the run never got there in {timeout_s} s") from None


def alive(pidfile: Path) -> bool:
    try:
        os.kill(int(pidfile.read_text().strip()), 0)
        return True
    except (OSError, ValueError):
        return False


def kill_nginx(pidfile: Path) -> None:
    """SIGKILL an nginx master and its workers, by PID (a crash, not a shutdown)."""
    master = int(pidfile.read_text().strip())
    pids = [master]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == master:
                pids.append(int(stat.parent.name))
        except (OSError, ValueError):
            continue
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def count_points(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return int(con.execute("SELECT count(*) FROM points").fetchone()[0])
    except sqlite3.Error:
        return 0


def start_run(inv: Path, db: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sizing",
            "run",
            "-i",
            str(inv),
            "--cores",
            "1",
            "--profile",
            PROFILES,
            *SHORT,
            "--db",
            str(db),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,  # the test signals the sizing process alone
    )


def finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)


# -- locally ----------------------------------------------------------------------------


def test_sigterm_mid_point_ends_the_run_and_leaves_no_load_and_no_nginx(
    tmp_path: Path, tools: None
) -> None:
    """SIGTERM to `sizing run` while the second point's load runs: the run is
    `interrupted` with its first point, no loadgen/wrk survives, nginx stops. (Ctrl-C:
    test_run_local.py::test_ctrl_c_keeps_points_and_marks_run_interrupted, and over SSH
    below.)"""
    sig = signal.SIGTERM
    inv = write_inventory(tmp_path, 28094, 28494)
    db = tmp_path / "r.sqlite"
    proc = start_run(inv, db)
    try:
        wait_for(lambda: count_points(db) >= 1, 240, proc)
        # the tps point's windows run: its wrk loads the HTTPS port
        wait_for(lambda: bool(load_processes("28494")), 60, proc)
        assert alive(tmp_path / "nginx.pid")
        os.kill(proc.pid, sig)
        out, err = finish(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    with Store.open_readonly(db) as store:
        [run] = store.runs()
        assert run.status == "interrupted", err  # stderr says why a mark could not be made
        assert run.note == "interrupted by SIGTERM"
        assert [p.result.key.profile for p in store.points(run.id)] == ["static-rps"]
    assert load_processes("28494") == [] and load_processes("28094") == []
    assert not alive(tmp_path / "nginx.pid")  # the sizing nginx stopped with the run


def hold_lock(lock: Path, holder: subprocess.Popen[bytes]) -> None:
    """Write the host's run lock as another run on this controller, ``holder``, holds it."""
    lock.mkdir(mode=0o700, exist_ok=True)
    (lock / "owner.json").write_text(
        json.dumps(
            {
                "token": f"other-{holder.pid}",
                "controller": Path("/etc/machine-id").read_text().strip(),
                "controller_host": "ctl",
                "pid": holder.pid,
                "pid_start": int(
                    Path(f"/proc/{holder.pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
                ),
                "since": time.time(),
            }
        )
    )


def said(stderr: str) -> list[str]:
    """What a run said on stderr besides its progress: off a terminal (as here) progress
    is plain timestamped lines, which a log keeps; the rest must be the one error line."""
    stamp = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ")
    # a progress line longer than 100 columns goes on, indented, on the next ones
    joined = re.sub(r"\n {4,}", " ", stderr.strip())
    return [ln for ln in joined.splitlines() if not stamp.match(ln)]


def test_keep_running_leaves_nginx_up_and_the_lock_refuses_a_second_run(
    tmp_path: Path, tools: None
) -> None:
    """Two runs, not three: the stale lock is taken over by the --keep-running run itself.
    (A normal end without --keep-running stopping nginx: test_multihost.py's first run;
    Ctrl-C and SIGTERM stopping it: the tests below and test_run_local.py.)"""
    inv = write_inventory(tmp_path, 28095, 28495)
    db = tmp_path / "r.sqlite"
    args = [
        "run",
        "-i",
        str(inv),
        "--cores",
        "1",
        "--profile",
        "static-rps",
        "--duration",
        "1",
        "--warmup",
        "0",
        "--repeat",
        "1",
        "--db",
        str(db),
    ]
    lock = tmp_path / "run.lock"  # the inventory's sizing_lock_path
    dead = subprocess.Popen(["sleep", "60"])
    live: subprocess.Popen[bytes] | None = None
    try:
        # A run that is gone left the host's lock behind: it is stale, the next run takes
        # it over.
        hold_lock(lock, dead)
        dead.kill()
        dead.wait(timeout=10)
        kept = cli.invoke(app, [*args, "--keep-running"])
        nginx_up = alive(tmp_path / "nginx.pid")
        released = not lock.exists()
        # Another run holds the host's lock (a live process on this controller).
        live = subprocess.Popen(["sleep", "60"])
        hold_lock(lock, live)
        refused = cli.invoke(app, args)
        owner = json.loads((lock / "owner.json").read_text())
    finally:
        for holder in (dead, live):
            if holder is not None and holder.poll() is None:
                holder.kill()
                holder.wait(timeout=10)
        shutil.rmtree(lock, ignore_errors=True)
    assert kept.exit_code == 0, kept.stderr
    assert nginx_up  # --keep-running
    assert released  # the stale lock was taken over, then released at the end
    assert refused.exit_code == 4, refused.stderr
    lines = said(refused.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: localhost: another sizing run holds it")
    assert owner["pid"] == live.pid  # the refused run left the other run's lock alone
    assert alive(tmp_path / "nginx.pid")  # ... and the nginx it did not start


def test_a_full_store_ends_the_run_failed(
    tmp_path: Path, tools: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The results database on a small tmpfs that fills up once the run has started: the
    next write fails (SQLite: disk full), and the run still ends `failed` with the reason."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
            check=True,
            capture_output=True,
            timeout=20,
        )
    except (subprocess.CalledProcessError, OSError) as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc}")
    try:
        db = mnt / "r.sqlite"
        real_start = Store.start_run

        def start_then_fill(self: Store, **kw: Any) -> int:
            run_id = real_start(self, **kw)
            fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                for _ in range(1024):  # bounded: 256 KiB is 64 of these
                    os.write(fd, b"x" * 4096)
            except OSError:
                pass  # full
            finally:
                os.close(fd)
            return run_id

        monkeypatch.setattr(Store, "start_run", start_then_fill)
        inv = write_inventory(tmp_path, 28096, 28496)
        result = cli.invoke(
            app,
            [
                "run",
                "-i",
                str(inv),
                "--cores",
                "1",
                "--profile",
                "static-rps",
                "--duration",
                "1",
                "--warmup",
                "0",
                "--repeat",
                "1",
                "--db",
                str(db),
            ],
        )
        monkeypatch.undo()
        assert result.exit_code == 6, result.output  # a full disk: ExitStatus.STORE
        assert "Traceback" not in result.output
        [line] = said(result.stderr)
        assert line == f"error: {db}: the disk is full: cannot write the results database"
        with Store.open_readonly(db) as store:
            [run] = store.runs()
            assert run.status == "failed" and "the disk is full" in run.note
    finally:
        subprocess.run(["umount", str(mnt)], check=False, capture_output=True, timeout=20)


# -- over SSH: the netns lab, server named so that it sorts first -----------------------


@pytest.fixture(scope="module")
def ab_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[netns.NetnsLab, Path]]:
    reason = netns.unavailable_reason()
    if reason:
        pytest.skip(reason)
    with netns.netns_lab(tmp_path_factory.mktemp("sz-ab"), n_clients=1) as lab:
        doc = lab.inventory_data()
        groups = doc["all"]["children"]
        groups["servers"]["hosts"] = {"a-web": groups["servers"]["hosts"][lab.server.ns]}
        groups["clients"]["hosts"] = {"b-load": groups["clients"]["hosts"][lab.clients[0].ns]}
        inv = lab.base / "ab.yml"
        inv.write_text(yaml.safe_dump(doc, sort_keys=False))
        yield lab, inv


def test_ssh_ctrl_c_leaves_no_load_on_any_host(
    ab_lab: tuple[netns.NetnsLab, Path], tmp_path: Path
) -> None:
    lab, inv = ab_lab
    db = tmp_path / "r.sqlite"
    target = f"{lab.server.address}:{netns.HTTP_PORT}"
    proc = start_run(inv, db)
    try:
        wait_for(lambda: bool(load_processes(target)), 240, proc)
        time.sleep(1.0)  # wrk runs in b-load, the window runner samples a-web
        os.kill(proc.pid, signal.SIGINT)  # Ctrl-C
        out, err = finish(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    leftovers = [
        pid
        for ns in (lab.server.ns, lab.clients[0].ns)
        for pid in netns.netns_pids(ns)
        if b"loadgen.py" in Path(f"/proc/{pid}/cmdline").read_bytes()
        or Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"wrk")
        or b"\0wrk\0" in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]
    assert leftovers == [] and load_processes(target) == []
    assert not alive(lab.nginx_dir / "nginx.pid")  # and its nginx stopped


def test_server_sorting_first_dies_mid_point_flagged_server_died(
    ab_lab: tuple[netns.NetnsLab, Path], tmp_path: Path
) -> None:
    lab, inv = ab_lab
    db = tmp_path / "r.sqlite"
    target = f"{lab.server.address}:{netns.HTTP_PORT}"
    # an 8-s window: the kill lands inside it even when a busy machine sees the load late
    # (with 2 s, once in six make test runs the window had ended: the point was invalid)
    proc = start_run(inv, db, "--json", "--duration", "8")
    try:
        wait_for(lambda: bool(load_processes(target)), 240, proc)
        time.sleep(1.0)
        kill_nginx(lab.nginx_dir / "nginx.pid")
        out, err = finish(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 4, err
    doc = json.loads(out)
    assert doc["status"] == "interrupted"
    rps, tps = doc["points"]
    assert rps["status"] == "failed" and "server-died" in rps["flags"], rps
    assert rps["reason"].startswith("nginx died on a-web"), rps["reason"]
    assert tps["status"] == "skipped"  # the sweep stopped


def test_a_busy_machine_is_named_not_a_bare_assertion() -> None:
    """A CPU-bound loop on one core, started here: the quiet-machine reading sees it, and a
    test that needs a quiet machine skips naming the busy machine and its readings, without
    measuring; a verdict a busy machine does not explain still fails."""
    from tests.integration import quiet

    hog = subprocess.Popen(
        ["timeout", "60", "taskset", "-c", "1", "sh", "-c", "while :; do :; done"],
        start_new_session=True,
    )
    try:
        reading = quiet.read(1.0)
        assert reading.busy >= 0.4 and not reading.quiet, reading  # one of two CPUs spins
        measured: list[int] = []

        def busy() -> dict[str, Any]:
            measured.append(1)
            return {"status": "invalid", "flags": ["client-bound"], "reason": "x"}

        with pytest.raises(pytest.skip.Exception, match="this machine stayed busy") as skipped:
            quiet.measure_on_a_quiet_machine(busy, attempts=1, limit_s=2)
        assert "% busy" in str(skipped.value) and not measured
    finally:
        os.killpg(hog.pid, signal.SIGKILL)
        hog.wait(timeout=10)
    # on a quiet machine (a reading given here: what follows is the rule, not this machine),
    # a verdict no busy machine explains fails at once, and machine verdicts on every try fail
    calm = quiet.Reading(busy=0.01, steal=0.0, seconds=1.0)
    other = {"status": "invalid", "flags": ["errors"], "reason": "503s"}
    with pytest.raises(pytest.fail.Exception, match="does not explain.*errors"):
        quiet.measure_on_a_quiet_machine(lambda: other, attempts=1, look=lambda _: calm)
    machine = {"status": "invalid", "flags": ["unstable", "virtualized-host"], "reason": "stolen"}
    with pytest.raises(pytest.fail.Exception, match="each started on a quiet machine"):
        quiet.measure_on_a_quiet_machine(lambda: machine, attempts=2, look=lambda _: calm)
