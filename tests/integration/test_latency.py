"""Latency at fixed rates, reverse proxy and API gateway, for real on this machine.

* **Coordinated omission.** nginx (one worker, our own instance) is paused with SIGSTOP
  for a known time S while vegeta offers a constant rate R for T seconds. Every request
  scheduled during the pause waits for its end: the k-th of them (k = 0 .. R·S-1) has at
  least S - k/R of latency. So, of the N requests sent, at least R·(S - x) - 1 wait x or
  more, which bounds every percentile from below:

      p-quantile >= S - ((1 - p)·N + 1) / R,      mean >= R·S² / (2N)

  (S = 1.5 s, T = 6 s, R = 200/s: p90 >= 0.9 s, p95 >= 1.2 s, p99 >= 1.44 s, mean >=
  0.19 s). vegeta's figures must reach them (less 5% for its percentile estimate). wrk,
  closed loop, paced to the same rate with a Lua ``delay``, measures the same pause: it
  sends far fewer requests than scheduled (the omitted ones are exactly those that would
  have waited) and its mean and p90 fall below the bounds.
  oha (``-q --latency-correction``, the latency profiles' generator) must reach the same
  bounds (:func:`test_oha_is_free_of_coordinated_omission`).
* **Sweep and SLO search** through ``sizing run --profile latency-http``.
* **proxy** and **api-jwt** through ``sizing run``: a real upstream nginx, njs validating
  HS256 JWTs, a wrong signature answered 401 and absent from the upstream's log.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.load import oha, vegeta, wrk
from sizing.load.tools import OHA, VEGETA
from sizing.provision.tools import checkout_binary
from sizing.store import Store

assert OHA.built is not None
OHA_BINARY = checkout_binary(OHA.built)  # scripts/install-oha
assert VEGETA.built is not None
VEGETA_BINARY = checkout_binary(VEGETA.built)  # scripts/install-vegeta

runner = CliRunner()

STALL_S = 1.5
RUN_S = 6.0
RATE = 200
STALL_AT_S = 2.0


def free_ports(n: int) -> list[int]:
    """``n`` distinct free ports (all held open together while they are picked)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def stop_pidfile(pidfile: Path) -> None:
    """Stop the nginx master named by ``pidfile`` (started by this test), by its pid."""
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGCONT)
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sz8-latency-"))
    path.chmod(0o755)
    yield path
    for pidfile in path.glob("*.pid"):
        stop_pidfile(pidfile)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def vegeta_bin() -> str:
    if not VEGETA_BINARY.is_file():
        pytest.fail("vegeta is missing: run scripts/setup (scripts/install-vegeta builds it)")
    return str(VEGETA_BINARY)


# -- coordinated omission --------------------------------------------------------------


@pytest.fixture
def stallable(workdir: Path) -> Iterator[tuple[str, int]]:
    """A one-worker nginx on 127.0.0.1 (pinned to CPU 0); yields (url, worker pid)."""
    (port,) = free_ports(1)
    conf = workdir / "stall.conf"
    conf.write_text(
        f"""
worker_processes 1;
worker_cpu_affinity 01;
pid {workdir}/stall.pid;
error_log {workdir}/stall-error.log;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location / {{ return 200 "ok\\n"; }}
    }}
}}
"""
    )
    subprocess.run(["nginx", "-c", str(conf)], check=True, timeout=30)
    master = 0
    worker = 0
    for _ in range(100):  # bounded: 10 s
        try:
            master = int((workdir / "stall.pid").read_text())
            out = subprocess.run(
                ["pgrep", "-P", str(master)], capture_output=True, text=True, check=False
            ).stdout.split()
            if out:
                worker = int(out[0])
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    assert worker, "nginx did not start its worker"
    yield f"http://127.0.0.1:{port}/", worker


def pause(worker: int, at_s: float, for_s: float, log: list[float]) -> threading.Thread:
    """SIGSTOP ``worker`` ``at_s`` from now for ``for_s`` (at least), then SIGCONT."""

    def run() -> None:
        time.sleep(at_s)
        os.kill(worker, signal.SIGSTOP)
        t0 = time.monotonic()
        try:
            time.sleep(for_s)
        finally:
            os.kill(worker, signal.SIGCONT)
            log.append(time.monotonic() - t0)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th


def bounds(n: int, rate: float, stall: float) -> dict[str, float]:
    """Lower bounds of the percentiles (ms) of n requests at ``rate`` with a stall."""
    out = {f"p{p:g}": 1000 * (stall - ((1 - p / 100) * n + 1) / rate) for p in (90, 95, 99)}
    out["mean"] = 1000 * rate * stall**2 / (2 * n)
    return out


