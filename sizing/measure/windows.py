"""Load windows on every host of a point at a common start: the ONE window runner.

Every measurement (closed-loop and open-loop generators, the gateway's single curl requests)
hands ``playbooks/load.yml`` a spec per host; the hosts' window runner
(``playbooks/files/loadgen.py``) waits for the common start, runs each window's commands at
its offset and samples the CPUs, the network and nginx around it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from sizing.loadproto import LoadSpec, ProtocolError, RunnerOutput, WindowOutput, WindowSpec
from sizing.measure.measure_context import MeasureContext
from sizing.plan.points import PlannedPoint
from sizing.plan.settings import START_LEAD_S, WINDOW_GAP_S
from sizing.provision.platforms.base import Target

__all__ = [
    "RUN_TASK",
    "START_LEAD_S",
    "WINDOW_GAP_S",
    "HostOutput",
    "LoadSpec",
    "WindowOutput",
    "WindowRunner",
    "WindowSpec",
    "point_lead",
    "schedule_windows",
]

RUN_TASK = "Run the windows"  # playbooks/load.yml: the task whose stdout is the output
CLIENT_STAGGER_S = 0.25  # more start lead per client: Ansible reaches them one by one
SLACK_S = 120  # the playbook's timeout beyond the windows themselves
PER_HOST_S = 10  # ... and per host


@dataclass(frozen=True)
class HostOutput:
    """One host's outputs: its windows, or why there are none."""

    host: str
    windows: list[WindowOutput] | None
    problem: str = ""  # why ``windows`` is None
    unreadable: bool = False  # a result came, but it was not the runner's JSON


def schedule_windows(durations: Sequence[float], first_index: int = 0) -> list[WindowSpec]:
    """Back-to-back windows of ``durations``, ``WINDOW_GAP_S`` apart."""
    windows: list[WindowSpec] = []
    offset = 0.0
    for i, duration in enumerate(durations):
        windows.append(WindowSpec(first_index + i, offset, duration))
        offset += duration + WINDOW_GAP_S
    return windows


def point_lead(ctx: MeasureContext, point: PlannedPoint, target: Target) -> float:
    """Seconds from now to a point's common start: Ansible must reach every host first,
    a slow (emulated) guest included. Until each host was reached once this run, the
    planned lead; then what the reach seen there needs (:meth:`HostHealth.common_lead`)."""
    planned = ctx.hosts.lead(target.host, START_LEAD_S) + CLIENT_STAGGER_S * len(point.clients)
    return ctx.hosts.common_lead([target.host, *(c.name for c in point.clients)], planned)


class WindowRunner:
    """Runs the windows of one batch on every host at a common start."""

    def __init__(self, ctx: MeasureContext) -> None:
        self.ctx = ctx

    def run(
        self, specs: Mapping[str, LoadSpec], *, lead_s: float, mark_lost: bool = True
    ) -> list[HostOutput]:
        """Run ``specs`` (host -> spec) starting ``lead_s`` from now; outputs in host order.

        A host that returned nothing is marked broken in the context's host health (unless
        ``mark_lost`` is false: a check whose failure says nothing about the host).
        """
        start_at = time.time() + lead_s
        full = {
            host: replace(spec, start_at=start_at, run=self.ctx.run_token).to_json()
            for host, spec in specs.items()
        }
        hosts = sorted(full)
        span = max((w.offset + w.duration for s in specs.values() for w in s.windows), default=0.0)
        called = time.time()
        res = self.ctx.playbooks.run(
            "load.yml",
            hosts,
            extravars={"sizing_hosts": ",".join(hosts), "sizing_specs": full},
            forks=max(5, len(hosts)),
            timeout=int(lead_s + span + SLACK_S + PER_HOST_S * len(hosts)),
        )
        out: list[HostOutput] = []
        for host in hosts:
            try:
                doc = res.json(host, RUN_TASK)
                got = None if doc is None else RunnerOutput.from_json(doc)
            except ProtocolError as exc:
                out.append(
                    HostOutput(host, None, f"unreadable window output: {exc}", unreadable=True)
                )
                continue
            except ValueError:
                out.append(HostOutput(host, None, "unreadable window output", unreadable=True))
                continue
            if got is None:
                why = res.problems().get(host, f"no result ({res.status})")
                if mark_lost:
                    self.ctx.hosts.mark_broken(host, why)
                out.append(HostOutput(host, None, why))
                continue
            if got.began:
                self.ctx.hosts.observe_reach(host, got.began - called)
            out.append(HostOutput(host, got.windows))
        return out
