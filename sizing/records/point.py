"""A point's record: what produced its figure, the evidence its guards judged, and what
its kind of measurement adds (a latency curve, the gateway's checks, a pair). Stored as one
flat JSON object per point (:mod:`sizing.records.codec`); every reader uses attributes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sizing.records.codec import dump_object, flat, load, verbatim
from sizing.records.gateway import GatewayChecks
from sizing.records.guards import Guards
from sizing.records.latency import LatencyRecord
from sizing.records.platform import PlatformSettings
from sizing.records.replay import ReplayRecord
from sizing.records.window import MergedLatencyRecord

__all__ = [
    "PointEnvironment",
    "PairLeg",
    "PairRecord",
    "PointEvidence",
    "PointMeta",
    "StopRuleRecord",
    "UpstreamRecord",
    "PointWorkload",
]


@dataclass(frozen=True)
class UpstreamRecord:
    """Where one of the point's upstream web servers ran."""

    host: str = ""
    cpus: str = ""
    shares_with: str | None = None


@dataclass(frozen=True)
class PointEnvironment:
    """The point's identity, its software and hardware, and where everything ran."""

    host: str | None = None
    platform: str | None = None
    cores: int | None = None
    ht: str | None = None
    profile: str | None = None
    nginx_version: str | None = None
    openssl_version: str | None = None
    kernel: str | None = None
    cpu_model: str | None = None
    hypervisor: str | None = None  # the "bare metal" host is itself a guest or container
    tool: str | None = None
    tool_version: str | None = None
    tool_build: str | None = None
    # why a stored tool (schema 6) or its version (schema 8) was corrected, or could not be
    tool_mended: str | None = None
    generator: str | None = None
    sizing_version: str | None = None
    url: str | None = None
    target: str | None = None
    platform_settings: PlatformSettings | None = None
    server_cpus: str | None = None
    worker_cpus: str | None = None
    client_cpus: dict[str, str] | None = None
    clients: tuple[str, ...] | None = None
    irq_steering: str | None = None
    upstreams: tuple[UpstreamRecord, ...] | None = None
    upstream: str | None = None  # a gateway's first upstream (its single requests' baseline)

    @property
    def measured_by(self) -> str | None:
        """The generator that measured the point and its version (``NAME VERSION``): the
        point's own facts, never its host's; None when the point recorded no generator."""
        if not self.tool:
            return None
        return f"{self.tool} {self.tool_version}" if self.tool_version else self.tool

    def physical_host(self, host: str, platform: str) -> str:
        """The machine a point ran on: a guest's hypervisor host, a container's host, else
        the host itself."""
        s = self.platform_settings
        return (s.physical_host() if s is not None else None) or host


@dataclass(frozen=True)
class PointWorkload:
    """What load the point measured under."""

    file_size: int | None = None
    connections: int | None = None
    duration_s: float | None = None
    tls_key: str | None = None
    tls_ciphers: str | None = None
    keepalive: bool | None = None
    role: str | None = None  # web, proxy, api-jwt
    scheme: str | None = None
    mode: str | None = None  # fixed-rate for the latency profiles
    cpu_curve: bool | None = None  # a gateway CPU curve (api-jwt-cpu, proxy-cpu)
    customer: str | None = None  # a replayed customer workload's basis key (issue 57)


@dataclass(frozen=True)
class StopRuleRecord:
    """The adaptive repetition rule the point ran under."""

    fixed: int | None = None
    min: int | None = None
    max: int | None = None
    target_half_width: float | None = None


@dataclass(frozen=True)
class PointEvidence:
    """The point-level evidence beside its guards: TLS suites, the kernel's network work
    outside the pinned CPUs, the medians of the server's and each upstream's CPU, the
    merged latency and the server's NIC."""

    tls_suites: dict[str, int] | None = None
    softirq_outside_pct_median: float | None = None
    server_busy_median: float | None = None
    upstream_busy_median: dict[str, float] | None = None  # upstream host -> % of its CPUs
    latency: MergedLatencyRecord = flat(MergedLatencyRecord)
    server_net_interface: str | None = None
    server_net_tx_bytes_per_s: float | None = None
    server_net_rx_bytes_per_s: float | None = None
    server_link_bytes_per_s: float | None = None
    guards: Guards | None = None


@dataclass(frozen=True)
class PairLeg:
    point: str = ""
    status: str = ""
    reason: str = ""


@dataclass(frozen=True)
class PairRecord:
    """What both legs of a pair store: the legs and their verdicts, the order the windows
    ran in, each pair's ratio and the ratio's interval; ``role`` is this leg's (a or b)."""

    id: str = ""
    kind: str = ""
    legs: dict[str, PairLeg] = field(default_factory=dict)
    order: str = ""
    ratios: tuple[float, ...] = ()
    c_ratios: tuple[float, ...] = ()  # three legs: c / a per round (the overhead's)
    ratio: float | None = None
    ratio_low: float | None = None
    ratio_high: float | None = None
    coverage: float | None = None
    stopped: str = ""  # why the alternation ended early ("" when the rule stopped it)
    role: str = ""

    def ratios_of(self, other: PairRecord) -> tuple[float, ...]:
        """``other``'s per-round ratios against this leg, when both ran in this one
        alternation and this leg is its ``a`` (the reference); () otherwise. A record
        without roles is read as the a and b of a pair."""
        if not self.id or self.id != other.id or self.role not in ("a", ""):
            return ()
        return {"b": self.ratios, "": self.ratios, "c": self.c_ratios}.get(other.role, ())


@dataclass(frozen=True)
class PointMeta:
    """Everything a point records besides its figure (see the module)."""

    env: PointEnvironment = flat(PointEnvironment)
    workload: PointWorkload = flat(PointWorkload)
    stop_rule: StopRuleRecord | None = None
    evidence: PointEvidence = flat(PointEvidence)
    latency: LatencyRecord = flat(LatencyRecord)
    gateway: GatewayChecks = flat(GatewayChecks)
    pair: PairRecord | None = None
    replay: ReplayRecord | None = None  # a customer workload's replay (issue 57)
    recovery_id: str | None = None  # the recovery file a point was imported from
    # keys another sizing stored that this one does not know, kept as they were
    verbatim_unknown: dict[str, object] = verbatim()

    @classmethod
    def parse(cls, data: Mapping[str, object] | None) -> PointMeta:
        """A stored point record (JSON object), leniently (:func:`load`)."""
        return load(cls, data or {})

    def to_json(self) -> dict[str, object]:
        return dump_object(self)

    @property
    def is_latency(self) -> bool:
        """A latency point with a curve (the open-loop method)."""
        return self.workload.mode == "fixed-rate" and bool(self.latency.curve)
