"""A generated lab, stored through the real Store API, for the guide's layout tests.

TEST FIXTURE: every figure written here (throughputs, CPU shares, signing rates, byte
counts) is invented from a simple scaling law with seeded noise; none is a measurement.

``store_lab`` writes one run of bare-metal hosts ``r640-01``, ``r640-02``, ... (Xeon Gold
6248, 2 sockets × 20 cores × 2 threads, a 25 Gb/s NIC) and, with ``guests``, an ESXi guest
``nginx-esxiN`` on each: rps and tps at the given core counts, HT off and/or on, ``reps``
repetitions at about 2% noise, every point valid with its evidence (server CPU busy, full
handshakes, the NIC's byte counters, the host's openssl-speed ceiling). Points:
hosts × (2 with guests) × cores × HT modes × profiles: 1 host, HT off, no guests = 8;
1 host + guest, HT both = 32; 2 hosts + guests, HT both = 64.

``store_container_run`` writes what ``make run`` leaves in a container: ``localhost``,
1 core, rps and tps, both invalid and flagged ``virtualized-host``.

The same PowerEdge lab as :mod:`tests.labdb` (its CPU, topology, scaling law and run
writer), with the evidence a full sweep records and its own invented constants; the
guide's layout tests read that evidence.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from typing import Any

from sizing.model import PointKey, PointResult, Sample, Status
from sizing.records import PointMeta, SampleMeta
from sizing.store import Store
from tests.labdb import GOLD, Stored, lscpu, store_run, usl

CPU = GOLD
# The invented scaling law: per-core rate at 1 core, contention sigma, HT gain, VM factor.
PER_CORE = {"rps": 46_000.0, "tps": 930.0}
SIGMA = {"rps": 0.025, "tps": 0.01}
HT_GAIN = 1.22
ESXI = {"rps": 0.84, "tps": 0.93}
SIGN_PER_CORE = 1_560.0  # invented openssl-speed RSA-2048 signs/s of one core
SIGN_PER_CORE_HT = 1_980.0  # of one core's two siblings together
LINK_BYTES = 25e9 / 8  # 25 Gb/s
WIRE_BYTES = {"rps": 410.0, "tps": 4_600.0}  # bytes per request on the wire, busier side


def _host_facts(name: str, hypervisor: str | None) -> dict[str, Any]:
    threads = [
        {"alg": "rsa2048", "cpus": "2", "threads": 1, "sign_per_s": SIGN_PER_CORE},
        {"alg": "rsa2048", "cpus": "2,42", "threads": 2, "sign_per_s": SIGN_PER_CORE_HT},
    ]
    return {
        "hostname": name,
        "kernel": "6.1.0-27-amd64",
        "os": "Debian GNU/Linux 12 (bookworm)",
        "arch": "x86_64",
        "cpu_model": CPU,
        "lscpu": lscpu(2, 20, 2),
        "hypervisor": hypervisor,
        "nginx_version": "1.22.1",
        "nginx_openssl": "3.0.15",
        "openssl_version": "3.0.15",
        "mem_total_kb": 384 * 1024 * 1024,
        "governor": "performance",
        "nic_speeds_mbps": {"ens1f0": 25_000},
        "ceilings": {"openssl": "OpenSSL 3.0.15 3 Sep 2024", "crypto": threads, "missing": ""},
    }


def _rate(profile: str, cores: int, ht: str, platform: str) -> float:
    """The invented truth: USL with kappa 0, HT and VM factors."""
    x = usl(cores, PER_CORE[profile], SIGMA[profile])
    x *= HT_GAIN if ht == "on" else 1.0
    return x * (ESXI[profile] if platform == "vsphere" else 1.0)


def _meta(
    host: str, platform: str, cores: int, ht: str, profile: str, value: float, esxi_host: str
) -> PointMeta:
    settings = {"hypervisor": "vsphere", "esxi_host": esxi_host, "vm": host, "vcpus": cores}
    return PointMeta.parse(
        {
            "host": host,
            "platform": platform,
            "cores": cores,
            "ht": ht,
            "profile": profile,
            "file_size": 128,
            "connections": 200 * cores,
            "duration_s": 30.0,
            "server_cpus": ",".join(str(2 + i) for i in range(cores)),
            "client_cpus": {"loadgen-01": "0-39"},
            "clients": ["loadgen-01"],
            "target": host,
            "nginx_version": "1.22.1",
            "openssl_version": "3.0.15",
            "kernel": "6.1.0-27-amd64",
            "cpu_model": CPU,
            "hypervisor": "VMware" if platform == "vsphere" else None,
            "platform_settings": settings if platform == "vsphere" else None,
            "tool": "wrk",
            "tool_version": "4.1.0",
            "tls_key": "rsa2048" if profile == "tps" else None,
            "keepalive": profile == "rps",
            "role": "web",
            "stop_rule": {"fixed": None, "min": 3, "max": 10, "target_half_width": 0.02},
            "server_busy_median": 97.5,
            "server_net_interface": "ens1f0",
            "server_net_tx_bytes_per_s": value * WIRE_BYTES[profile],
            "server_net_rx_bytes_per_s": value * WIRE_BYTES[profile] * 0.4,
            "server_link_bytes_per_s": LINK_BYTES,
            **(
                {"tls_suites": {"TLSv1.3 TLS_AES_256_GCM_SHA384": 3000}} if profile == "tps" else {}
            ),
        }
    )


def _samples(values: Sequence[float], profile: str, first: int = 0) -> list[tuple[int, Sample]]:
    metric = "requests_per_second" if profile == "rps" else "handshakes_per_second"
    out: list[tuple[int, Sample]] = []
    for rep, v in enumerate(values, start=first):
        meta: dict[str, Any] = {"server_cpu": {"busy": 97.5, "steal": 0.0}, "repetition": rep}
        if profile == "tps":
            meta.update(tls_full=int(v * 30), tls_reused=0)
        out.append((rep, Sample(metric, v, "x/s", SampleMeta.parse(meta))))
        client = SampleMeta.parse({"client": "loadgen-01", "repetition": rep})
        out.append((rep, Sample(metric + ".client", v, "x/s", client)))
    return out


def store_lab(
    store: Store,
    *,
    hosts: int = 1,
    guests: bool = True,
    hts: Sequence[str] = ("off", "on"),
    cores: Sequence[int] = (1, 2, 4, 8),
    profiles: Sequence[str] = ("rps", "tps"),
    reps: int = 5,
    seed: int = 1,
) -> int:
    """One complete run of the generated lab (see the module); returns its id."""
    rnd = random.Random(seed)
    machines: list[tuple[str, str, str]] = []  # (inventory name, platform, its bare host)
    env: dict[str, Any] = {"loadgen-01": {"cpu_model": CPU, "hostname": "loadgen-01"}}
    for n in range(1, hosts + 1):
        bare = f"r640-{n:02d}"
        machines.append((bare, "baremetal", bare))
        env[bare] = _host_facts(bare, None)
        if guests:
            vm = f"nginx-esxi{n}"
            machines.append((vm, "vsphere", bare))
            env[vm] = _host_facts(vm, "VMware")
    points: list[Stored] = []
    for host, platform, bare in machines:
        for ht in hts:
            for c in cores:
                for profile in profiles:
                    truth = _rate(profile, c, ht, platform)
                    # in the order they ran: sorted, they would read as a drift
                    values = [truth * rnd.gauss(1.0, 0.02) for _ in range(reps)]
                    median = statistics.median(values)
                    result = PointResult(
                        key=PointKey(host, platform, c, ht, profile),
                        status=Status.MEASURED,
                        value=median,
                        unit="requests/s" if profile == "rps" else "handshakes/s",
                        repetitions=reps,
                        ci_low=min(values),
                        ci_high=max(values),
                        metadata=_meta(host, platform, c, ht, profile, median, bare),
                    )
                    points.append((result, _samples(values, profile)))
    return store_run(
        store,
        points,
        env,
        inventory="/lab/inventories/lab.yml",
        argv=["sizing", "run", "-i", "inventories/lab.yml", "--ht", ",".join(hts)],
        tool_version="0.1.0",
        options={"cores": list(cores), "warmup_s": 5.0},
    )


def store_container_run(store: Store, *, valid: bool = False) -> int:
    """What ``make run`` leaves on a 2-core container: localhost at 1 core, rps and tps,
    both invalid (the client saturated first) and flagged ``virtualized-host``; with
    ``valid``, both valid (still a virtualized host)."""
    facts = _host_facts("localhost", "KVM")
    facts.update(
        cpu_model="AMD EPYC 7B13",
        lscpu="# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,0\n",
        nic_speeds_mbps={},
        ceilings=None,
    )
    points: list[Stored] = []
    for profile, value in (("rps", 52_000.0), ("tps", 610.0)):
        base = _meta("localhost", "baremetal", 1, "off", profile, value, "localhost").to_json()
        base.update(
            server_net_interface="lo",
            server_link_bytes_per_s=None,
            cpu_model="AMD EPYC 7B13",
            hypervisor="KVM",
            client_cpus={"localhost": "1"},
            clients=["localhost"],
            target="127.0.0.1",
        )
        values = [value * f for f in (0.98, 1.0, 1.01)]
        result = PointResult(
            key=PointKey("localhost", "baremetal", 1, "off", profile),
            status=Status.MEASURED if valid else Status.INVALID,
            reason="" if valid else "client-bound: the load generator's CPU was 99% busy",
            value=value,
            unit="requests/s" if profile == "rps" else "handshakes/s",
            repetitions=3,
            ci_low=values[0],
            ci_high=values[-1],
            flags=("virtualized-host",) if valid else ("client-bound", "virtualized-host"),
            metadata=PointMeta.parse(base),
        )
        points.append((result, _samples(values, profile)))
    return store_run(
        store,
        points,
        {"localhost": facts},
        inventory="inventories/local.yml",
        argv=["sizing", "run", "--cores", "1"],
        tool_version="0.1.0",
        options={"cores": [1], "warmup_s": 3.0},
    )


def series_points(
    series: dict[int, Sequence[float]], *, profile: str = "rps", host: str = "r640-01"
) -> list[Stored]:
    """One bare-metal host's ``profile`` points at the given core counts (HT off), each
    with exactly the given timed repetitions: the edge cases of the engine (two runs,
    identical runs, a disturbed repetition, tiny or huge rates)."""
    points: list[Stored] = []
    for c, values in sorted(series.items()):
        median = statistics.median(values)
        result = PointResult(
            key=PointKey(host, "baremetal", c, "off", profile),
            status=Status.MEASURED,
            value=median,
            unit="requests/s" if profile == "rps" else "handshakes/s",
            repetitions=len(values),
            ci_low=min(values),
            ci_high=max(values),
            metadata=_meta(host, "baremetal", c, "off", profile, median, host),
        )
        # repetition 0 is a warm-up: every value given here is a timed repetition
        points.append((result, _samples(values, profile, first=1)))
    return points


def series_environment(host: str = "r640-01") -> dict[str, Any]:
    """What a run stores of the hosts of :func:`series_points`."""
    return {
        "loadgen-01": {"cpu_model": CPU, "hostname": "loadgen-01"},
        host: _host_facts(host, None),
    }


def store_series(
    store: Store,
    series: dict[int, Sequence[float]],
    *,
    profile: str = "rps",
    host: str = "r640-01",
) -> int:
    """One complete run of :func:`series_points`; returns its id."""
    return store_run(
        store,
        series_points(series, profile=profile, host=host),
        series_environment(host),
        inventory="/lab/inventories/lab.yml",
        argv=["sizing", "run", "-i", "inventories/lab.yml", "--profile", profile],
        tool_version="0.1.0",
        options={"cores": sorted(series), "warmup_s": 5.0},
    )
