"""How a profile's points are measured: one method per kind of profile."""

from __future__ import annotations

from typing import Protocol

from sizing.measure.evaluate import Measurement
from sizing.measure.fixedrate import FixedRate
from sizing.measure.gateway import Gateway
from sizing.measure.measure_context import MeasureContext
from sizing.measure.replay import Replay
from sizing.measure.throughput import Throughput
from sizing.plan.points import PlannedPoint
from sizing.profiles import Profile
from sizing.provision.platforms.base import Target

__all__ = ["Measurement", "Method", "method_for"]


class Method(Protocol):
    """Measures one provisioned point; never raises for the point's own failure."""

    def measure(self, ctx: MeasureContext, point: PlannedPoint, target: Target) -> Measurement: ...


def method_for(profile: Profile) -> Method:
    """Latency profiles: open loop at fixed rates; a replayed customer workload: closed
    loop over its mix, checked against the lab's log; proxy and api-jwt: the gateway
    checks, then closed loop; every other profile: closed loop."""
    if profile.workload:
        return Replay()
    if profile.mode == "fixed-rate":
        return FixedRate()
    if profile.is_gateway:
        return Gateway(Throughput())
    return Throughput()
