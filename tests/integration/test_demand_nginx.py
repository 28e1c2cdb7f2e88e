"""``sizing demand`` on the logs of a real nginx under real, known traffic.

A one-worker nginx on 127.0.0.1 (its own ports, files and pid under a tmp dir) logs every
request three ways at once: ``combined``, a format with ``$msec $request_time
$connection_requests $ssl_session_reused``, and the same as JSON (``escape=json``). curl
sends known traffic, each phase bounded in count and time:

- 50 requests on one keep-alive connection;
- 20 requests with ``Connection: close`` (20 connections);
- 10 HTTPS requests with ``Connection: close`` to a server with a TLS session cache (TLS
  1.2: curl resumes the first session: 1 full handshake, 9 resumed);
- 10 HTTPS requests to a server with session reuse off (10 full handshakes);
- a burst of 400 requests on one connection, started just after a second boundary.

The demand must recover the request count per second as curl sent it (the burst in the
seconds curl ran), the new connections, the full handshakes and the resumption share. It
asserts counts, not speed: ``noload``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.noload]

ROOT = Path(__file__).resolve().parents[2]
RICH = (
    '$remote_addr [$time_local] "$request" $status $bytes_sent $msec $request_time'
    " $connection_requests $ssl_session_reused"
)
JSON = (
    '{"msec":"$msec","request_time":"$request_time","status":"$status",'
    '"bytes_sent":"$bytes_sent","connection_requests":"$connection_requests",'
    '"ssl_session_reused":"$ssl_session_reused"}'
)
BURST = 400


def _ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def _stop(pidfile: Path) -> None:
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return
    os.kill(pid, signal.SIGTERM)
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


@pytest.fixture
def nginx() -> Iterator[tuple[Path, int, int, int]]:
    """The nginx's directory and its ports: http, https with session reuse, without."""
    tmp = Path(tempfile.mkdtemp(prefix="sz-demand-"))
    http, https_on, https_off = _ports(3)
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            str(tmp / "key.pem"),
            "-out",
            str(tmp / "cert.pem"),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    conf = tmp / "nginx.conf"
    rich = RICH.replace('"', '\\"')
    conf.write_text(f"""
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 256; }}
http {{
    log_format rich '{RICH}';
    log_format jsonl escape=json '{JSON}';
    access_log {tmp}/combined.log combined;
    access_log {tmp}/rich.log rich;
    access_log {tmp}/json.log jsonl;
    keepalive_requests 10000;
    ssl_certificate {tmp}/cert.pem;
    ssl_certificate_key {tmp}/key.pem;
    ssl_protocols TLSv1.2;
    ssl_session_tickets off;
    server {{ listen 127.0.0.1:{http}; location / {{ return 200 "ok\\n"; }} }}
    server {{
        listen 127.0.0.1:{https_on} ssl; ssl_session_cache shared:demand:1m;
        location / {{ return 200 "ok\\n"; }}
    }}
    server {{
        listen 127.0.0.1:{https_off} ssl; ssl_session_cache off;
        location / {{ return 200 "ok\\n"; }}
    }}
}}
""")
    del rich
    subprocess.run(["nginx", "-p", str(tmp), "-c", str(conf)], check=True, timeout=30)
    try:
        yield tmp, http, https_on, https_off
    finally:
        _stop(tmp / "nginx.pid")
        shutil.rmtree(tmp, ignore_errors=True)


def _curl(*args: str) -> None:
    subprocess.run(
        ["curl", "-sS", "-k", "--tls-max", "1.2", "-o", "/dev/null", "--max-time", "30", *args],
        check=True,
        timeout=40,
    )


def _sizing(*args: str) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "sizing", "demand", *args, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_demand_recovers_the_known_traffic_of_a_real_nginx(
    nginx: tuple[Path, int, int, int],
) -> None:
    tmp, http, on, off = nginx
    _curl(f"http://127.0.0.1:{http}/ka/[1-50]")
    _curl("-H", "Connection: close", f"http://127.0.0.1:{http}/close/[1-20]")
    _curl("-H", "Connection: close", f"https://127.0.0.1:{on}/reuse/[1-10]")
    _curl("-H", "Connection: close", f"https://127.0.0.1:{off}/full/[1-10]")
    time.sleep(1.05 - time.time() % 1)  # just after a second boundary
    start = time.time()
    _curl(f"http://127.0.0.1:{http}/burst/[1-{BURST}]")
    end = time.time()
    time.sleep(0.3)  # the log is written at the response's end: let the worker finish
    total = 50 + 20 + 10 + 10 + BURST
    rich = _sizing(
        str(tmp / "rich.log"), "--nginx-conf", str(tmp / "nginx.conf"), "--log-name", "rich"
    )
    assert rich["lines"] == total and rich["skipped"] == 0
    assert rich["missing"] == []
    conns = 1 + 20 + 10 + 10 + 1
    new = rich["new_connections"]
    assert isinstance(new, dict)
    assert round(new["average"] * new["seconds"]) == conns
    full = rich["full_handshakes"]
    assert isinstance(full, dict)
    assert round(full["average"] * full["seconds"]) == 1 + 10
    assert rich["resumption_share"] == pytest.approx(9 / 20, abs=1e-4)
    assert rich["requests_per_connection"] == pytest.approx(total / conns, abs=1e-3)
    chart = rich["chart"]
    assert isinstance(chart, list) and sum(chart) == total
    # the burst: every request curl sent between start and end, in those seconds
    t0 = int(
        time.mktime(time.strptime(str(rich["chart_start"]), "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    )
    in_burst = sum(chart[int(start) - t0 : int(end) - t0 + 1])
    assert in_burst == BURST, (start, end, chart)
    requests = rich["requests"]
    assert isinstance(requests, dict)
    if int(start) == int(end):  # the burst fitted in one second: the peak is exactly it
        assert requests["peak"] == BURST
    # the same traffic in JSON and in combined (1 s resolution, the response's second)
    js = _sizing(str(tmp / "json.log"))
    assert js["lines"] == total and js["resumption_share"] == rich["resumption_share"]
    assert js["full_handshakes"] == rich["full_handshakes"]
    comb = _sizing(str(tmp / "combined.log"))
    assert comb["lines"] == total and comb["new_connections"] is None
    comb_chart = comb["chart"]
    assert isinstance(comb_chart, list) and sum(comb_chart) == total
    assert abs(comb["requests"]["peak"] - requests["peak"]) <= BURST  # type: ignore[index]
    # the totals and the workload's tallies: $connection_requests as each connection
    # counted up (the keep-alive 50 and the burst's), 20 new TLS connections, 22 plain
    assert rich["totals"] == {
        "requests": total,
        "classes": {"2xx": total},
        "bytes_sent": rich["totals"]["bytes_sent"],  # type: ignore[index]
        "outliers": 0,
    }
    assert rich["totals"]["bytes_sent"] > total * len("ok\n")  # type: ignore[index]
    from sizing.demand.formats import format_from_conf
    from sizing.demand.jsonlog import scan_json
    from sizing.demand.scan import scan_file

    want = Counter([*range(1, 51), *[1] * 40, *range(1, BURST + 1)])
    for tally in (
        scan_file(tmp / "rich.log", format_from_conf(tmp / "nginx.conf", "rich")).tally,
        scan_json(tmp / "json.log").tally,
    ):
        assert tally.conn_requests == want
        assert (tally.tls_connections, tally.plain_connections) == (20, 22)
