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


def test_run_measures_one_core_rps_and_tps_and_skips_the_rest(
    local_inv: Path, tmp_path: Path, tools: None
) -> None:
    db = tmp_path / "results.sqlite"
    result = runner.invoke(
        app,
        [
            "run",
            "-i",
            str(local_inv),
            "--cores",
            "1,2,4,8",
            "--profile",
            "rps,tps",
            "--duration",
            "2",
            "--warmup",
            "1",
            "--repeat",
            "3",
            "--db",
            str(db),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    points = {(p["cores"], p["profile"]): p for p in doc["points"]}
    assert len(points) == 8
    rps, tps = points[(1, "rps")], points[(1, "tps")]
    # Load balancing through a real upstream nginx that shares the client's core (2 CPUs):
    # a figure is a capacity figure only when nginx saturated its core; otherwise it is kept,
    # invalid, and says what limited it (the client side here, or other processes).
    for p in (rps, tps):
        assert p["status"] in ("measured", "invalid"), p
        assert (p["status"] == "invalid") == bool(
            {"not-saturated", "client-bound", "upstream-bound", "unstable", "errors"}
            & set(p["flags"])
        ), p
        if "not-saturated" in p["flags"]:
            assert "limited by the" in p["reason"], p
    assert rps["unit"] == "requests/s" and tps["unit"] == "handshakes/s"
    # Orders of magnitude only: a keepalive request is far cheaper than a full handshake.
    assert rps["value"] > 1000 and tps["value"] > 20
    assert rps["value"] > 5 * tps["value"]
    assert rps["repetitions"] == 3 and rps["spread"] is not None
    for n in (2, 4, 8):
        p = points[(n, "rps")]
        assert p["status"] == "skipped"
        assert f"needs {n} server cores plus at least 1 client core" in p["reason"]
        assert "add a client host to the inventory" in p["reason"]

    with Store(db) as store:
        stored = {
            (p.result.key.cores, p.result.key.profile): p for p in store.points(doc["run_id"])
        }
        run = store.get_run(doc["run_id"])
        assert run.status == "complete"
        assert "localhost" in run.environment
        samples = store.samples(stored[(1, "rps")].id)
    main = [(rep, s) for rep, s in samples if s.metric == "requests_per_second"]
    assert [rep for rep, _ in main] == [0, 1, 2, 3]  # warm-up then three timed repetitions
    meta = main[1][1].metadata
    for field in (
        "host",
        "platform",
        "cores",
        "ht",
        "profile",
        "file_size",
        "connections",
        "duration_s",
        "repetition",
        "nginx_version",
        "openssl_version",
        "kernel",
        "cpu_model",
        "tool",
        "tool_version",
        "server_cpus",
        "client_cpus",
    ):
        assert meta.get(field) not in (None, ""), field
    assert meta["server_cpus"] == "0" and meta["client_cpus"] == {"localhost": "1"}
    assert meta["file_size"] == 128
    # every guard's evidence: server, client and upstream CPU, kernel work outside core 0
    assert meta["role"] == "load-balance"
    assert meta["upstreams"] == [{"host": "localhost", "cpus": "1", "shares_with": "client"}]
    assert meta["server_busy"] is not None and meta["client_cpu_busy"]["localhost"] is not None
    assert meta["upstream_cpu"]["localhost"]["own"] > 0  # the upstream served the requests
    assert meta["kernel_outside"]["cpus"] == [1] and meta["kernel_outside"]["net_rx_total"] > 0
    assert meta["irq_steering"].startswith("not steered: loopback")
    with Store(db) as store:
        tls = [s for rep, s in store.samples(stored[(1, "tps")].id)
               if rep > 0 and s.metric == "handshakes_per_second"]  # fmt: skip
    assert all(s.metadata["tls_full"] > 0 and s.metadata["tls_reused"] == 0 for s in tls)
    # The median of the three timed repetitions is the point's figure.
    values = sorted(s.value for rep, s in main if rep > 0)
    assert stored[(1, "rps")].result.value == pytest.approx(values[1])


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
            "4",
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
            "3",
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
