"""The latency records: one offered rate's figures, the curve with its knee and SLO
search, and the soak's repetitions (what :mod:`sizing.measure.fixedrate` stores)."""

from __future__ import annotations

from dataclasses import dataclass

from sizing.errors import UsageError

__all__ = ["Climb", "LatencyPoint", "LatencyRecord", "SloSearch", "SoakRep"]


@dataclass(frozen=True)
class LatencyPoint:
    """One offered rate and what was measured at it (latencies in ms)."""

    rate: float
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    achieved: float | None = None  # responses per second
    error_ratio: float = 0.0
    p90_ms: float | None = None
    server_busy: float | None = None  # % of the server's pinned CPUs
    server_steal: float | None = None
    client_busy: float | None = None  # % of the busiest client's generator CPUs

    def stat(self, name: str) -> float:
        """The named statistic (``mean``, ``p50``, ``p90``, ``p95``, ``p99``, ``max``)."""
        value = {
            "mean": self.mean_ms,
            "p50": self.p50_ms,
            "p90": self.p90_ms,
            "p95": self.p95_ms,
            "p99": self.p99_ms,
            "max": self.max_ms,
        }[name]
        if value is None:
            raise UsageError(f"no {name} latency was measured at {self.rate:g} requests/s")
        return value


@dataclass(frozen=True)
class Climb:
    """How high a climbing sweep could go: the clients' ceiling and what it came from."""

    ceiling: float | None = None
    client_cores: int | None = None
    planning_rate_per_core: float | None = None


@dataclass(frozen=True)
class SloSearch:
    """The search for the highest rate meeting an SLO, to ±2%."""

    capacity: float | None = None
    bracket: tuple[float | None, ...] = ()  # (highest met, lowest failed)
    probes: tuple[float, ...] = ()
    probe_count: int | None = None
    converged: bool | None = None
    reason: str | None = None
    sweep_capacity: float | None = None  # what the swept rates alone said


@dataclass(frozen=True)
class SoakRep:
    """One repetition of one rate (a soak repeats every rate)."""

    repetition: int = 0
    mean_ms: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    server_steal: float | None = None
    server_busy: float | None = None
    lag: float | None = None


@dataclass(frozen=True)
class LatencyRecord:
    """A latency point's curve, knee, SLO search and soak (stored at the point's level)."""

    repetitions_per_rate: int | None = None
    soak_s: float | None = None
    rates: tuple[float, ...] = ()
    curve: tuple[LatencyPoint, ...] = ()
    knee_rate: float | None = None
    knee_interval: tuple[float, ...] | None = None
    knee_factor: float | None = None
    knee_limit_ms: float | None = None
    knee_busy: str | None = None  # what was busy at the rate bounding the figure
    knee_reason: str | None = None  # why there is no knee interval
    climb: Climb | None = None
    slo: str | None = None
    slo_label: str | None = None
    slo_search: SloSearch | None = None
    soak_series: dict[str, tuple[SoakRep, ...]] | None = None  # rate ("1000") -> repetitions
    soak_jumps: dict[str, tuple[int, ...]] | None = None  # rate -> repetitions that jumped

    def series(self, key: str) -> tuple[SoakRep, ...]:
        return (self.soak_series or {}).get(key, ())

    @property
    def jumps(self) -> dict[str, tuple[int, ...]]:
        return dict(self.soak_jumps or {})

    @property
    def probes(self) -> tuple[float, ...]:
        return self.slo_search.probes if self.slo_search else ()

    @property
    def slo_capacity(self) -> float | None:
        return self.slo_search.capacity if self.slo_search else None
