"""Compare two runs: what differs in their environments and in their figures. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sizing.engine.table import overhead_bounds
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
        """Whether the two 95% intervals overlap (None when either has none)."""
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


def paired(points: Sequence[PointResult]) -> list[Pair]:
    """Bare-metal and hypervisor points of one run side by side (figures present)."""
    legs: dict[tuple[int, str, str], dict[str, PointResult]] = {}
    for p in points:
        if p.value is None:
            continue
        try:
            family = Platform(p.key.platform).family
        except ValueError:
            continue
        legs.setdefault((p.key.cores, p.key.ht, p.key.profile), {})[family] = p
    return [
        Pair(c, ht, prof, both["baremetal"], both["hypervisor"])
        for (c, ht, prof), both in sorted(legs.items())
        if "baremetal" in both and "hypervisor" in both
    ]
