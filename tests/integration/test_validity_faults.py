"""Each validity guard tripped by a real fault on this machine (nothing mocked).

Faults: a load generator squeezed onto a busy core, a TLS server that resumes sessions,
a server answering 503 for a share of requests, a worker_connections limit below the
connection count, an upstream nginx squeezed into a small CPU quota (a cgroup), and too
few connections to load the server. (nginx killed mid-repetition is in test_run_local.py.)
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from sizing import paths
from sizing.cli import app
from tests.integration.localnginx import stop_nginx, upstream_vars, write_inventory
from tests.integration.quiet import measure_on_a_quiet_machine, under_a_quota

runner = CliRunner()


@pytest.fixture
def tmp() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sizing-faults-"))
    path.chmod(0o755)  # nginx workers (www-data) read the content here
    yield path
    stop_nginx(path / "nginx.pid")
    shutil.rmtree(path, ignore_errors=True)


def profile_file(tmp: Path, base: str, name: str, **changes: object) -> Path:
    data = yaml.safe_load((paths.PROFILES / f"{base}.yml").read_text())
    data.update(name=name, **changes)
    out = tmp / f"{name}.yml"
    out.write_text(yaml.safe_dump(data))
    return out


def run(inv: Path, tmp: Path, profile: str, *extra: str) -> dict[str, object]:
    result = runner.invoke(
        app,
        [
            "run",
            "-i",
            str(inv),
            "--cores",
            "1",
            "--profile",
            profile,
            "--duration",
            "2",
            "--warmup",
            "0",
            "--repeat",
            "1",  # each guard judges every window: one shows the fault
            "--db",
            str(tmp / "r.sqlite"),
            "--json",
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    point = doc["points"][0]
    assert isinstance(point, dict)
    return point


def _squeezed_by_a_hog(tmp: Path) -> dict[str, object]:
    """static-tps at 1 core with a CPU hog on the load generator's core (CPU 1)."""
    inv = write_inventory(tmp, 28090, 28490)
    hog = subprocess.Popen(
        ["timeout", "120", "taskset", "-c", "1", "sh", "-c", "while :; do :; done"],
        start_new_session=True,
    )
    try:
        return run(inv, tmp, "static-tps")
    finally:
        os.killpg(hog.pid, signal.SIGKILL)  # timeout and the shell loop it started
        hog.wait(timeout=10)


def test_busy_client_core_is_flagged_client_bound(tmp: Path, tools: None) -> None:
    """A CPU hog shares the load generator's core: the point measures the client. (The same
    run without the hog is not client-bound: test_full_handshakes_are_proven.)"""
    if under_a_quota():
        pytest.skip(
            "these tests run under a cgroup CPU quota below the machine's cores: the hog "
            "spends the quota, and the cause is the quota "
            "(test_busy_client_core_under_a_cpu_quota_names_the_quota)"
        )
    squeezed = _squeezed_by_a_hog(tmp)
    assert squeezed["status"] == "invalid", squeezed
    assert "client-bound" in squeezed["flags"], str(squeezed.get("reason"))
    assert "more cores or add" in str(squeezed["reason"])


def test_busy_client_core_under_a_cpu_quota_names_the_quota(tmp: Path, tools: None) -> None:
    """Where the tests themselves run under a cgroup CPU quota below the machine's cores (a
    container's --cpus), the hog spends the quota: the generator and nginx are throttled,
    their CPUs look idle, and the cause named is the quota, never "the connections"."""
    if not under_a_quota():
        pytest.skip(
            "these tests run under no cgroup CPU quota: the busy core is the cause "
            "(test_busy_client_core_is_flagged_client_bound)"
        )
    squeezed = _squeezed_by_a_hog(tmp)
    assert squeezed["status"] == "invalid", squeezed
    assert "cpu-quota" in squeezed["flags"], str(squeezed.get("reason"))
    assert "limited by the connections" not in str(squeezed["reason"])


