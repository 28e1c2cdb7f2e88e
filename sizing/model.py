"""Frozen value types shared by the planner, the runner, the store and the engine.

These are the seams between the stages of the data flow
(inventory -> plan -> provision -> measure -> store -> engine -> render).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Ht(StrEnum):
    """Hyper-threading mode of a point: one logical CPU per core, or both siblings."""

    OFF = "off"
    ON = "on"


class Platform(StrEnum):
    """What the NGINX under test runs on, as an inventory names it."""

    BAREMETAL = "baremetal"
    LIBVIRT = "libvirt"
    VSPHERE = "vsphere"

    @property
    def family(self) -> str:
        """The sizing-table column: ``baremetal`` or ``hypervisor``."""
        return family_of(self)


def family_of(name: str) -> str:
    """The sizing-table column of a platform name: ``baremetal`` or ``hypervisor``."""
    return "baremetal" if name == Platform.BAREMETAL else "hypervisor"


# The unit of each sizing profile's figure (the article's two tables).
PROFILE_UNITS = {"rps": "requests/s", "tps": "handshakes/s"}

SERVER_DIED = "server-died"  # the point's nginx stopped while it was being measured


class Status(StrEnum):
    """Outcome of one point.

    ``measured`` figures are valid and usable for sizing; ``invalid`` figures were measured
    but failed a validity guard (kept, shown, never used); ``skipped`` points were not
    measured for a stated reason; ``failed`` points broke while being measured.
    """

    MEASURED = "measured"
    INVALID = "invalid"
    SKIPPED = "skipped"
    FAILED = "failed"


class RunStatus(StrEnum):
    """Outcome of one run as stored: running until it ends, then one of the others."""

    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


@dataclass(frozen=True)
class Sample:
    """One measured value with what produced it (PerfKitBenchmarker's Sample)."""

    metric: str
    value: float
    unit: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PointKey:
    """Identity of a point within a run."""

    host: str
    platform: str
    cores: int
    ht: str
    profile: str

    def label(self) -> str:
        return f"{self.host} {self.platform} {self.cores}c ht={self.ht} {self.profile}"


@dataclass(frozen=True)
class PointResult:
    """The summary of one point as stored and shown."""

    key: PointKey
    status: Status
    reason: str = ""
    value: float | None = None
    unit: str = ""
    repetitions: int = 0
    spread: float | None = None  # (max - min) / median of the timed repetitions, as a fraction
    ci_low: float | None = None
    ci_high: float | None = None
    flags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Figure:
    """One throughput figure the engine sizes from.

    ``source`` is ``measured`` (from the results store), ``reference`` (the bundled
    published dataset) or ``extrapolated`` (from a fitted scaling model).
    ``platform`` is the sizing-table family: ``baremetal``, ``hypervisor`` or
    ``kubernetes``. ``profile`` is ``rps`` or ``tps``.
    """

    platform: str
    cores: int
    ht: str
    profile: str
    value: float
    unit: str
    source: str
    origin: str = ""  # run id and host for measured figures, the publication for reference
    emulated: bool = False
    ci_low: float | None = None
    ci_high: float | None = None
