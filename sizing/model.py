"""Frozen value types shared by the planner, the runner, the store and the engine.

These are the seams between the stages of the data flow
(inventory -> plan -> provision -> measure -> store -> engine -> render).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sizing.records import PointMeta, SampleMeta


class Ht(StrEnum):
    """Hyper-threading mode of a point: one logical CPU per core, or both siblings."""

    OFF = "off"
    ON = "on"


class Platform(StrEnum):
    """What the NGINX under test runs on, as an inventory names it."""

    BAREMETAL = "baremetal"
    LIBVIRT = "libvirt"
    VSPHERE = "vsphere"
    CONTAINER = "container"  # NGINX in a container (Podman) on a measured host

    @property
    def family(self) -> str:
        """The sizing-table column: ``baremetal``, ``hypervisor`` or ``container``."""
        return family_of(self)

    @property
    def pairs_with_host(self) -> bool:
        """Whether its points pair with the bare metal of the machine they run on (a KVM
        guest, a container); an ESXi host is no Linux nginx host, so vSphere does not."""
        return self in (Platform.LIBVIRT, Platform.CONTAINER)

    @property
    def shares_host_cpus(self) -> bool:
        """Whether its NGINX runs on its host's own kernel and CPUs (a container): the
        host's measured ceilings are its own. A guest's vCPUs are not its host's CPUs."""
        return self is Platform.CONTAINER

    @property
    def leg_word(self) -> str:
        """What a pair calls its non-bare-metal leg: ``guest`` or ``container``."""
        return "container" if self is Platform.CONTAINER else "guest"


class BasisPlatform(StrEnum):
    """What a basis' figures ran on, in the sizing table's order: a bare-metal server, a
    container or VM that believes it is bare metal, a guest of either hypervisor (KVM,
    ESXi; ``hypervisor`` names both), or a Kubernetes pod (reference data only)."""

    BAREMETAL = "baremetal"
    VIRTUALIZED_HOST = "virtualized-host"
    HYPERVISOR = "hypervisor"
    KVM = "kvm"
    ESXI = "esxi"
    KUBERNETES = "kubernetes"
    CONTAINER = "container"  # measured: NGINX in a Podman container (never Kubernetes)


# One vocabulary (issue 62): what a virtualized host is, in the words every rendering uses
# (the terminal's answer, its notes, the options' help, the run tables, the guide).
VIRTUALIZED_HOST_WORDS = "virtualized host (a container or VM measured as bare metal)"


class HtChoice(StrEnum):
    """``--ht``: one hyper-threading mode; ``both`` (``run``: measure each); ``any``
    (sizing: whichever serves the demand better)."""

    OFF = "off"
    ON = "on"
    BOTH = "both"
    ANY = "any"

    @property
    def modes(self) -> tuple[Ht, ...]:
        """The HT modes the choice stands for."""
        if self in (HtChoice.OFF, HtChoice.ON):
            return (Ht(self.value),)
        return (Ht.OFF, Ht.ON)


class Source(StrEnum):
    """Where an answer's figures come from (``--source``, and what an answer used): the
    results store, the bundled published reference data, or both."""

    MEASURED = "measured"
    REFERENCE = "reference"
    BOTH = "both"

    @classmethod
    def of(cls, used: Iterable[str]) -> Source:
        """What a set of bases' origins amounts to (``both`` when it holds the two)."""
        got = set(used)
        if {cls.MEASURED, cls.REFERENCE} <= got:
            return cls.BOTH
        return cls.MEASURED if cls.MEASURED in got else cls.REFERENCE


class FigureKind(StrEnum):
    """What a figure is (:attr:`Figure.source`): measured by sizing or published
    (reference), or derived from them: interpolated between two observed core counts,
    scaled with another basis' scaling shape, extrapolated by the fitted model, translated
    to another CPU. ``emulated`` is a table cell's kind for a figure measured in a
    software-emulated guest."""

    MEASURED = "measured"
    REFERENCE = "reference"
    INTERPOLATED = "interpolated"
    SHAPE = "shape"
    EXTRAPOLATED = "extrapolated"
    TRANSLATED = "translated"
    EMULATED = "emulated"
    FLOOR = "floor"  # at least what the largest measured count carries (sizing.engine.reach)
    ASSUMED = "assumed"  # another platform's figure times a stated share (sizing.engine.assume)
    # a table cell's kind for a figure examples/simulated.py made up (flagged ``simulated``):
    # the engine sizes on it as on a measured one; no rendering calls it measured
    SIMULATED = "simulated"