def test_vegeta_is_free_of_coordinated_omission(
    stallable: tuple[str, int], workdir: Path, vegeta_bin: str, tools: None
) -> None:
    url, worker = stallable
    spec = vegeta.VegetaSpec(
        url=url,
        rate=RATE,
        duration_s=RUN_S,
        results_file=str(workdir / "stall.bin"),
        cpus=(1,),
        timeout_s=10,
    )
    stalls: list[float] = []
    th = pause(worker, STALL_AT_S, STALL_S, stalls)
    done = subprocess.run(
        vegeta.attack_argv(spec, vegeta=vegeta_bin),
        input=vegeta.targets(spec),
        capture_output=True,
        text=True,
        timeout=RUN_S + 60,
        check=False,
    )
    th.join(timeout=30)
    assert done.returncode == 0, done.stderr
    reports = [
        subprocess.run(a, capture_output=True, text=True, timeout=60, check=True).stdout
        for a in vegeta.report_argvs(spec, vegeta=vegeta_bin)
    ]
    ours = vegeta.parse(*reports)
    assert stalls and stalls[0] >= STALL_S
    assert ours.failed == 0 and ours.lag(RATE) < 0.02  # open loop: every request on schedule
    want = bounds(ours.requests, RATE, STALL_S)
    got = {
        "p90": ours.latency_percentiles_ms[90.0],
        "p95": ours.latency_percentiles_ms[95.0],
        "p99": ours.latency_percentiles_ms[99.0],
        "mean": ours.latency_mean_ms,
    }
    print(f"\nstall {stalls[0]:.3f}s of {RUN_S}s at {RATE}/s; bounds {want}; vegeta {got}")
    for k, bound in want.items():
        assert got[k] >= 0.95 * bound, (k, got[k], bound)
    assert ours.latency_max_ms >= 0.95 * 1000 * STALL_S

    # The closed loop, paced to the same rate (2 connections, 10 ms between requests).
    script = workdir / "pace.lua"
    script.write_text("function delay()\n  return 10\nend\n")
    stalls.clear()
    th = pause(worker, STALL_AT_S, STALL_S, stalls)
    argv = wrk.build_argv(
        wrk.WrkSpec(
            url=url, threads=1, connections=2, duration_s=RUN_S, cpus=(1,), script=str(script)
        )
    )
    out = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_S + 60, check=False)
    th.join(timeout=30)
    closed = wrk.parse(out.stdout)
    print(
        f"wrk closed loop: {closed.requests} requests (vegeta sent {ours.requests}), "
        f"mean {closed.latency_mean_ms:.1f} ms, p90 {closed.latency_percentiles_ms[90.0]:.1f}"
        f" ms, p99 {closed.latency_percentiles_ms[99.0]:.1f} ms"
    )
    # It omitted the requests the pause would have delayed...
    assert closed.requests < ours.requests - 0.5 * RATE * STALL_S
    # ...so it under-reports: below the bounds that hold for any honest measurement.
    assert closed.latency_mean_ms < want["mean"]
    assert closed.latency_percentiles_ms[90.0] < want["p90"]


def test_oha_is_free_of_coordinated_omission(stallable: tuple[str, int], workdir: Path) -> None:
    if not OHA_BINARY.is_file():
        pytest.fail("oha is missing: run scripts/setup (scripts/install-oha builds it)")
    url, worker = stallable
    spec = oha.OhaSpec(
        url=url, rate=RATE, duration_s=RUN_S, connections=50, cpus=(1,), timeout_s=10
    )
    stalls: list[float] = []
    th = pause(worker, STALL_AT_S, STALL_S, stalls)
    done = subprocess.run(
        oha.argv(spec, oha=str(OHA_BINARY)),
        capture_output=True,
        text=True,
        timeout=RUN_S + 60,
        check=False,
    )
    th.join(timeout=30)
    assert done.returncode == 0, done.stderr
    ours = oha.parse(done.stdout)
    assert stalls and stalls[0] >= STALL_S
    assert ours.failed == 0 and ours.requests >= 0.98 * RATE * RUN_S  # every request sent
    want = bounds(ours.requests, RATE, STALL_S)
    got = {
        "p90": ours.latency_percentiles_ms[90.0],
        "p95": ours.latency_percentiles_ms[95.0],
        "p99": ours.latency_percentiles_ms[99.0],
        "mean": ours.latency_mean_ms,
    }
    print(f"\nstall {stalls[0]:.3f}s of {RUN_S}s at {RATE}/s; bounds {want}; oha {got}")
    for k, bound in want.items():
        assert got[k] >= 0.95 * bound, (k, got[k], bound)
    assert ours.latency_max_ms >= 0.95 * 1000 * STALL_S


# -- sizing run: latency, proxy, api-jwt ------------------------------------------------------

