"""A realistic lab results database, built through the Store API as a sweep stores it.

The lab of the issue "after a lab run": per host, a PowerEdge bare-metal server ``r640-0N``
(Intel Xeon Gold 6248, 2 × 20 cores × 2 threads) and an ESXi guest ``nginx-esxiN`` on it;
``rps`` and ``tps`` at 1/2/4/8 cores, HT off and on; every point's timed repetitions drawn
from a known curve with lognormal noise. A guest carries ``guest_rps`` of bare metal's RPS
and ``guest_tps`` of its handshakes; HT on adds ``ht_gain``. The figures are simulated
for tests and benchmarks, never shown as measurements of real hardware; the docs' lab
stores (``examples/simulated.py``) add ``prefix="simulated-"`` to every host's name and flag
every point ``simulated``, so that no output calls one of their figures measured.

It lives beside ``examples/simulated.py`` so that the script needs nothing of ``tests/``;
``tests/labdb.py`` re-exports it for the tests and benchmarks.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sizing.model import PointKey, PointResult, Sample
from sizing.records import PointMeta, SampleMeta
from sizing.store import Store

GOLD = "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"
CORES = (1, 2, 4, 8)
Stored = tuple[PointResult, list[tuple[int, Sample]]]  # a point and its samples, as stored


def lscpu(sockets: int, cores: int, threads: int) -> str:
    """``lscpu -p=CPU,Core,Socket,Node`` of a host of that topology."""
    lines = ["# CPU,Core,Socket,Node"]
    cpu = 0
    for _ in range(threads):
        for s in range(sockets):
            for c in range(cores):
                lines.append(f"{cpu},{s * cores + c},{s},{s}")
                cpu += 1
    return "\n".join(lines) + "\n"


def usl(n: int, lam: float, sigma: float) -> float:
    """The Universal Scalability Law with no coherency term: ``lam`` per core at 1 core."""
    return lam * n / (1 + sigma * (n - 1))


# per-core λ, σ of bare metal; api-jwt (an API gateway validating a JWT per request, 1 KB)
# about 3.7 times fewer calls per core than load balancing, as issue 57's lab saw
TRUTH = {
    "rps": (48_000.0, 0.03),
    "tps": (1_150.0, 0.01),
    "api-jwt": (13_000.0, 0.03),
}
# profile: (unit, metric, file size, role as the point stores it: None reads the profile's)
KINDS = {
    "rps": ("requests/s", "requests_per_second", 128, None),
    "tps": ("handshakes/s", "handshakes_per_second", 128, None),
    "api-jwt": ("calls/s", "api_calls_per_second", 1024, "api-jwt"),
}


def truth(
    profile: str, cores: int, *, guest: float = 1.0, ht: str = "off", ht_gain: float = 1.05
) -> float:
    """The simulated true median of a point."""
    lam, sigma = TRUTH[profile]
    return usl(cores, lam, sigma) * guest * (ht_gain if ht == "on" else 1.0)


def _point(
    host: str,
    platform: str,
    cores: int,
    ht: str,
    profile: str,
    reps: Sequence[float],
    settings: dict[str, Any] | None,
    role: str | None = None,
    flags: Sequence[str] = (),
) -> Stored:
    unit, metric, size, kind_role = KINDS[profile]
    role = kind_role or role
    ordered = sorted(reps)
    median = ordered[len(ordered) // 2]
    samples = [(0, Sample(metric, reps[0] * 0.9, unit, SampleMeta.parse({"warmup": True})))]
    for i, v in enumerate(reps, start=1):
        samples.append(
            (i, Sample(metric, v, unit, SampleMeta.parse({"repetition": i, "warmup": False})))
        )
    meta = {
        "host": host,
        "file_size": size,
        **({"role": role} if role else {}),
        "keepalive": profile != "tps",
        "tls_key": "rsa2048" if profile == "tps" else None,
        "nginx_version": "1.22.1",
        "openssl_version": "3.0.11",
        "cpu_model": GOLD,
        "platform_settings": settings or {},
    }
    result = PointResult(
        key=PointKey(host, platform, cores, ht, profile),
        status="measured",  # type: ignore[arg-type]
        value=median,
        unit=unit,
        repetitions=len(reps),
        flags=tuple(flags),
        metadata=PointMeta.parse(meta),
    )
    return result, samples


def lab_points(
    *,
    hosts: int = 1,
    ht: Sequence[str] = ("off", "on"),
    reps: int = 10,
    noise: float = 0.02,
    guest_rps: float = 0.82,
    guest_tps: float = 0.93,
    seed: int = 1,
    cores: Sequence[int] = CORES,
    guests: bool = True,
    profiles: Sequence[str] = ("rps", "tps"),
    role: str | None = None,
    kvm: bool = False,
    kvm_rps: float = 0.88,
    kvm_tps: float = 0.95,
    container: bool = False,
    container_rps: float = 0.55,
    container_tps: float = 0.98,
    prefix: str = "",
    flags: Sequence[str] = (),
) -> list[tuple[PointResult, list[tuple[int, Sample]]]]:
    """Every point of the lab (bare metal, then its guest), with their repetitions;
    ``profiles`` of :data:`KINDS` (``api-jwt``: a JWT gateway's calls, at the guest's RPS
    share); ``role``: the role stored on the rps and tps points (``load-balance``; None:
    none stored, as the oldest records); with ``kvm``, a KVM (libvirt) guest ``nginx-kvmN``
    on each host too; with ``container``, a container leg ``nginx-containerN`` on each
    (the container network path: about half of bare metal's RPS, as the article's
    Kubernetes table found, and its handshakes); ``prefix`` starts every host's name,
    ``flags`` are every point's (``simulated``: an example store's)."""
    rng = random.Random(seed)
    out = []
    for i in range(1, hosts + 1):
        metal, guest = f"{prefix}r640-{i:02d}", f"{prefix}nginx-esxi{i}"
        legs: list[tuple[str, str, float, float, str | None]] = [
            (metal, "baremetal", 1.0, 1.0, None)
        ]
        if guests:
            legs.append((guest, "vsphere", guest_rps, guest_tps, metal))
        if kvm:
            legs.append((f"{prefix}nginx-kvm{i}", "libvirt", kvm_rps, kvm_tps, metal))
        if container:
            name = f"{prefix}nginx-container{i}"
            legs.append((name, "container", container_rps, container_tps, metal))
        for host, platform, g_rps, g_tps, esxi in legs:
            for mode in ht:
                for n in cores:
                    for profile in profiles:
                        g = g_tps if profile == "tps" else g_rps
                        t = truth(profile, n, guest=g, ht=mode)
                        values = [t * rng.lognormvariate(0.0, noise) for _ in range(reps)]
                        settings = (
                            None
                            if esxi is None
                            else _kvm_settings(esxi, host, n, mode)
                            if platform == "libvirt"
                            else _container_settings(esxi, host, n)
                            if platform == "container"
                            else {
                                "hypervisor": "vsphere",
                                "esxi_host": esxi,
                                "vm": host,
                                "vcpus": n * (2 if mode == "on" else 1),
                                "extra": {
                                    "esxi_version": "8.0.2",
                                    "latency_sensitivity": "high",
                                    "cpu_reservation_mhz": n * 2500,
                                    "memory_reservation_mb": 8192,
                                    "affinity": list(range(n)),
                                },
                            }
                        )
                        out.append(
                            _point(host, platform, n, mode, profile, values, settings, role, flags)
                        )
    return out


def _kvm_settings(hypervisor: str, domain: str, cores: int, ht: str) -> dict[str, Any]:
    """What a libvirt guest's backend records (KVM-accelerated, pinned)."""
    vcpus = cores * (2 if ht == "on" else 1)
    return {
        "hypervisor": hypervisor,
        "uri": f"qemu+ssh://{hypervisor}/system",
        "domain": domain,
        "domain_type": "kvm",
        "emulated": False,
        "vcpus": vcpus,
        "vcpupin": {str(v): str(v) for v in range(vcpus)},
    }


