"""One point measured: provisioned (the backend, nginx, its upstream), then measured by
its profile's method; or two legs of a pair measured in alternation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sizing.errors import SizingError
from sizing.measure.method import Measurement, method_for
from sizing.measure.paired import measure_pair
from sizing.model import PointKey, PointResult, Status
from sizing.plan.pairs import Pair
from sizing.plan.points import PlannedPoint
from sizing.provision.nginx import nginx_vars
from sizing.provision.platforms import Target
from sizing.provision.tools import ready_guest
from sizing.provision.upstream import gateway_vars
from sizing.sweep.run_context import Config, RunContext, Sweep

Measured = list[tuple[PlannedPoint, PointResult, list[Any]]]


def measure_legs(ctx: RunContext, sweep: Sweep, pair: Pair) -> Measured:
    """Both legs of ``pair`` provisioned, then measured in alternation; a leg that
    cannot be provisioned fails, and the other is measured alone (unpaired)."""
    legs = pair.legs
    health = ctx.ledger.health
    if any(h.name in health.broken for p in legs for h in (p.server, *p.clients)):
        return [(p, *measure_point(ctx, sweep, p)) for p in legs]
    keep = tuple(p.config for p in legs)
    failed: dict[PointKey, str] = {}
    hosts = {h.name for p in legs for h in p.clients}
    for leg in legs:
        ctx.progress.step(f"provisioning nginx: {leg.key.label()} (paired)")
        try:
            hosts.add(provision(ctx, sweep, leg, keep=keep).host)
        except SizingError as exc:
            health.mark_broken(leg.server.name, str(exc))
            ctx.progress.note(str(exc))
            failed[leg.key] = str(exc)
    if failed:
        return [
            (p, PointResult(p.key, Status.FAILED, failed[p.key]), [])
            if p.key in failed
            else (p, *measure_point(ctx, sweep, p))
            for p in legs
        ]
    ctx.ledger.hosts_taken.load.update(hosts)
    measured = measure_pair(
        ctx.measuring(sweep), pair, lambda p: provision(ctx, sweep, p, keep=keep)
    )
    return [(leg, res, samples) for leg, (res, samples) in zip(legs, measured, strict=True)]


def measure_point(ctx: RunContext, sweep: Sweep, point: PlannedPoint) -> Measurement:
    """One point provisioned and measured; skipped or failed with its reason otherwise."""
    if point.skipped:
        return PointResult(point.key, Status.SKIPPED, point.skip_reason), []
    health = ctx.ledger.health
    for host in [point.server, *point.clients]:
        if host.name in health.broken:
            return PointResult(
                point.key, Status.FAILED, f"{host.name}: {health.broken[host.name]}"
            ), []
    ctx.progress.step(f"provisioning nginx: {point.key.label()}")
    try:
        target = provision(ctx, sweep, point)
    except SizingError as exc:
        health.mark_broken(point.server.name, str(exc))
        ctx.progress.note(str(exc))
        return PointResult(point.key, Status.FAILED, str(exc)), []
    ctx.progress.step(f"measuring {point.key.label()}")
    ctx.ledger.hosts_taken.load.update([target.host, *(c.name for c in point.clients)])
    return method_for(point.profile).measure(ctx.measuring(sweep), point, target)


def provision(
    ctx: RunContext, sweep: Sweep, point: PlannedPoint, keep: Sequence[Config] = ()
) -> Target:
    """Prepare the platform for the point's config, then NGINX on the target. The
    configs in ``keep`` stay prepared beside it (the other leg of a pair). A freshly
    booted guest's facts, read once it answers, come with its target."""
    assert point.allocation is not None
    ledger = ctx.ledger
    server = point.server
    target = ledger.targets.get(point.config)
    if target is None:
        ledger.provisioned[server.name] = server
        target = ctx.backend(server).prepare(
            server, point.key.cores, point.ht, point.allocation.server_cpus
        )
        ctx.nginx.forget(target.host)
        if server.name in sweep.placement:  # a freshly booted guest
            facts, lead = ready_guest(ctx.playbooks, ctx.inventory, target.host)
            ledger.health.set_lead(target.host, lead)
            target = replace(target, facts=facts)
        # one prepared config at a time, or the two legs of a pair
        ledger.targets = {
            **{c: t for c, t in ledger.targets.items() if c in keep},
            point.config: target,
        }
    tls_from = next((p for p in ctx.opts.profiles if p.scheme == "https" and p.role == "web"), None)
    extra = nginx_vars(point, target.workers, tls_from)
    if point.profile.needs_upstream:  # load-balance/proxy/api-jwt: the upstreams first
        ledger.hosts_taken.upstreams.update(up.host for up in point.upstreams)
        ctx.upstream.apply(point)
        extra.update(gateway_vars(ctx.inventory, point, target))
    ledger.hosts_taken.servers.add(target.host)  # stopped when the run ends
    ctx.nginx.apply(target, extra)
    return target
