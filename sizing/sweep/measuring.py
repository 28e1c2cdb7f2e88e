"""One point measured: provisioned (the backend, nginx, its upstream), then measured by
its profile's method; or two legs of a pair measured in alternation."""

from __future__ import annotations

from collections.abc import Sequence
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
from sizing.sweep.prepare import Conductor


class PointMeasurer(Conductor):
    """Provisions and measures one point (or one pair) of the prepared plan."""

    def _pair(self, pair: Pair) -> list[tuple[PlannedPoint, PointResult, list[Any]]]:
        """Both legs of ``pair`` provisioned, then measured in alternation; a leg that
        cannot be provisioned fails, and the other is measured alone (unpaired)."""
        legs = pair.legs
        if any(h.name in self.health.broken for p in legs for h in (p.server, *p.clients)):
            return [(p, *self._point(p)) for p in legs]
        keep = tuple(p.config for p in legs)
        failed: dict[PointKey, str] = {}
        hosts = {h.name for p in legs for h in p.clients}
        for leg in legs:
            self.progress.step(f"provisioning nginx: {leg.key.label()} (paired)")
            try:
                hosts.add(self._provision(leg, keep=keep).host)
            except SizingError as exc:
                self.health.mark_broken(leg.server.name, str(exc))
                self.progress.note(str(exc))
                failed[leg.key] = str(exc)
        if failed:
            return [
                (p, PointResult(p.key, Status.FAILED, failed[p.key]), [])
                if p.key in failed
                else (p, *self._point(p))
                for p in legs
            ]
        self.hosts_taken.load.update(hosts)
        measured = measure_pair(self.ctx, pair, lambda p: self._provision(p, keep=keep))
        return [(leg, res, samples) for leg, (res, samples) in zip(legs, measured, strict=True)]

    def _point(self, point: PlannedPoint) -> Measurement:
        if point.skipped:
            return PointResult(point.key, Status.SKIPPED, point.skip_reason), []
        for host in [point.server, *point.clients]:
            if host.name in self.health.broken:
                return PointResult(
                    point.key, Status.FAILED, f"{host.name}: {self.health.broken[host.name]}"
                ), []
        self.progress.step(f"provisioning nginx: {point.key.label()}")
        try:
            target = self._provision(point)
        except SizingError as exc:
            self.health.mark_broken(point.server.name, str(exc))
            self.progress.note(str(exc))
            return PointResult(point.key, Status.FAILED, str(exc)), []
        self.progress.step(f"measuring {point.key.label()}")
        self.hosts_taken.load.update([target.host, *(c.name for c in point.clients)])
        return method_for(point.profile).measure(self.ctx, point, target)

    def _provision(self, point: PlannedPoint, keep: Sequence[tuple[str, int, str]] = ()) -> Target:
        """Prepare the platform for the point's config, then NGINX on the target. The
        configs in ``keep`` stay prepared beside it (the other leg of a pair)."""
        assert point.allocation is not None
        server = point.server
        target = self.targets.get(point.config)
        if target is None:
            self.prepared[server.name] = server
            target = self._backend(server).prepare(
                server, point.key.cores, point.ht, point.allocation.server_cpus
            )
            # one prepared config at a time, or the two legs of a pair
            self.targets = {
                **{c: t for c, t in self.targets.items() if c in keep},
                point.config: target,
            }
            self.nginx.forget(target.host)
            if server.name in self.placement:  # a freshly booted guest
                facts, lead = ready_guest(self.playbooks, self.inventory, target.host)
                self.health.set_lead(target.host, lead)
                self.facts[target.host] = facts
        tls_from = next(
            (p for p in self.opts.profiles if p.scheme == "https" and p.role == "web"), None
        )
        extra = nginx_vars(point, target.workers, tls_from)
        if point.profile.needs_upstream:  # load-balance/proxy/api-jwt: the upstreams first
            self.hosts_taken.upstreams.update(up.host for up in point.upstreams)
            self.upstream.apply(point)
            extra.update(gateway_vars(self.inventory, point, target))
        self.hosts_taken.servers.add(target.host)  # stopped when the run ends
        self.nginx.apply(target, extra)
        return target