OBSERVED = (FigureKind.MEASURED, FigureKind.REFERENCE)
# predicted for a core count not observed: by the fit, between two observed, by a shape
PREDICTED = (FigureKind.INTERPOLATED, FigureKind.EXTRAPOLATED, FigureKind.SHAPE)
DERIVED = (
    *PREDICTED,
    FigureKind.TRANSLATED,
    FigureKind.FLOOR,
    FigureKind.ASSUMED,
)  # not observed as it stands


def family_of(name: str) -> str:
    """The sizing-table column of a platform name: ``baremetal``, ``container`` or
    ``hypervisor``; a container is never pooled with bare metal nor called a guest."""
    if name in (Platform.BAREMETAL, Platform.CONTAINER):
        return str(name)
    return "hypervisor"


class SizingMetric(StrEnum):
    """What a sizing figure counts, the engine's ``profile`` of a figure and a series:
    requests per second (``rps``) or new TLS handshakes per second (``tps``), the article's
    two tables. A workload profile says which through its ``metric:``
    (:attr:`sizing.profiles.Profile.sizing_metric`)."""

    RPS = "rps"
    TPS = "tps"


# A profile's ``metric:`` that sizes (``recommend``, ``table``, ``guide``), as the metric
# (here, not beside the pydantic model of sizing.profiles, so that sizing.profile_facts
# reads a stored profile without pydantic). An API gateway's calls per second are the
# request rate of its own role (api-jwt): they size an RPS demand of that role, never
# another's (sizing.engine.roles).
SIZING_METRICS = {
    "requests_per_second": SizingMetric.RPS,
    "api_calls_per_second": SizingMetric.RPS,
    "handshakes_per_second": SizingMetric.TPS,
}


# The range of a rate (a figure per second: requests, handshakes) that the store accepts and
# the engine reasons in. A point measured for seconds cannot show one event in 17 minutes,
# and no server carries 10^12 requests a second: `sizing import` refuses a rate outside
# it, a stored one outside it is never sized on, and no bootstrap draw leaves it.
RATE_FLOOR = 1e-3
RATE_CEILING = 1e12

# The unit of each sizing profile's figure (the article's two tables).
PROFILE_UNITS: dict[str, str] = {SizingMetric.RPS: "requests/s", SizingMetric.TPS: "handshakes/s"}


def is_tps_figure(unit: str) -> bool:
    """Whether a stored figure of this unit is sized as TPS (full TLS handshakes a second):
    the crypto ceiling bounds it. Stored points keep their unit, not their profile's metric."""
    return unit == PROFILE_UNITS[SizingMetric.TPS]


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


def _records() -> Any:
    # deferred: the records' classes (a third of the CLI's start) are read only when a
    # point or a sample is made; the enums here are what `sizing demand` and `--help` need
    import sizing.records

    return sizing.records