# robust (scripts/test-robust, beside the unit tests): the fault's flag comes from what the
# server answered (a resumed session, a 503), which a busy machine cannot hide
@pytest.mark.robust
def test_resumed_tls_sessions_are_flagged(tmp: Path, tools: None) -> None:
    inv = write_inventory(tmp, 28091, 28491)
    prof = profile_file(tmp, "static-tps", "tps-resume", tls_session_reuse=True)
    point = run(inv, tmp, str(prof))
    assert point["status"] == "invalid", point
    assert "reused-sessions" in point["flags"]
    assert "resumed a session" in str(point["reason"])


def test_full_handshakes_are_proven(tmp: Path, tools: None) -> None:
    inv = write_inventory(tmp, 28092, 28492)
    tries = iter(range(1, 10))
    db = tmp / "r.sqlite"

    def measure() -> dict[str, Any]:
        nonlocal db
        db = tmp / f"r{next(tries)}.sqlite"
        result = runner.invoke(
            app,
            [
                "run",
                "-i",
                str(inv),
                "--cores",
                "1",
                "--profile",
                "static-tps",
                "--duration",
                "2",
                "--warmup",
                "0",
                "--repeat",
                "1",
                "--db",
                str(db),
                "--json",
            ],
        )
        assert result.exit_code == 0, result.output
        got: dict[str, Any] = json.loads(result.stdout)["points"][0]
        return got

    # without a hog on its core the client keeps up: RSA handshakes saturate nginx first
    # (the control of test_busy_client_core_is_flagged_client_bound); a machine busy with
    # something else may still hold the client back, so that is measured on a quiet one
    point = measure_on_a_quiet_machine(measure, wanted=lambda p: "client-bound" not in p["flags"])
    assert "reused-sessions" not in point["flags"] and "no-tls-proof" not in point["flags"]
    shown = runner.invoke(app, ["results", "--db", str(db), "--json"])
    doc = json.loads(shown.stdout)
    meta = doc["runs"][0]["points"][0]["metadata"]
    assert any("ECDHE-RSA" in suite for suite in meta["tls_suites"]), meta["tls_suites"]


@pytest.mark.robust  # as test_resumed_tls_sessions_are_flagged
def test_server_errors_are_flagged(tmp: Path, tools: None) -> None:
    inv = write_inventory(tmp, 28093, 28493, extra="          sizing_fault_locations: true")
    prof = profile_file(tmp, "static-rps", "rps-503", path="/fault/mixed")
    point = run(inv, tmp, str(prof))
    assert point["status"] == "invalid", point
    assert "errors" in point["flags"]
    assert "HTTP 4xx/5xx" in str(point["reason"])


def test_connections_beyond_worker_connections_are_flagged(tmp: Path, tools: None) -> None:
    inv = write_inventory(tmp, 28094, 28494, extra="          sizing_nginx_worker_connections: 32")
    # The pre-flight check sees the shortfall before any load and refuses, in one line.
    refused = runner.invoke(
        app,
        [
            "run",
            "-i",
            str(inv),
            "--cores",
            "1",
            "--profile",
            "static-rps",
            "--connections",
            "200",
            "--db",
            str(tmp / "r.sqlite"),
        ],
    )
    assert refused.exit_code != 0
    assert "worker_connections 32" in refused.stderr
    # Forced past it, the validity guard catches the same fault in the measurement.
    point = run(inv, tmp, "static-rps", "--connections", "200", "--skip-preflight")
    assert point["status"] == "invalid", point
    assert {"connections", "errors"} & set(point["flags"]), point


