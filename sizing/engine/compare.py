"""Compare two runs: what differs in their environments and in their figures. Pure.

**Overhead pairs within one physical host.** A bare-metal figure and a guest figure form a
pair only when the guest ran on that bare-metal host (a KVM guest's
``platform_settings.hypervisor``, an ESXi guest's ``platform_settings.esxi_host``); a guest
of another machine is refused with a reason and no overhead is computed
(:func:`pair_points`, :func:`pair_bases`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sizing.engine.basis import Basis
from sizing.engine.table import GUEST_PLATFORMS, overhead_bounds
from sizing.model import Platform, PointResult

# Fingerprint keys worth comparing (the rest, such as the clock, always differ).
FINGERPRINT = (
    "cpu_model",
    "microcode",
    "governor",
    "smt_control",
    "kernel",
    "os",
    "hypervisor",
    "nginx_version",
    "nginx_openssl",
    "openssl_version",
    "wrk_version",
    "online",
    "lscpu",
    "mem_total_kb",
    "nofile_soft",
    "somaxconn",
    "ip_local_port_range",
)


@dataclass(frozen=True)
class EnvDiff:
    host: str
    key: str
    a: Any
    b: Any


@dataclass(frozen=True)
class FigureDiff:
    point: str
    a: PointResult | None
    b: PointResult | None

    @property
    def change(self) -> float | None:
        """Relative change of B against A, when both have a figure."""
        if self.a is None or self.b is None or not self.a.value or self.b.value is None:
            return None
        return (self.b.value - self.a.value) / self.a.value

    @property
    def overlapping(self) -> bool | None:
        """Whether the two intervals overlap (None when either has none)."""
        a, b = self.a, self.b
        if a is None or b is None or None in (a.ci_low, a.ci_high, b.ci_low, b.ci_high):
            return None
        assert a.ci_low is not None and a.ci_high is not None
        assert b.ci_low is not None and b.ci_high is not None
        return a.ci_low <= b.ci_high and b.ci_low <= a.ci_high


def environment_diff(
    a: Mapping[str, Mapping[str, Any]], b: Mapping[str, Mapping[str, Any]]
) -> list[EnvDiff]:
    """Per host, the fingerprint fields whose values differ (a host in one run only too)."""
    out: list[EnvDiff] = []
    for host in sorted(set(a) | set(b)):
        ea, eb = a.get(host), b.get(host)
        if ea is None or eb is None:
            out.append(
                EnvDiff(
                    host,
                    "(host)",
                    "present" if ea is not None else "absent",
                    "present" if eb is not None else "absent",
                )
            )
            continue
        for key in FINGERPRINT:
            if ea.get(key) != eb.get(key):
                out.append(EnvDiff(host, key, ea.get(key), eb.get(key)))
    return out


def figure_diff(a: Sequence[PointResult], b: Sequence[PointResult]) -> list[FigureDiff]:
    """Points of both runs matched by host, platform, cores, HT and profile."""
    ia = {p.key.label(): p for p in a}
    ib = {p.key.label(): p for p in b}
    return [FigureDiff(k, ia.get(k), ib.get(k)) for k in sorted(set(ia) | set(ib))]


@dataclass(frozen=True)
class Pair:
    """A bare-metal and a hypervisor figure at the same cores, HT and profile."""

    cores: int
    ht: str
    profile: str
    baremetal: PointResult
    hypervisor: PointResult

    @property
    def overhead_pct(self) -> float | None:
        b, h = self.baremetal.value, self.hypervisor.value
        if not b or h is None:
            return None
        return (b - h) / b * 100.0

    @property
    def overhead_ci(self) -> tuple[float, float] | None:
        b, h = self.baremetal, self.hypervisor
        return overhead_bounds(b.ci_low, b.ci_high, h.ci_low, h.ci_high)


@dataclass(frozen=True)
class PairRefusal:
    """A guest (point or basis) that was not paired with a bare metal, and why."""

    guest: str
    baremetal: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"guest": self.guest, "baremetal": self.baremetal, "reason": self.reason}


def physical_host(p: PointResult) -> str:
    """The machine a point ran on: a guest's hypervisor host, else the point's host."""
    settings = p.metadata.get("platform_settings") or {}
    if p.key.platform == Platform.LIBVIRT and settings.get("hypervisor"):
        return str(settings["hypervisor"])
    if p.key.platform == Platform.VSPHERE and settings.get("esxi_host"):
        return str(settings["esxi_host"])
    return p.key.host


def pair_points(points: Sequence[PointResult]) -> tuple[list[Pair], list[PairRefusal]]:
    """Bare-metal and guest points side by side (figures present) when the guest ran on
    that bare-metal host; guests with only another host's bare metal are refused."""
    bare: dict[tuple[int, str, str], list[PointResult]] = {}
    guests: list[PointResult] = []
    for p in points:
        if p.value is None:
            continue
        try:
            family = Platform(p.key.platform).family
        except ValueError:
            continue
        if family == "baremetal":
            if "virtualized-host" not in p.flags:
                bare.setdefault((p.key.cores, p.key.ht, p.key.profile), []).append(p)
        else:
            guests.append(p)
    pairs: list[Pair] = []
    refused: list[PairRefusal] = []
    for g in sorted(guests, key=lambda p: (p.key.cores, p.key.ht, p.key.profile, p.key.host)):
        slot = (g.key.cores, g.key.ht, g.key.profile)
        home = physical_host(g)
        own = [b for b in bare.get(slot, []) if b.key.host == home]
        if own:
            pairs.append(Pair(*slot, own[0], g))
            continue
        for b in bare.get(slot, []):
            refused.append(
                PairRefusal(
                    g.key.label(),
                    b.key.label(),
                    f"the guest ran on {home}, not on {b.key.host}: no overhead across hosts",
                )
            )
    return pairs, refused


def paired(points: Sequence[PointResult]) -> list[Pair]:
    """The pairs of :func:`pair_points` (a guest only with its own host's bare metal)."""
    return pair_points(points)[0]


def pair_bases(bases: Sequence[Basis]) -> tuple[list[tuple[Basis, Basis]], list[PairRefusal]]:
    """(bare metal, guest) bases that may give an overhead: the same physical host,
    hardware, workload and software; other bare metal/guest combinations are refused."""
    bares = [b for b in bases if b.platform == "baremetal"]
    pairs: list[tuple[Basis, Basis]] = []
    refused: list[PairRefusal] = []
    for g in (b for b in bases if b.platform in GUEST_PLATFORMS):
        for b in bares:
            if b.origin != g.origin:
                why = f"{b.origin} and {g.origin} figures: no overhead across origins"
            elif b.physical_host != g.physical_host:
                why = (
                    f"{g.id} ran on {g.physical_host}, {b.id} on {b.physical_host}: "
                    "no overhead across hosts"
                )
            elif b.hardware.cpu_model != g.hardware.cpu_model:
                why = f"different CPUs ({b.hardware.cpu_model} / {g.hardware.cpu_model})"
            elif not all(
                b.workload.same_as(g.workload, p) for p in set(b.profiles) & set(g.profiles)
            ) or not set(b.profiles) & set(g.profiles):
                why = f"different workloads ({b.workload.label()} / {g.workload.label()})"
            elif b.software != g.software:
                why = f"different software ({b.software} / {g.software})"
            else:
                pairs.append((b, g))
                continue
            refused.append(PairRefusal(g.id, b.id, why))
    return pairs, refused
