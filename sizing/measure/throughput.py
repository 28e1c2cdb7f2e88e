"""Closed-loop throughput (the profile's generator): warm up, then repeat until the stop
rule is met.

Each batch of windows runs on every host of the point at a common start
(:class:`~sizing.measure.windows.WindowRunner`); the first batch holds the warm-up and the
first repetitions, each later batch one more repetition, until the 95% interval is tight
enough (:class:`~sizing.measure.validity.StopRule`). :func:`evaluate_windows` then turns
the outputs into the point's result.
"""

from __future__ import annotations

from dataclasses import replace

from sizing.loadproto import LoadSpec
from sizing.measure.evaluate import Measurement, Outputs, evaluate_windows, window_rates
from sizing.measure.measure_context import MeasureContext
from sizing.measure.validity import StopRule
from sizing.measure.windows import (
    WindowRunner,
    WindowSpec,
    point_lead,
    schedule_windows,
)
from sizing.plan.loadspec import client_command, url_for
from sizing.plan.points import PlannedPoint
from sizing.plan.settings import Schedule
from sizing.provision.platforms.base import Target

__all__ = ["NGINX_DIED", "UPSTREAM_DIED", "Throughput", "stop_rule"]

DEFAULT_PIDFILE = "/run/sizing-nginx.pid"
# what :meth:`Throughput.run_batch` returns when a probe saw an nginx gone
NGINX_DIED = "nginx died"
UPSTREAM_DIED = "the upstream nginx died"
DEFAULT_LOG_DIR = "/var/log/sizing-nginx"


def stop_rule(schedule: Schedule) -> StopRule:
    """The schedule's repetitions as the validity module's stop rule."""
    return StopRule(
        min_reps=schedule.min_reps, max_reps=schedule.max_reps, fixed=schedule.fixed_reps
    )


def host_specs(
    point: PlannedPoint, target: Target, windows: list[WindowSpec], connections: int
) -> dict[str, LoadSpec]:
    """Every host's spec of one batch: the generator on the clients, the samplers on the server."""
    prof = point.profile
    sz = point.server.sizing
    url = url_for(point, target.address)
    specs: dict[str, LoadSpec] = {}
    for c in point.clients:
        specs[c.name] = LoadSpec(
            windows=[
                replace(w, commands=[client_command(point, c, url, connections, w.duration)])
                for w in windows
            ],
            sample_cpu=True,
        )
    srv = specs.get(target.host) or LoadSpec(windows=list(windows), sample_cpu=True)
    specs[target.host] = replace(
        srv,
        pidfile=sz.pid_file or DEFAULT_PIDFILE,
        sample_net=True,  # /proc/net/dev: the network-bound verdict
        ports=[sz.https_port if prof.scheme == "https" else sz.http_port],
        tls_log=f"{sz.log_dir or DEFAULT_LOG_DIR}/tls.log" if prof.scheme == "https" else None,
        mix_log=f"{sz.log_dir or DEFAULT_LOG_DIR}/mix.log" if prof.workload else None,
    )
    add_upstream_specs(point, specs, windows)
    return specs


def add_upstream_specs(
    point: PlannedPoint, specs: dict[str, LoadSpec], windows: list[WindowSpec]
) -> None:
    """The upstream hosts sample their CPUs and their nginx each window, like the clients."""
    for up in point.upstreams:
        spec = specs.get(up.host) or LoadSpec(windows=list(windows))
        specs[up.host] = replace(spec, sample_cpu=True, upstream_pidfile=up.pid_file)


class Throughput:
    """The closed-loop method of the ``rps`` and ``tps`` profiles (and the gateways')."""

    def measure(self, ctx: MeasureContext, point: PlannedPoint, target: Target) -> Measurement:
        """Warm up, then repeat until the stop rule is met; evaluate every guard."""
        assert point.allocation is not None
        schedule = Schedule.of(ctx.settings, point.profile)
        rule = stop_rule(schedule)
        durations: list[float] = [schedule.duration_s] * schedule.first_reps
        if schedule.warmup_s > 0:
            batch = schedule_windows([schedule.warmup_s, *durations])
        else:
            batch = schedule_windows(durations, first_index=1)
        outputs: Outputs = {}
        all_windows: list[WindowSpec] = []
        while True:
            failure = self.run_batch(ctx, point, target, batch, schedule.connections, outputs)
            all_windows.extend(batch)
            if failure is not None:
                break
            values = window_rates(point, outputs)
            if rule.done(values):
                break
            n = len(values)
            ctx.progress.step(f"measuring {point.key.label()}: repetition {n + 1}")
            batch = schedule_windows([schedule.duration_s], first_index=n + 1)
        return self.evaluate(ctx, point, target, outputs, all_windows, schedule)

    @staticmethod
    def evaluate(
        ctx: MeasureContext,
        point: PlannedPoint,
        target: Target,
        outputs: Outputs,
        windows: list[WindowSpec],
        schedule: Schedule,
    ) -> Measurement:
        """The point's result from its windows' outputs (:func:`evaluate_windows`)."""
        facts = ctx.facts_of(point, target)
        return evaluate_windows(
            point,
            target,
            outputs,
            windows,
            connections=schedule.connections,
            duration=schedule.duration_s,
            rule=stop_rule(schedule),
            facts=facts,
            client_tool_version=None,  # the generator's own, read from its windows
            broken=ctx.hosts.broken,
        )

    @staticmethod
    def run_batch(
        ctx: MeasureContext,
        point: PlannedPoint,
        target: Target,
        windows: list[WindowSpec],
        connections: int,
        outputs: Outputs,
    ) -> str | None:
        """Run one batch; merge its outputs into ``outputs``. Returns a failure, or None:
        a host lost, the server's nginx dead (:data:`NGINX_DIED`) or an upstream's
        (:data:`UPSTREAM_DIED`). A death ends the point after the batch it was seen in: a
        repetition measured against a dead nginx measures its refusals."""
        specs = host_specs(point, target, windows, connections)
        upstreams = {up.host for up in point.upstreams}
        lost: str | None = None
        died = upstream_died = False
        # Every host's output is merged before anything is decided, whatever the host
        # order: a server that sorts before its clients must not leave them unread, and
        # its own probe (server_alive) outranks what the clients saw.
        for out in WindowRunner(ctx).run(specs, lead_s=point_lead(ctx, point, target)):
            if out.windows is None:
                # multi-host: keep the other hosts' outputs, so the point names the host
                # that was lost (not a host whose output was merely left unread)
                lost = lost or f"{out.host}: {out.problem}"
                continue
            outputs.setdefault(out.host, []).extend(out.windows)
            if out.host == target.host and any(w.server_alive is False for w in out.windows):
                died = True
            # the upstream's own probe: its workers may have gone while the proxy served
            # on, answering every request with a refused connection (issue 62)
            if out.host in upstreams and any(w.upstream_alive is False for w in out.windows):
                upstream_died = True
        if died:
            return NGINX_DIED
        return UPSTREAM_DIED if upstream_died else lost