def __getattr__(name: str) -> Any:
    """``sizing.model.PointMeta`` and ``SampleMeta``, as before their import was deferred."""
    if name in ("PointMeta", "SampleMeta"):
        return getattr(_records(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class Sample:
    """One measured value with what produced it (PerfKitBenchmarker's Sample)."""

    metric: str
    value: float
    unit: str
    metadata: SampleMeta = field(default_factory=lambda: _records().SampleMeta())


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
    metadata: PointMeta = field(default_factory=lambda: _records().PointMeta())


# What a client-bound point may carry besides its verdicts and still be a lower bound: the
# flags that say what the host was, not that the figure is wrong.
FLOOR_VERDICTS = frozenset({"client-bound", "not-saturated"})
FLOOR_NOTES = frozenset({"virtualized-host", "emulated", "noisy"})


def client_floor(r: PointResult) -> bool:
    """A point the load generator limited, and nothing else: no errors, no mix mismatch, no
    erratic or drifting repetitions, no upstream or network limit. What the server served
    then is the least it can carry (ENGINE: "a client-bound lower bound is a floor too,
    never a reason to refuse"); it is used as ``≥ value``, never as an exact figure."""
    flags = set(r.flags)
    return (
        r.status is Status.INVALID
        and "client-bound" in flags
        and flags <= FLOOR_VERDICTS | FLOOR_NOTES
        and r.value is not None
        and r.value > 0
    )


@dataclass
class RunSummary:
    """What a run did, for rendering."""

    run_id: int
    status: RunStatus
    points: list[PointResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    already: int = 0  # --resume: points the run had before this invocation
    recovered: list[str] = field(default_factory=list)  # points kept in a recovery file


@dataclass(frozen=True)
class Figure:
    """One throughput figure the engine sizes from.

    ``source`` is ``measured`` (from the results store), ``reference`` (the bundled
    published dataset), ``interpolated`` (between two observed core counts of its basis),
    ``shape`` (scaled with another basis' scaling shape, see :mod:`sizing.engine.scaling`)
    or ``extrapolated`` (from a fitted scaling model beyond the observed core counts).
    ``platform`` is the basis platform (:func:`basis_platform`): ``baremetal``, ``kvm``,
    ``esxi``, ``virtualized-host`` or ``kubernetes`` (``hypervisor`` from old callers).
    ``profile`` is ``rps`` or ``tps``.

    ``ci_low``/``ci_high`` are the interval of the same statistic as ``value``: for a
    measured median the distribution-free interval of the median, whose true ``coverage``
    (0-1) may be below 95% with few repetitions ("range of 3 runs, 75%"); for a prediction
    the bootstrap prediction interval. ``interval`` says in words what the interval is and
    covers; ``reps`` are the timed repetitions a measured figure is the median of.
    ``basis`` is the id of the basis the figure belongs
    to (:class:`sizing.engine.basis.Basis`); ``flags`` are what qualifies it (``noisy``,
    ``virtualized-host``, ``emulated``, ``client-bound``, ...); ``bound == "lower"`` says
    the true capacity may be higher (the source was client-bound): such a figure is shown
    as "≥ value" and never fitted.
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
    basis: str = ""  # Basis.id
    flags: tuple[str, ...] = ()
    bound: str = ""  # "" exact | "lower": the true capacity may be higher
    reps: tuple[float, ...] = ()
    coverage: float | None = None
    interval: str = ""
    sized: float | None = None  # set by --confidence: the quantile of its draws sized on
    pair: str = ""  # measured as a leg of this pair (sizing.plan.pairs.Pair.id)
    pair_ratios: tuple[float, ...] = ()  # the pair's per-repetition ratios (B / A)
    pair_role: str = ""  # this figure's leg: a, b (or c, the third leg)
    pair_c_ratios: tuple[float, ...] = ()  # three legs: the per-repetition C / A

    @property
    def conservative(self) -> float:
        """The figure to size on: the quantile ``--confidence`` asked for, else the low end
        of its interval when known; never below 0."""
        if self.sized is not None:
            return max(0.0, self.sized)
        return max(0.0, self.ci_low if self.ci_low is not None else self.value)

    @property
    def lower_bound(self) -> bool:
        return self.bound == "lower"


# The basis platforms that `--platform hypervisor` means.
HYPERVISOR_PLATFORMS = ("kvm", "esxi")

# The cost family of every platform name an answer may carry (inventory, basis and
# reference names): a catalog prices a licence per family (``hypervisor`` for every guest
# platform) or per platform. A virtualized host (a container or VM that believes it is
# bare metal) belongs to no family: what it runs on is not known, so no family's licence
# is assumed for it.
COST_FAMILIES: dict[str, str] = {
    "baremetal": "baremetal",
    "hypervisor": "hypervisor",
    **dict.fromkeys(HYPERVISOR_PLATFORMS, "hypervisor"),
    Platform.LIBVIRT: "hypervisor",
    Platform.VSPHERE: "hypervisor",
    "kubernetes": "kubernetes",
    Platform.CONTAINER: "container",
}


def cost_family(name: str) -> str:
    """The cost family of a platform name (``baremetal``, ``hypervisor``, ``kubernetes``),
    ``""`` for one that belongs to none (``virtualized-host``)."""
    return COST_FAMILIES.get(name, "")


def basis_platform(platform: str, flags: Iterable[str] = ()) -> str:
    """The basis platform of a point: ``libvirt`` → ``kvm``, ``vsphere`` → ``esxi``, and a
    bare-metal point flagged ``virtualized-host`` (a container or VM that believes it is
    bare metal) → ``virtualized-host``, which is never called bare metal."""
    if platform == Platform.LIBVIRT:
        return BasisPlatform.KVM
    if platform == Platform.VSPHERE:
        return BasisPlatform.ESXI
    if platform == Platform.BAREMETAL and "virtualized-host" in tuple(flags):
        return BasisPlatform.VIRTUALIZED_HOST
    return platform


class PairKind(StrEnum):
    """What a pair compares: leg B against leg A."""

    VIRTUALIZATION = "virtualization"  # A: bare metal, B: a guest or container on it
    HT = "ht"  # A: HT off, B: HT on, same host, cores and profile

    @property
    def figure(self) -> str:
        """The figure a pair of this kind gives."""
        return "overhead" if self is PairKind.VIRTUALIZATION else "HT gain"
