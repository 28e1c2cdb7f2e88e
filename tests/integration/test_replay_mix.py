"""A customer's mix replayed on a real nginx, verified by reading the lab's own log (issue 57).

nginx is provisioned by ``playbooks/nginx.yml`` from ``templates/nginx.conf.j2`` (role
``web``, one worker on core 0, under a temporary directory, its own ports) with the mix log
on, the mix's files and the resuming TLS listener. vegeta (``vegeta-replay``: closed loop,
pinned to core 1) replays a known mix for a few seconds: 3 size classes, 8 requests per
connection on average (a geometric spread), 60% of the connections over TLS, 40% of those
resumed. The lab log, tallied as the window runner tallies it, must match the mix within
the tolerances; a deliberately wrong replay (every request closes its connection) must be
flagged ``mix-mismatch``. It drives load but asserts no speed.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sizing.load.base import LoadRequest
from sizing.load.replay import REPLAY
from sizing.loadproto import CommandOutput, MixCounts
from sizing.measure.replay_mix import MIX_MISMATCH, replay_record, replayed_mix, verdict
from sizing.plan.replay import ReplayPorts, replay_plan
from sizing.provision.ansible import Playbooks
from sizing.workload import Role, WorkloadMix

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="provisioning nginx needs root"),
]

ROOT = Path(__file__).resolve().parents[2]
VEGETA = ROOT / ".cache" / "bin" / "vegeta"
WINDOW_S = 4.0
MIX = WorkloadMix(
    role=Role.STATIC,
    role_source="stated with --role",
    sizes=((0, 1024, 0.5), (1025, 16384, 0.3), (16385, None, 0.2)),
    size_field="bytes_sent",
    # a geometric spread with mean 8: P(1) = 1/8, P(2..5) = 7/8 - (7/8)^5, P(6+) = (7/8)^5
    per_connection=((1, 1, 0.125), (2, 5, 0.362), (6, None, 0.513)),
    requests_per_connection=8.0,
    tls_share=0.6,
    resumption_share=0.4,
    status=(("2xx", 1.0),),
)


def _ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


@pytest.fixture(scope="module")
def lab() -> Iterator[tuple[Path, ReplayPorts, dict[str, Any]]]:
    if not VEGETA.is_file():
        pytest.fail("vegeta is missing: run scripts/setup (scripts/install-vegeta builds it)")
    base = Path(tempfile.mkdtemp(prefix="sz-replay-"))
    base.chmod(0o755)  # nginx's workers read the content files
    http, https, resume = _ports(3)
    ports = ReplayPorts("127.0.0.1", http, https, resume)
    extravars: dict[str, Any] = {
        "sizing_hosts": "localhost",
        "sizing_nginx_workers": 1,
        "sizing_nginx_affinity": "01",
        "sizing_http_port": http,
        "sizing_https_port": https,
        "sizing_https_resume_port": resume,
        "sizing_listen_address": "127.0.0.1",
        "sizing_conf_dir": str(base / "conf"),
        "sizing_www_root": str(base / "www"),
        "sizing_log_dir": str(base / "log"),
        "sizing_pid_file": str(base / "nginx.pid"),
        "sizing_tls_log": False,
        "sizing_mix_log": True,
        "sizing_mix_files": replay_plan(MIX, ports).files,
    }
    playbooks = Playbooks(ROOT / "inventories" / "local.yml")
    res = playbooks.run("nginx.yml", ["localhost"], extravars=extravars)
    assert res.ok, res.why("localhost")
    try:
        yield base, ports, extravars
    finally:
        stopped = playbooks.run("nginx-stop.yml", ["localhost"], extravars=extravars)
        shutil.rmtree(base, ignore_errors=True)
        assert stopped.ok, stopped.why("localhost")


def _replay(base: Path, ports: ReplayPorts, close_share: float | None = None) -> MixCounts:
    """One bounded window of the replay; the lab log's tally of it."""
    log = base / "log" / "mix.log"
    log.write_text("")  # nginx appends (O_APPEND): the file holds this window only
    tool_dir = base / "tools"
    tool_dir.mkdir(exist_ok=True)
    if not (tool_dir / "vegeta").exists():
        (tool_dir / "vegeta").symlink_to(VEGETA)
    plan = replay_plan(MIX, ports, close_share=close_share)
    req = LoadRequest(
        url="",
        duration_s=WINDOW_S,
        connections=16,
        tool_dir=str(tool_dir),
        cpus=(1,),
        targets=plan.target_list(),
    )
    cmd = REPLAY.command(req)
    attack = subprocess.run(
        cmd.argv, input=cmd.stdin, capture_output=True, text=True, timeout=WINDOW_S + 30
    )
    assert attack.returncode == 0, attack.stderr[-500:]
    report = subprocess.run(cmd.then[0], capture_output=True, text=True, timeout=30)
    got = REPLAY.parse(CommandOutput([], 0, "", "", [CommandOutput([], 0, report.stdout, "")]))
    assert got.requests > 100 and got.error_ratio == 0, got
    time.sleep(0.6)  # the log's buffer is flushed every 250 ms
    counts = MixCounts()
    with log.open(encoding="ascii") as fh:
        for line in fh:
            counts.add_line(line)
    assert counts.unparsed == 0
    # every response vegeta counted is a line of the lab's log, and no other
    assert abs(counts.requests - got.requests) <= 16, (counts.requests, got.requests)
    return counts


def test_the_replayed_mix_matches_yours(lab: tuple[Path, ReplayPorts, dict[str, Any]]) -> None:
    base, ports, _ = lab
    counts = _replay(base, ports)
    record = replay_record("customer-test", MIX, counts)
    print("replayed:", record.words)
    assert verdict(record) is None, record
    assert record.ok and not record.not_compared
    got = replayed_mix(counts, MIX)
    assert got.tls_share is not None and got.resumption_share is not None
    assert got.resumption_share > 0  # the resuming listener really resumed


def test_one_request_per_connection_is_flagged(
    lab: tuple[Path, ReplayPorts, dict[str, Any]],
) -> None:
    base, ports, _ = lab
    record = replay_record("customer-test", MIX, _replay(base, ports, close_share=1.0))
    found = verdict(record)
    print("wrong replay:", found)
    assert found is not None and found.flag == MIX_MISMATCH and found.invalid
    assert "requests per connection 1.0 (yours 8.0)" in found.reason
