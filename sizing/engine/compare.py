"""Compare two runs: what differs in their environments and in their figures. Pure.

**Overhead pairs within one physical host.** A bare-metal figure and a guest figure form a
pair only when the guest ran on that bare-metal host (a KVM guest's
``platform_settings.hypervisor``, an ESXi guest's ``platform_settings.esxi_host``); a guest
of another machine is refused with a reason and no overhead is computed
(:func:`pair_points`, :func:`pair_bases`). This module pairs; what a pair gives (the
overhead, the HT gain) is computed in :mod:`sizing.engine.overhead` alone.

**Across runs.** A guest measured in another run than its host's bare metal (the host was
reinstalled between them, or the legs were simply measured on different days) still gives
an overhead (:func:`pair_across_runs`), always unpaired: the ratio of the two medians with
the interval from the two intervals' ends, which holds whatever the runs' conditions had in
common or not, and the runs are named beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sizing.engine.basis import Basis
from sizing.engine.overhead import Comparison, point_comparison
from sizing.engine.table import GUEST_PLATFORMS
from sizing.model import PairKind, Platform, PointResult, Status
from sizing.records import HostRecord

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
    a: Mapping[str, HostRecord],
    b: Mapping[str, HostRecord],
    points: tuple[Sequence[PointResult], Sequence[PointResult]] = ((), ()),
) -> list[EnvDiff]:
    """Per host, the fingerprint fields whose values differ (a host in one run only too),
    and the generators (with their versions) that measured each run's points on it: a
    generator's version is its points' fact, not its host's."""
    out: list[EnvDiff] = []
    ga, gb = (_generators(ps) for ps in points)
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
            va, vb = getattr(ea, key), getattr(eb, key)
            if va != vb:
                out.append(EnvDiff(host, key, va, vb))
        if host in ga and host in gb and ga[host] != gb[host]:
            out.append(EnvDiff(host, "generator", ga.get(host), gb.get(host)))
    return out


def _generators(points: Sequence[PointResult]) -> dict[str, str]:
    """Per host measured, the generators of its points, sorted and comma-separated."""
    by_host: dict[str, set[str]] = {}
    for p in points:
        g = p.metadata.env.measured_by
        if g is not None:
            by_host.setdefault(p.key.host, set()).add(g)
    return {host: ", ".join(sorted(gs)) for host, gs in by_host.items()}


def figure_diff(a: Sequence[PointResult], b: Sequence[PointResult]) -> list[FigureDiff]:
    """Points of both runs matched by host, platform, cores, HT and profile."""
    ia = {p.key.label(): p for p in a}
    ib = {p.key.label(): p for p in b}
    return [FigureDiff(k, ia.get(k), ib.get(k)) for k in sorted(set(ia) | set(ib))]


def failed_leg(a: PointResult, b: PointResult) -> str:
    """The leg that failed its guards, and why ("" when both are valid): a pair whose
    legs disagree on validity is shown with that leg, never averaged."""
    for leg in (a, b):
        if leg.status is not Status.MEASURED:
            why = leg.reason.split(":", 1)[0] if leg.reason else ""
            return f"{leg.key.host} leg {leg.status}" + (f" ({why})" if why else "")
    return ""


@dataclass(frozen=True)
class OverheadPair:
    """A bare-metal and a hypervisor figure at the same cores, HT and profile."""

    cores: int
    ht: str
    profile: str
    baremetal: PointResult
    hypervisor: PointResult
    runs: tuple[int, int] | None = None  # (bare metal's run, guest's run) when they differ
    note: str = ""  # what else differs between legs of different runs (their software)

    @property
    def comparison(self) -> Comparison | None:
        """The guest's (or container's) share of bare metal and its overhead."""
        return point_comparison(self.baremetal, self.hypervisor, PairKind.VIRTUALIZATION)

    @property
    def paired(self) -> bool:
        c = self.comparison
        return c is not None and c.paired

    @property
    def failed(self) -> str:
        return failed_leg(self.baremetal, self.hypervisor)

    @property
    def overhead_pct(self) -> float | None:
        c = self.comparison
        return None if c is None else c.pct

    @property
    def overhead_ci(self) -> tuple[float, float] | None:
        c = self.comparison
        return None if c is None else c.interval


@dataclass(frozen=True)
class HtPair:
    """HT off and on of one host at the same cores and profile: the HT gain."""

    off: PointResult
    on: PointResult

    @property
    def comparison(self) -> Comparison | None:
        """HT on's gain over HT off."""
        return point_comparison(self.off, self.on, PairKind.HT)

    @property
    def failed(self) -> str:
        return failed_leg(self.off, self.on)


