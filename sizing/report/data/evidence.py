"""What each validity guard saw at one point, from its stored samples (pure): the server's
and the clients' CPU, errors, TLS handshakes full and reused, the interval of the median
with its coverage (the same one ``recommend``, ``table`` and the guide use) and the latency
percentiles. ``run --json``, ``results --json``, ``--csv`` and the terminal table
all show a point through :func:`point_evidence` and its :class:`Evidence`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sizing.ceilings import Ceiling, binding, point_ceilings
from sizing.intervals import (
    interval_words,
    median_coverage,
    median_interval,
    repetition_flags,
)
from sizing.measure.checks import guard_cpu, timed
from sizing.model import PointResult, Sample, is_tps_figure
from sizing.records.host import HostRecord
from sizing.records.window import LATENCY_KEYS

__all__ = ["LATENCY_KEYS", "Evidence", "point_evidence"]


@dataclass(frozen=True)
class Evidence:
    """What the guards saw at one point (:func:`point_evidence` says how each is
    computed); ``value`` is the figure the ceilings' shares are of. ``to_json`` is the
    ``evidence`` object of ``--json``."""

    server_cpu_pct: float | None = None
    client_cpu_pct: float | None = None
    errors: int | None = None
    socket_errors: int | None = None
    http_errors: int | None = None
    tls_full: int | None = None
    tls_reused: int | None = None
    interval_pct: float | None = None
    interval_coverage: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    repetition_flags: tuple[str, ...] = ()
    interval: str | None = None
    latency_ms: Mapping[str, float] = field(default_factory=dict)  # "p50" -> ms
    server_cpu_split: Mapping[str, float] | None = None
    ceilings: tuple[Ceiling, ...] = ()
    value: float | None = None

    def latency(self, percentile: str) -> float | None:
        """The merged latency at ``percentile`` ("p50", "p90", "p99"), ms."""
        return self.latency_ms.get(percentile)

    def closest_ceiling(self) -> Ceiling | None:
        """The known ceiling the figure came closest to (the highest share)."""
        return binding(self.ceilings, self.value)

    def to_json(self) -> dict[str, Any]:
        return {
            "server_cpu_pct": self.server_cpu_pct,
            "client_cpu_pct": self.client_cpu_pct,
            "errors": self.errors,
            "socket_errors": self.socket_errors,
            "http_errors": self.http_errors,
            "tls_full": self.tls_full,
            "tls_reused": self.tls_reused,
            "interval_pct": self.interval_pct,
            "interval_coverage": self.interval_coverage,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "repetition_flags": list(self.repetition_flags),
            "interval": self.interval,
            "latency_ms": dict(self.latency_ms),
            "server_cpu_split": self.server_cpu_split,
            "ceilings": [c.to_dict(self.value) for c in self.ceilings],
        }


NO_EVIDENCE = Evidence()  # a point whose samples were not read


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def point_evidence(
    result: PointResult,
    samples: Sequence[Sample],
    host: HostRecord | None = None,
) -> Evidence:
    """The guards' evidence and the figures around the median.

    The CPU figures are :func:`sizing.measure.checks.guard_cpu`'s. ``server_cpu_pct``:
    median over the timed repetitions of the server's pinned CPUs'
    busy share; ``client_cpu_pct``: median of the busiest client's CPU; ``errors``,
    ``tls_full``, ``tls_reused``: sums over the timed repetitions; ``interval_pct``: half
    the width of the interval of the median (recomputed from the stored repetitions: old
    points kept a Student-t interval) relative to the median, with ``interval_coverage``
    and ``interval`` in words; ``latency_ms``: the point's merged percentiles;
    ``server_cpu_split``: the median user, system and softirq shares of the server's pinned
    CPUs; ``ceilings``: what the hardware allows the figure at most (:mod:`sizing.ceilings`;
    ``host`` is the run's record of the server host, where the crypto ceiling is kept).
    """
    timed_samples = timed(samples)
    meta_of = [s.metadata for s in timed_samples]
    cpu = guard_cpu(samples)

    def total(values: Sequence[int | None]) -> int | None:
        got = [v for v in values if v is not None]
        return int(sum(got)) if got else None

    meta = result.metadata
    interval = None
    # the windows of an open-loop sweep are different rates, not repetitions of one
    # figure: no interval, coverage or erratic flag is made of them
    reps = [
        v for s in timed_samples if s.metadata.rate is None and (v := _num(s.value)) is not None
    ]
    got = median_interval(reps) if len(reps) >= 2 else None
    if got is not None and result.value:
        interval = 100 * (got[1] - got[0]) / 2 / result.value
    elif result.ci_low is not None and result.ci_high is not None and result.value:
        interval = 100 * (result.ci_high - result.ci_low) / 2 / result.value
    latency = meta.evidence.latency.ms()
    server_cpu = cpu.server_pct
    if server_cpu is None:
        server_cpu = meta.evidence.server_busy_median
    return Evidence(
        server_cpu_pct=server_cpu,
        client_cpu_pct=cpu.client_pct,
        errors=total([m.errors for m in meta_of]),
        socket_errors=total([m.socket_errors for m in meta_of]),
        http_errors=total([m.http_errors for m in meta_of]),
        tls_full=total([m.tls_full for m in meta_of]),
        tls_reused=total([m.tls_reused for m in meta_of]),
        interval_pct=interval,
        interval_coverage=median_coverage(len(reps)) if len(reps) >= 2 else None,
        ci_low=None if got is None else got[0],
        ci_high=None if got is None else got[1],
        # erratic from the stored runs (points stored before the flag existed); drift as the
        # store decided it across the run
        repetition_flags=(*repetition_flags(reps)[0], *(f for f in result.flags if f == "drift")),
        interval=interval_words(len(reps)) if reps else None,
        latency_ms=latency,
        server_cpu_split=cpu.split,
        ceilings=tuple(
            point_ceilings(
                tls_key=meta.workload.tls_key or "",
                full_handshakes=is_tps_figure(result.unit),
                cores=result.key.cores,
                ht=result.key.ht,
                value=result.value,
                meta=meta,
                host=host,
            )
        ),
        value=result.value,
    )
