"""A dedicated local nginx instance for integration tests: own ports, paths and pid file."""

from __future__ import annotations

import os
import signal
import statistics
import time
from pathlib import Path

INVENTORY = """
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: "{{{{ ansible_playbook_python }}}}"
  children:
    servers:
      hosts:
        localhost:
          sizing_http_port: {http}
          sizing_https_port: {https}
          sizing_conf_dir: {tmp}/conf
          sizing_www_root: {tmp}/www
          sizing_log_dir: {tmp}/log
          sizing_pid_file: {tmp}/nginx.pid
          sizing_lock_path: {tmp}/run.lock
{extra}
    clients:
      hosts:
        localhost: {{}}
"""


UPSTREAM_VARS = """          sizing_upstream_port: {port}
          sizing_upstream_conf_dir: {tmp}/up/conf
          sizing_upstream_www_root: {tmp}/up/www
          sizing_upstream_log_dir: {tmp}/up/log
          sizing_upstream_pid_file: {tmp}/up/nginx.pid"""


def upstream_vars(tmp: Path, port: int) -> str:
    """Host variables that put the upstream nginx (rps, tps, proxy) under ``tmp`` too; stop
    it with ``stop_nginx(tmp / "up" / "nginx.pid")``."""
    return UPSTREAM_VARS.format(port=port, tmp=tmp)


def write_inventory(tmp: Path, http: int, https: int, extra: str = "") -> Path:
    """An inventory for localhost whose nginx, and its run lock, live entirely under ``tmp``:
    a test's run takes ``tmp/run.lock``, not the machine's /run/sizing.lock, so the tests
    marked ``robust`` can run beside other runs of this machine (the emulated lane's)."""
    inv = tmp / "inv.yml"
    inv.write_text(INVENTORY.format(http=http, https=https, tmp=tmp, extra=extra))
    return inv


def stop_nginx(pidfile: Path) -> None:
    """Stop the instance by the PID in its pid file (quit, then kill after 5 s)."""
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGQUIT)
    except ProcessLookupError:
        return
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


def check_local_sweep(db: Path, run_id: int, repeat: int) -> None:
    """What `sizing run --cores 1,2,4,8 --profile rps,tps` (``make run``) stores on this
    2-CPU machine: 1-core rps and tps measured (or kept invalid, saying what limited them),
    the larger core counts skipped with the reason, the run complete with its environment,
    a warm-up then ``repeat`` timed repetitions, and each sample's metadata."""
    from sizing.store import Store

    with Store(db) as store:
        stored = {(p.result.key.cores, p.result.key.profile): p for p in store.points(run_id)}
        run = store.get_run(run_id)
        samples = store.samples(stored[(1, "rps")].id)
    assert run.status == "complete"
    assert "localhost" in run.environment
    assert len(stored) == 8, sorted(stored)
    rps, tps = stored[(1, "rps")].result, stored[(1, "tps")].result
    # Load balancing through a real upstream nginx that shares the client's core (2 CPUs):
    # a figure is a capacity figure only when nginx saturated its core; otherwise it is kept,
    # invalid, and says what limited it (the client side here, or other processes).
    for r in (rps, tps):
        assert r.status.value in ("measured", "invalid"), r
        assert (r.status.value == "invalid") == bool(
            {"not-saturated", "client-bound", "upstream-bound", "unstable", "errors"} & set(r.flags)
        ), r
        if "not-saturated" in r.flags:
            assert "limited by the" in r.reason, r
    assert rps.unit == "requests/s" and tps.unit == "handshakes/s"
    # Orders of magnitude only: a keepalive request is far cheaper than a full handshake.
    assert rps.value is not None and tps.value is not None
    assert rps.value > 1000 and tps.value > 20
    assert rps.value > 5 * tps.value
    assert rps.repetitions == repeat and rps.spread is not None
    for n in (2, 4, 8):
        r = stored[(n, "rps")].result
        assert r.status.value == "skipped"
        assert f"needs {n} server cores plus at least 1 client core" in r.reason
        assert "add a client host to the inventory" in r.reason
    main = [(rep, s) for rep, s in samples if s.metric == "requests_per_second"]
    assert [rep for rep, _ in main] == list(range(repeat + 1))  # warm-up, then the timed ones
    # the point carries its environment; each window its guards' evidence
    point_meta = stored[(1, "rps")].result.metadata
    env, work, window = point_meta.env, point_meta.workload, main[1][1].metadata
    for name, value in (
        ("host", env.host),
        ("platform", env.platform),
        ("cores", env.cores),
        ("ht", env.ht),
        ("profile", env.profile),
        ("file_size", work.file_size),
        ("connections", work.connections),
        ("duration_s", work.duration_s),
        ("repetition", window.repetition),
        ("nginx", env.nginx_version),
        ("openssl", env.openssl_version),
        ("kernel", env.kernel),
        ("cpu_model", env.cpu_model),
        ("tool", env.tool),
        ("tool_version", env.tool_version),
        ("server_cpus", env.server_cpus),
        ("client_cpus", env.client_cpus),
    ):
        assert value not in (None, ""), name
    assert env.server_cpus == "0" and env.client_cpus == {"localhost": "1"}
    assert work.file_size == 128
    # every guard's evidence: server, client and upstream CPU, kernel work outside core 0
    assert work.role == "load-balance"
    assert env.upstreams is not None
    assert [(u.host, u.cpus, u.shares_with) for u in env.upstreams] == [
        ("localhost", "1", "client")
    ]
    assert window.server_busy is not None and window.client_cpu_busy is not None
    assert window.client_cpu_busy["localhost"] is not None
    assert window.upstream_cpu is not None
    own = window.upstream_cpu["localhost"].own
    assert own is not None and own > 0  # the upstream served the requests
    outside = window.kernel_outside
    assert outside is not None and list(outside.cpus) == [1]
    assert outside.net_rx_total is not None and outside.net_rx_total > 0
    assert env.irq_steering is not None and env.irq_steering.startswith("not steered: loopback")
    with Store(db) as store:
        tls = [
            s
            for rep, s in store.samples(stored[(1, "tps")].id)
            if rep > 0 and s.metric == "handshakes_per_second"
        ]
    assert tls and all((s.metadata.tls_full or 0) > 0 and s.metadata.tls_reused == 0 for s in tls)
    # The median of the timed repetitions is the point's figure.
    values = [s.value for rep, s in main if rep > 0]
    assert rps.value == statistics.median(values)