def _container_settings(host: str, name: str, cores: int) -> dict[str, Any]:
    """What the container backend records (pinned to the bare-metal leg's CPUs)."""
    cpus = f"0-{cores - 1}" if cores > 1 else "0"
    return {
        "platform": "container",
        "runtime": "runc",
        "container": name,
        "network": "podman",
        "cpuset_cpus": cpus,
        "proc_cpus_allowed": cpus,
        "cgroup_cpuset": cpus,
        "container_host": host,
    }


def environment(
    hosts: int = 1,
    price_usd: float | None = None,
    kvm: bool = False,
    container: bool = False,
    prefix: str = "",
) -> dict[str, Any]:
    """What a run stores of its hosts (facts), for ``hosts`` servers and their guests; with
    ``price_usd``, each host's inventory declares that price (``sizing_price_usd``), as a
    lab's inventory does so that its bases can be priced; ``prefix`` starts each name."""
    env: dict[str, Any] = {}
    for i in range(1, hosts + 1):
        env[f"{prefix}r640-{i:02d}"] = {
            "cpu_model": GOLD,
            "lscpu": lscpu(2, 20, 2),
            "nginx_version": "1.22.1",
            "nginx_openssl": "3.0.11",
        }
        env[f"{prefix}nginx-esxi{i}"] = {
            "cpu_model": GOLD,
            "lscpu": lscpu(1, 8, 1),
            "nginx_version": "1.22.1",
            "nginx_openssl": "3.0.11",
            "hypervisor": "vmware",
        }
        if container:
            env[f"{prefix}nginx-container{i}"] = {
                "cpu_model": GOLD,
                "lscpu": lscpu(2, 20, 2),
                "nginx_version": "1.22.1",
                "nginx_openssl": "3.0.11",
            }
        if kvm:
            env[f"{prefix}nginx-kvm{i}"] = {
                "cpu_model": GOLD,
                "lscpu": lscpu(1, 8, 1),
                "nginx_version": "1.22.1",
                "nginx_openssl": "3.0.11",
                "hypervisor": "kvm",
            }
    if price_usd is not None:
        declared = {"sizing_price_usd": price_usd, "sizing_cpu": None, "sizing_cost_ref": None}
        for facts in env.values():
            facts["declared"] = dict(declared)
    return env