INVENTORY = """
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: "{{{{ ansible_playbook_python }}}}"
  children:
    servers:
      hosts:
        localhost:
          sizing_listen_address: 127.0.0.1
          sizing_http_port: {http}
          sizing_https_port: {https}
          sizing_conf_dir: {tmp}/conf
          sizing_www_root: {tmp}/www
          sizing_log_dir: {tmp}/log
          sizing_pid_file: {tmp}/nginx.pid
          sizing_tool_dir: {tmp}/tools
          sizing_lock_path: {tmp}/run.lock
          sizing_upstream_listen_address: 127.0.0.1
          sizing_upstream_port: {upstream}
          sizing_upstream_conf_dir: {tmp}/uconf
          sizing_upstream_www_root: {tmp}/uwww
          sizing_upstream_log_dir: {tmp}/ulog
          sizing_upstream_pid_file: {tmp}/upstream.pid
    clients:
      hosts:
        localhost: {{}}
"""


def run_sizing(workdir: Path, *args: str) -> tuple[dict[str, Any], Path]:
    inv = workdir / "inv.yml"
    if not inv.exists():
        http, https, upstream = free_ports(3)
        inv.write_text(INVENTORY.format(http=http, https=https, upstream=upstream, tmp=workdir))
    db = workdir / "db.sqlite"
    res = runner.invoke(
        app, ["run", "-i", str(inv), "--cores", "1", "--db", str(db), "--json", *args]
    )
    assert res.exit_code == 0, res.output
    import json

    return json.loads(res.stdout), db


def stored(db: Path, run_id: int) -> Any:
    with Store(db) as store:
        (p,) = store.points(run_id)
        return p, store.samples(p.id)


def test_latency_sweep_and_slo_search(workdir: Path, vegeta_bin: str, tools: None) -> None:
    doc, db = run_sizing(
        workdir,
        "--profile",
        "latency-http",
        "--rates",
        "100,4000",
        "--duration",
        "1",
        "--warmup",
        "1",
        "--slo",
        "p95=5ms",
    )
    point, samples = stored(db, doc["run_id"])
    r = point.result
    assert r.status.value in ("measured", "invalid"), r.reason
    meta = r.metadata
    lat_rec = meta.latency
    assert meta.env.generator == "oha" and lat_rec.slo == "p95=5ms"
    search = lat_rec.slo_search
    assert search is not None
    print(
        f"\nSLO search: {search}; curve p95 {[(c.rate, round(c.p95_ms, 2)) for c in lat_rec.curve]}"
    )
    assert search.probe_count is not None and search.probe_count >= 1
    rates = [c.rate for c in lat_rec.curve]
    assert {100.0, 4000.0} <= set(rates) and rates == sorted(rates)
    for c in lat_rec.curve:  # every rate: the article's statistics and the server CPU
        for k in ("mean_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms", "server_busy"):
            assert getattr(c, k) is not None, k
    lat = [s for _, s in samples if s.metric == "latency"]
    phases = [s.metadata.phase for s in lat]
    assert phases[0] == "warmup" and phases.count("sweep") == 2
    assert phases.count("search") == search.probe_count
    if search.converged and r.value is not None:
        lo, hi = search.bracket
        assert lo is not None
        assert r.value == lo and (hi is None or (hi - lo) / lo <= 0.02)


# robust (scripts/test-robust, beside the unit tests; its inventory names its own run lock):
# what it checks, the JWT answers and the gateway's probes, does not depend on a quiet machine
@pytest.mark.robust
def test_proxy_and_api_jwt(workdir: Path, tools: None) -> None:
    # one run, both points: one provisioning of the clients and the upstream
    doc, db = run_sizing(
        workdir, "--profile", "proxy,api-jwt", "--duration", "2", "--warmup", "1", "--repeat", "1"
    )
    with Store(db) as store:
        points = {
            p.result.key.profile: (p, store.samples(p.id)) for p in store.points(doc["run_id"])
        }
    assert set(points) == {"proxy", "api-jwt"}, points
    for profile in ("proxy", "api-jwt"):
        point, samples = points[profile]
        r = point.result
        meta = r.metadata
        gw = meta.gateway
        print(
            f"\n{profile}: {r.status} {r.value} {r.unit} ({r.reason}); added latency "
            f"{gw.added_latency_ms}; jwt {gw.jwt_check}"
        )
        assert r.value and r.value > 0, r.reason
        assert meta.workload.role == profile
        assert meta.env.upstream is not None and meta.env.upstream.startswith("127.0.0.1:")
        assert gw.single_request_proxy_ms is not None and gw.added_latency_ms is not None
        for k in ("connect", "starttransfer", "total"):
            assert gw.single_request_proxy_ms[k] > 0
            assert k in gw.added_latency_ms
        assert any(s.metric == "added_latency_ms" for _, s in samples)
        if profile == "api-jwt":
            jwt = gw.jwt_check
            assert jwt is not None
            assert jwt.bad_signature_status == 401 and jwt.missing_token_status == 401
            assert jwt.good_token_status == 200 and jwt.good_reached_upstream
            assert jwt.rejected_reached_upstream is False and jwt.ok
            assert "jwt-check-failed" not in r.flags
            # the upstream's probe log: the good nonce only
            log = (workdir / "ulog" / "probe.log").read_text()
            assert "good-" in log and "bad-" not in log and "none-" not in log
