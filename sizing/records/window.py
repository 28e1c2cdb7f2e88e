"""What one load window left behind, per sample: the server's and the clients' CPU, the
upstreams', the kernel's network work, the NIC and the merged latency (the host side's
outputs as :mod:`sizing.measure` judged them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sizing.records.codec import dump_object, flat, load, verbatim
from sizing.records.gateway import GatewayChecks

__all__ = [
    "CpuShare",
    "CpuWindow",
    "HistogramRecord",
    "KernelOutside",
    "MergedLatencyRecord",
    "SampleMeta",
    "ServerNet",
    "UpstreamWindow",
]


@dataclass(frozen=True)
class HistogramRecord:
    """A window's latency histogram merged over its clients, as stored
    (:meth:`sizing.load.latency.Histogram.to_json`: bucket index, as a string, to its
    request count, on 1% log-spaced buckets of ``growth``)."""

    count: int | None = None
    sum_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    growth: float | None = None
    buckets: dict[str, int] = field(default_factory=dict)

    @classmethod
    def parse(cls, data: Mapping[str, object]) -> HistogramRecord:
        """The record of a histogram's JSON form, leniently (:func:`load`)."""
        return load(cls, data)


@dataclass(frozen=True)
class CpuShare:
    """One CPU's shares of a window (%)."""

    user: float = 0.0
    system: float = 0.0
    softirq: float = 0.0
    irq: float = 0.0
    steal: float = 0.0
    busy: float = 0.0


@dataclass(frozen=True)
class CpuWindow:
    """The CPUs a window sampled: per CPU, and the mean busy and steal over them."""

    per_cpu: dict[str, CpuShare] = field(default_factory=dict)
    busy: float | None = None
    steal: float | None = None


@dataclass(frozen=True)
class UpstreamWindow:
    """One upstream host over a window (see :func:`sizing.measure.cpu.upstream_window`)."""

    busy: float | None = None  # what the upstream-bound guard reads
    own: float | None = None  # its nginx's CPU time, % of its capacity
    cpu_busy: float | None = None  # /proc/stat busy share of its CPUs
    capacity: float | None = None  # the CPUs it may use
    quota_cpus: float | None = None
    throttled: int | None = None


@dataclass(frozen=True)
class KernelOutside:
    """Kernel network work on the server host's CPUs outside nginx's pinned ones."""

    cpus: tuple[int, ...] = ()
    softirq_pct: float | None = None
    system_pct: float | None = None
    net_rx_outside: float | None = None
    net_rx_total: int | None = None
    net_tx_outside: float | None = None
    net_tx_total: int | None = None


@dataclass(frozen=True)
class ServerNet:
    """The server's busiest interface over a window."""

    interface: str | None = None
    rx_bytes_per_s: float | None = None
    tx_bytes_per_s: float | None = None
    link_bytes_per_s: float | None = None
    link_share: float | None = None


LATENCY_KEYS = ("mean", "p50", "p90", "p95", "p99", "p99_9", "max")


@dataclass(frozen=True)
class MergedLatencyRecord:
    """Latency merged over the load generators' reports (ms), stored flat."""

    latency_count: int | None = None
    latency_clients: int | None = None
    latency_min_ms: float | None = None
    latency_mean_ms: float | None = None
    latency_max_ms: float | None = None
    latency_p50_ms: float | None = None
    latency_p75_ms: float | None = None
    latency_p90_ms: float | None = None
    latency_p95_ms: float | None = None
    latency_p99_ms: float | None = None
    latency_p99_9_ms: float | None = None

    def ms(self) -> dict[str, float]:
        """The recorded statistics by name (``mean``, ``p50``, ... ``p99_9``, ``max``)."""
        got = {k: getattr(self, f"latency_{k}_ms") for k in LATENCY_KEYS}
        return {k: float(v) for k, v in got.items() if v is not None}

    @classmethod
    def of(
        cls,
        percentiles_ms: Mapping[float, float],
        *,
        count: int | None = None,
        clients: int | None = None,
        min_ms: float | None = None,
        mean_ms: float | None = None,
        max_ms: float | None = None,
    ) -> MergedLatencyRecord:
        """From percentiles keyed by number (99.9 -> ``latency_p99_9_ms``; one the record
        does not declare is left out) and the distribution's other figures."""
        p = {f"{q:g}".replace(".", "_"): v for q, v in percentiles_ms.items()}
        return cls(
            latency_count=count,
            latency_clients=clients,
            latency_min_ms=min_ms,
            latency_mean_ms=mean_ms,
            latency_max_ms=max_ms,
            latency_p50_ms=p.get("50"),
            latency_p75_ms=p.get("75"),
            latency_p90_ms=p.get("90"),
            latency_p95_ms=p.get("95"),
            latency_p99_ms=p.get("99"),
            latency_p99_9_ms=p.get("99_9"),
        )


@dataclass(frozen=True)
class SampleMeta:
    """A sample's record: the window it came from. One record for every kind of sample
    (a closed-loop window, one client's share of it, an open-loop rate, the gateway's
    single requests); a field a kind does not record is None."""

    # every window
    repetition: int | None = None
    warmup: bool = False
    started_at: float | None = None  # epoch s: paired legs show their alternation by it
    duration_s: float | None = None
    requests: int | None = None
    errors: int | None = None
    # a closed-loop window (the point's primary sample)
    socket_errors: int | None = None
    http_errors: int | None = None
    start_skew_s: float | None = None
    server_cpu: CpuWindow | None = None
    nginx_cpu_pct: float | None = None
    server_busy: float | None = None
    client_cpu_busy: dict[str, float] | None = None
    established: int | None = None
    tls_full: int | None = None
    tls_reused: int | None = None
    throttled: int | None = None
    # the hosts' cgroup CPU limits over the window: the least quota (CPUs) and the periods
    # it throttled the nginx under test or a load generator (None: no limit found)
    quota_cpus: float | None = None
    quota_throttled: int | None = None
    upstream_cpu: dict[str, UpstreamWindow] | None = None
    kernel_outside: KernelOutside | None = None
    server_net: ServerNet | None = None
    latency: MergedLatencyRecord = flat(MergedLatencyRecord)
    # one client's share of a closed-loop window (``<metric>.client``)
    client: str | None = None
    non_2xx_3xx: int | None = None
    transfer_bps: float | None = None
    cpu_busy: float | None = None
    # an open-loop rate (``latency``): the rate's figures and what the clients sent
    rate: float | None = None
    mean_ms: float | None = None
    p50_ms: float | None = None
    p90_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    achieved: float | None = None
    error_ratio: float | None = None
    server_steal: float | None = None
    client_busy: float | None = None
    sent_rate: float | None = None
    lag: float | None = None
    status_codes: dict[str, int] | None = None
    error_messages: tuple[str, ...] | None = None
    latency_histogram: HistogramRecord | None = None
    clients: int | None = None
    problems: tuple[str, ...] | None = None
    phase: str | None = None  # sweep, search
    repetition_at_rate: int | None = None
    # the gateway's single requests (``added_latency_ms``)
    gateway: GatewayChecks = flat(GatewayChecks)
    # keys another sizing stored that this one does not know, kept as they were
    verbatim_unknown: dict[str, object] = verbatim()

    @classmethod
    def parse(cls, data: Mapping[str, object] | None) -> SampleMeta:
        """A stored sample record (JSON object), leniently (:func:`load`)."""
        return load(cls, data or {})

    def to_json(self) -> dict[str, object]:
        return dump_object(self)
