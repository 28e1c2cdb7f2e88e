"""Derive the golden window cases from the two captured real runs (README.md).

Run from the repository root: python tests/data/windows/derive.py
"""

import copy
import json
from pathlib import Path

DST = Path("tests/data/windows")
WRK = Path("tests/data/wrk")
rps = json.loads((DST / "rps_noisy_steal.json").read_text())  # captured
tps = json.loads((DST / "tps_noisy.json").read_text())  # captured


def strip(doc):
    doc = copy.deepcopy(doc)
    doc.pop("captured_result", None)
    doc.pop("case", None)
    return doc


def windows(doc):
    return doc["outputs"]["localhost"]["windows"]


def no_steal(doc, cpu="0"):
    for w in windows(doc):
        w["cpu_after"][cpu][7] = w["cpu_before"][cpu][7]


def set_busy(doc, cpu, busy_share):
    """Rewrite the idle ticks of ``cpu`` so it was ``busy_share`` busy in every window."""
    for w in windows(doc):
        b, a = w["cpu_before"][cpu], w["cpu_after"][cpu]
        d = [x - y for x, y in zip(a, b, strict=True)]
        nonidle = sum(d) - d[3] - d[4]
        idle = round(nonidle * (1 - busy_share) / busy_share) if busy_share < 1 else 0
        a[3] = b[3] + idle
        a[4] = b[4]


def nginx_busy(doc, share):
    """nginx's own CPU time as ``share`` of each server window (nothing else ran there)."""
    for w in windows(doc):
        if w.get("nginx_cpu_s") is not None:
            w["nginx_cpu_s"] = share * (w["end"] - w["start"])


def clean(doc):
    doc = strip(doc)
    doc["facts"]["hypervisor"] = None  # bare metal proper: no virtualized-host flag
    no_steal(doc)
    doc["rule"]["fixed"] = 4  # --repeat 4: no stop-rule verdict
    return doc


cases = {}
cases["rps_noisy_steal"] = (strip(rps), "as captured: steal on the pinned CPU, adaptive rule")
cases["tps_noisy"] = (strip(tps), "as captured: full handshakes only, adaptive rule")
c = clean(rps)
set_busy(c, "0", 0.99)
set_busy(c, "1", 0.60)
nginx_busy(c, 0.95)
cases["rps_clean"] = (c, "server CPU 99% busy, client 60%, no steal, --repeat 4")
c = clean(rps)
set_busy(c, "0", 0.50)
set_busy(c, "1", 1.0)
cases["rps_client_bound"] = (c, "client CPU 100% busy while the server's was 50%")
c = clean(rps)
set_busy(c, "0", 0.99)
set_busy(c, "1", 0.60)
for w in windows(c):
    w["commands"][0]["stdout"] = (WRK / "status_503.txt").read_text()
cases["rps_errors"] = (c, "every window answered 503 (tests/data/wrk/status_503.txt)")
c = clean(tps)
set_busy(c, "0", 0.99)
set_busy(c, "1", 0.60)
nginx_busy(c, 0.95)
cases["tps_clean"] = (c, "full handshakes only, server CPU 99% busy, --repeat 4")
c = clean(tps)
set_busy(c, "0", 0.99)
set_busy(c, "1", 0.60)
nginx_busy(c, 0.95)
for w in windows(c):
    w["tls"]["reused"] = w["tls"]["full"] // 2
cases["tps_reused_sessions"] = (c, "a third of the handshakes resumed a session")
c = clean(rps)
windows(c)[2]["server_alive"] = False
cases["rps_server_died"] = (c, "nginx died during repetition 2")
for name, (doc, what) in cases.items():
    if name in ("rps_noisy_steal", "tps_noisy"):
        continue  # the captures themselves
    doc["case"] = what
    (DST / f"{name}.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
print(sorted(cases))
