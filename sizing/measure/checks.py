"""Checks of what a run measured at one point, from its samples (pure): the CPU figures
its guards saw (the server's pinned CPUs, the busiest client, the server's user, system
and softirq split) and the ``far-below-ceiling`` warning of a full-handshake figure far
under the crypto ceiling its run measured. Keyed on the profile's sizing metric
(:class:`sizing.model.SizingMetric`), never on a unit's spelling. The run calls
:func:`against_ceiling` on each point it stores; ``results``, ``run --json`` and the guide
read the CPU figures through :func:`guard_cpu` (:mod:`sizing.report.data.evidence`)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from sizing.ceilings import HostCeilings, crypto_ceiling, far_below
from sizing.measure.cpu import cpu_split
from sizing.model import PointResult, Sample, SizingMetric, Status
from sizing.plan.points import PlannedPoint

__all__ = ["GuardCpu", "against_ceiling", "guard_cpu", "timed"]


def timed(samples: Sequence[Sample]) -> list[Sample]:
    """The sample of each timed repetition (warm-up left out), one per repetition: the
    primary sample, not the per-client ``<metric>.client`` ones."""
    return [s for s in samples if "." not in s.metric and not s.metadata.warmup]


@dataclass(frozen=True)
class GuardCpu:
    """The CPU figures the guards saw over a point's timed repetitions."""

    server_pct: float | None  # median of the server's pinned CPUs' busy share
    client_pct: float | None  # median of the busiest client's CPU
    split: Mapping[str, float] | None  # median user, system and softirq of the server's CPUs


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def guard_cpu(samples: Sequence[Sample]) -> GuardCpu:
    """What the server's and the clients' CPUs did over the timed repetitions."""
    meta = [s.metadata for s in timed(samples)]
    server = [m.server_busy for m in meta if m.server_busy is not None]
    clients = [max(m.client_cpu_busy.values()) for m in meta if m.client_cpu_busy]
    return GuardCpu(_median(server), _median(clients), cpu_split(meta))


def against_ceiling(
    ceilings: HostCeilings | None,
    point: PlannedPoint,
    result: PointResult,
    samples: Sequence[tuple[int, Sample]],
) -> PointResult:
    """A valid full-handshake figure (a profile sized as TPS) far below the crypto ceiling
    its run measured on the server (``ceilings``) gets the ``far-below-ceiling`` warning
    flag, with what the server's CPU did instead; any other point is returned as it is."""
    if result.status is not Status.MEASURED or point.profile.sizing_metric is not SizingMetric.TPS:
        return result
    ceiling = crypto_ceiling(ceilings, point.profile.tls_key or "", point.key.cores, point.key.ht)
    why = far_below(ceiling, result.value, guard_cpu([s for _, s in samples]).split)
    if why is None:
        return result
    reason = f"{result.reason}; {why}" if result.reason else why
    return replace(result, flags=(*result.flags, "far-below-ceiling"), reason=reason)