class CpuQuota:
    """A cgroup with a CPU quota (v2 cpu.max or v1 cpu.cfs_quota_us) that an nginx's
    processes are moved into as soon as its pid file names a master with workers."""

    def __init__(self, pidfile: Path, share: float) -> None:
        self.pidfile = pidfile
        v2 = Path("/sys/fs/cgroup/cgroup.controllers").exists()
        root = Path("/sys/fs/cgroup") if v2 else Path("/sys/fs/cgroup/cpu")
        self.root = root
        self.path = root / f"sizing-test-{os.getpid()}"
        self.path.mkdir()
        # A short period: a window's edges fall inside a period, so a 2 s window of a 5%
        # quota holds up to one period's quota more or less than 5% of it. Over 100 ms
        # periods that is ±5% of the upstream's busy share (the guard's line is 90%); over
        # 20 ms periods, ±1%. (The kernel's smallest quota is 1 ms.)
        period = 20_000
        quota = max(1_000, int(period * share))
        if v2:
            (self.path / "cpu.max").write_text(f"{quota} {period}\n")
        else:
            (self.path / "cpu.cfs_period_us").write_text(f"{period}\n")
            (self.path / "cpu.cfs_quota_us").write_text(f"{quota}\n")
        self.moved: set[int] = set()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _pids(self) -> list[int]:
        try:
            master = int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return []
        out = [master]
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == master:
                    out.append(int(stat.parent.name))
            except (OSError, ValueError, IndexError):
                continue
        return out

    def _watch(self) -> None:
        deadline = time.monotonic() + 300
        while not self.stop.is_set() and time.monotonic() < deadline:
            for pid in self._pids():
                if pid not in self.moved:
                    try:
                        (self.path / "cgroup.procs").write_text(f"{pid}\n")
                        self.moved.add(pid)
                    except OSError:
                        pass
            time.sleep(0.05)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        for pid in self._pids():
            try:
                (self.root / "cgroup.procs").write_text(f"{pid}\n")
            except OSError:
                pass
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def test_a_server_under_a_cgroup_cpu_quota_is_flagged_cpu_quota(tmp: Path, tools: None) -> None:
    """The nginx under test gets 30% of a CPU (a cgroup quota, as a container's --cpus
    0.3 would) on its pinned core: the core looks 70% idle while nginx waits for its quota.
    The point names the quota, never "more concurrency would load it further"."""
    inv = write_inventory(tmp, 28097, 28497)
    quota = CpuQuota(tmp / "nginx.pid", 0.3)
    try:
        point = run(inv, tmp, "static-rps")
    finally:
        quota.close()
    assert quota.moved, "the nginx under test never started"
    assert point["status"] == "invalid", point
    reason = str(point["reason"])
    assert "cpu-quota" in point["flags"], reason
    assert "a cgroup CPU limit of 0.3 CPUs throttled" in reason, reason
    assert "more concurrency" not in reason
    assert point["metadata"]["guards"]["limited_by"].startswith("a cgroup CPU limit"), point


@pytest.fixture
def upstream_tmp(tmp: Path) -> Iterator[Path]:
    yield tmp
    stop_nginx(tmp / "up" / "nginx.pid")


def test_squeezed_upstream_is_flagged_upstream_bound(upstream_tmp: Path, tools: None) -> None:
    """The upstream nginx gets 5% of a CPU (a cgroup quota): the upstream, not NGINX, sets
    the figure, and the reason says how many more upstream CPUs it needs."""
    tmp = upstream_tmp
    inv = write_inventory(tmp, 28095, 28495, extra=upstream_vars(tmp, 28195))
    quota = CpuQuota(tmp / "up" / "nginx.pid", 0.05)
    try:
        point = run(inv, tmp, "rps")
    finally:
        quota.close()
    assert quota.moved, "the upstream nginx never started"
    assert point["status"] == "invalid", point
    assert {"upstream-bound", "not-saturated"} <= set(point["flags"]), point
    assert "more CPU" in str(point["reason"]) and "limited by the upstream" in str(point["reason"])
    ups = point["metadata"]["upstreams"]
    assert ups == [{"host": "localhost", "cpus": "1", "shares_with": "client"}]


def test_too_few_connections_is_flagged_not_saturated(upstream_tmp: Path, tools: None) -> None:
    """One connection cannot load the server: kept, flagged, the limit named."""
    tmp = upstream_tmp
    inv = write_inventory(tmp, 28096, 28496, extra=upstream_vars(tmp, 28196))
    point = run(inv, tmp, "rps", "--connections", "1")
    assert point["status"] == "invalid", point
    assert "not-saturated" in point["flags"], point
    # the limit named depends on what else this host runs: connections, the client side,
    # or other processes on the pinned CPU (a shared box)
    assert "so this is not a capacity figure; limited by the" in str(point["reason"])