def ht_pairs(points: Sequence[PointResult]) -> list[HtPair]:
    """HT off beside HT on of the same host, platform, cores and profile (figures
    present), in point order."""
    off: dict[tuple[str, str, int, str], PointResult] = {}
    on: dict[tuple[str, str, int, str], PointResult] = {}
    for p in points:
        if p.value is None:
            continue
        k = (p.key.host, p.key.platform, p.key.cores, p.key.profile)
        (on if p.key.ht == "on" else off)[k] = p
    return [HtPair(off[k], on[k]) for k in off if k in on]


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
    return p.metadata.env.physical_host(p.key.host, p.key.platform)


def pair_points(points: Sequence[PointResult]) -> tuple[list[OverheadPair], list[PairRefusal]]:
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
            # a virtualized host's "bare metal" too: its flag goes with the pair's figure
            bare.setdefault((p.key.cores, p.key.ht, p.key.profile), []).append(p)
        else:
            guests.append(p)
    pairs: list[OverheadPair] = []
    refused: list[PairRefusal] = []
    for g in sorted(guests, key=lambda p: (p.key.cores, p.key.ht, p.key.profile, p.key.host)):
        slot = (g.key.cores, g.key.ht, g.key.profile)
        home = physical_host(g)
        own = [b for b in bare.get(slot, []) if b.key.host == home]
        if own:
            pairs.append(OverheadPair(*slot, own[0], g))
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


def paired(points: Sequence[PointResult]) -> list[OverheadPair]:
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


def _same_workload(a: PointResult, b: PointResult) -> bool:
    """The same CPU model and load: file size, keep-alive, TLS key, role and scheme."""
    wa, wb = a.metadata.workload, b.metadata.workload
    return a.metadata.env.cpu_model == b.metadata.env.cpu_model and (
        wa.file_size,
        wa.keepalive,
        wa.tls_key,
        wa.role,
        wa.scheme,
    ) == (wb.file_size, wb.keepalive, wb.tls_key, wb.role, wb.scheme)


def _software_note(a: PointResult, b: PointResult) -> str:
    """The software the legs of different runs differ in ("" when none recorded differs)."""
    ea, eb = a.metadata.env, b.metadata.env
    diffs = [
        f"{name} {x} / {y}"
        for name, x, y in (
            ("nginx", ea.nginx_version, eb.nginx_version),
            ("OpenSSL", ea.openssl_version, eb.openssl_version),
            ("kernel", ea.kernel, eb.kernel),
            ("generator", ea.measured_by, eb.measured_by),
        )
        if x and y and x != y
    ]
    return "different software: " + ", ".join(diffs) if diffs else ""


def pair_across_runs(runs: Mapping[int, Sequence[PointResult]]) -> list[OverheadPair]:
    """Guest points whose run holds no bare metal of their host at that slot, beside that
    host's bare metal from the newest other run with the same CPU model and workload
    (figures present): unpaired pairs naming both runs (``OverheadPair.runs``)."""
    bare: dict[tuple[str, int, str, str], list[tuple[int, PointResult]]] = {}
    for run_id, points in runs.items():
        for p in points:
            if p.value is not None and _family(p) == "baremetal":
                bare.setdefault((p.key.host, p.key.cores, p.key.ht, p.key.profile), []).append(
                    (run_id, p)
                )
    out: list[OverheadPair] = []
    for run_id, points in sorted(runs.items()):
        for g in sorted(points, key=lambda p: (p.key.cores, p.key.ht, p.key.profile, p.key.host)):
            if g.value is None or _family(g) in ("", "baremetal"):
                continue
            slot = (g.key.cores, g.key.ht, g.key.profile)
            legs = bare.get((physical_host(g), *slot), [])
            if any(r == run_id for r, _ in legs):
                continue  # its own run measured that bare metal: pair_points pairs them
            fits = [(r, b) for r, b in legs if _same_workload(b, g)]
            if fits:
                b_run, b = max(fits, key=lambda rb: rb[0])
                note = _software_note(b, g)
                out.append(OverheadPair(*slot, b, g, runs=(b_run, run_id), note=note))
    return out


def _family(p: PointResult) -> str:
    """The point's platform family ("" for a platform this sizing does not know)."""
    try:
        return str(Platform(p.key.platform).family)
    except ValueError:
        return ""
