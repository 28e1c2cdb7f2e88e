"""Compare two runs: what differs in their environments and in their figures. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sizing.model import PointResult

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
                    host, "(host)", "present" if ea else "absent", "present" if eb else "absent"
                )
            )
            continue
        for key in FINGERPRINT:
            if ea.get(key) != eb.get(key):
                out.append(
                    EnvDiff(
                        host,
                        "(host)",
                        "present" if ea is not None else "absent",
                        "present" if eb is not None else "absent",
                    )
                )
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