def store_run(
    store: Store,
    points: Iterable[Stored],
    environment: dict[str, Any],
    *,
    inventory: str,
    argv: list[str],
    tool_version: str,
    options: dict[str, Any],
) -> int:
    """One complete run as a sweep stores it: started, its hosts' facts, every point with
    its samples, finished; its run id. ``points`` is consumed after the run is started."""
    run_id = store.start_run(
        inventory=inventory, argv=argv, tool_version=tool_version, options=options
    )
    store.set_environment(run_id, environment)
    for result, samples in points:
        store.add_point(run_id, result, samples)
    store.finish_run(run_id, "complete")
    return run_id


def build_lab(
    db: Path,
    *,
    hosts: int = 1,
    inventory: str = "lab",
    price_usd: float | None = None,
    argv: Sequence[str] = ("sizing", "run"),
    tool_version: str = "0",
    **kw: Any,
) -> int:
    """Store one complete run of the lab in ``db``; its run id. ``price_usd``: see
    :func:`environment`; ``argv`` and ``tool_version``: what the run records of what made it."""
    with Store(db) as store:
        return store_run(
            store,
            lab_points(hosts=hosts, **kw),
            environment(
                hosts,
                price_usd,
                kvm=bool(kw.get("kvm")),
                container=bool(kw.get("container")),
                prefix=str(kw.get("prefix", "")),
            ),
            inventory=inventory,
            argv=list(argv),
            tool_version=tool_version,
            options={},
        )
