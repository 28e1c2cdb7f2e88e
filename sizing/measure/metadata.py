"""The record stamped on every point: what produced the figure (PerfKitBenchmarker's one
metadata provider), as :mod:`sizing.records` types."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from sizing import __version__
from sizing.load.tools import open_loop_tool, tool
from sizing.loadproto import WindowOutput
from sizing.measure.validity import StopRule
from sizing.plan.loadspec import url_for
from sizing.plan.points import PlannedPoint
from sizing.provision.platforms.base import Target
from sizing.records import (
    PointEnvironment,
    PointMeta,
    PointWorkload,
    StopRuleRecord,
    UpstreamRecord,
)
from sizing.records.host import HostRecord
from sizing.topology import cpulist

__all__ = [
    "ECDSA_SUITE",
    "latency_metadata",
    "point_environment",
    "ran_version",
    "throughput_metadata",
]

ECDSA_SUITE = "ECDHE-ECDSA-AES256-GCM-SHA384"  # the article's suite (nginx_vars sets it)


def point_environment(point: PlannedPoint, facts: HostRecord | None) -> PointEnvironment:
    """The point's identity and its server's software and hardware (from its facts); the
    callers add where everything ran with ``dataclasses.replace``, field by field."""
    key = point.key
    host = facts or HostRecord()
    return PointEnvironment(
        host=key.host,
        platform=key.platform,
        cores=key.cores,
        ht=key.ht,
        profile=key.profile,
        nginx_version=host.nginx_version,
        openssl_version=host.nginx_build_openssl,
        kernel=host.kernel,
        cpu_model=host.cpu_model,
        hypervisor=host.hypervisor,
    )


def upstream_placements(point: PlannedPoint) -> tuple[UpstreamRecord, ...]:
    """Where the point's upstream pool ran (the plan's placements)."""
    return tuple(
        UpstreamRecord(u.host, cpulist(u.cpus) or "all", u.shares_with or None)
        for u in point.upstreams
    )


def irq_steering(point: PlannedPoint, target: Target) -> str:
    """Which way the NIC's interrupts ran: steered to the measured cores or not, and why."""
    if target.address in ("127.0.0.1", "localhost", "::1"):
        return "not steered: loopback (no NIC interrupts; softirqs run on the sending CPU)"
    if not point.server.sizing.steer_irqs:
        return "not steered: sizing_steer_irqs is off (the kernel's own IRQ placement)"
    assert point.allocation is not None
    return f"steered: NIC IRQs and RPS to CPUs {cpulist(point.allocation.server_cpus)}"


def throughput_metadata(
    point: PlannedPoint,
    target: Target,
    *,
    connections: int,
    duration: float,
    rule: StopRule,
    facts: HostRecord,
    tool_version: str | None,
) -> PointMeta:
    """A closed-loop point's record, less its evidence (the evaluation adds it): its
    ``tool`` is the profile's generator, the one that ran (``tool_version``: its own,
    :func:`ran_version`)."""
    prof = point.profile
    assert point.allocation is not None
    env = replace(
        point_environment(point, facts),
        url=url_for(point, target.address),
        target=target.host,
        platform_settings=target.settings,
        server_cpus=cpulist(point.allocation.server_cpus),
        worker_cpus=cpulist(target.workers),
        client_cpus={c: cpulist(v) for c, v in point.client_cpus.items() if v},
        clients=tuple(c.name for c in point.clients),
        tool=tool(prof.generator).name,
        tool_version=tool_version,
        sizing_version=__version__,
        upstreams=upstream_placements(point),
        irq_steering=irq_steering(point, target),
    )
    workload = PointWorkload(
        file_size=prof.file_size,
        connections=connections,
        duration_s=duration,
        tls_key=prof.tls_key,
        keepalive=prof.keepalive,
        role=prof.role,
        customer=prof.name if prof.workload else None,
    )
    rule_record = StopRuleRecord(rule.fixed, rule.min_reps, rule.max_reps, rule.target)
    return PointMeta(env=env, workload=workload, stop_rule=rule_record)


def ran_version(point: PlannedPoint, outputs: Mapping[str, Sequence[WindowOutput]]) -> str | None:
    """The version the point's generator reported on its first client, from the first
    window that ran it (:meth:`sizing.load.base.LoadTool.read_version`); else its pinned
    one, or None."""
    gen = tool(point.profile.generator)
    first = point.clients[0].name if point.clients else ""
    for win in sorted(outputs.get(first, ()), key=lambda w: w.index):
        if win.commands:
            got = gen.read_version(win.commands[0])
            if got:
                return got
    return gen.version


def latency_metadata(
    point: PlannedPoint, target: Target, url: str, facts: HostRecord | None
) -> PointMeta:
    """An open-loop (fixed-rate) point's record, less its curve (the caller adds it)."""
    prof = point.profile
    tool = open_loop_tool(prof.generator)
    env = replace(
        point_environment(point, facts),
        url=url,
        target=target.host,
        # the generator that ran: a profile naming a closed-loop one is offered its rates by
        # the open-loop tool (stored before as the profile's, with this one's version)
        tool=tool.name,
        generator=tool.name,
        tool_version=tool.version,
        tool_build=tool.build,
        sizing_version=__version__,
        server_cpus=cpulist(point.allocation.server_cpus) if point.allocation else None,
        worker_cpus=cpulist(target.workers),
        clients=tuple(c.name for c in point.clients),
        platform_settings=target.settings,
    )
    workload = PointWorkload(
        file_size=prof.file_size,
        scheme=prof.scheme,
        tls_key=prof.tls_key,
        tls_ciphers=ECDSA_SUITE if prof.tls_key == "ecdsa-p256" else None,
        role=prof.role,
        mode=prof.mode,
        cpu_curve=prof.is_cpu_curve,  # the gateway's CPU curve (api-jwt-cpu, proxy-cpu)
    )
    return PointMeta(env=env, workload=workload)
