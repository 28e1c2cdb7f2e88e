"""A closed-loop point's window outputs -> its PointResult and samples (PURE).

The window runner's outputs of every host (:class:`sizing.loadproto.WindowOutput`, per
host) go in; the point's figure (the median of the timed repetitions' summed client
rates), its interval, every validity verdict with the evidence it judged, and one sample
per client and window come out. No I/O: the golden files in ``tests/data/windows/`` drive
it. :class:`PointWindows` accumulates the windows; :func:`evaluate_windows` judges them.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace

from sizing.errors import SizingError
from sizing.facts import HostFacts
from sizing.intervals import interval_words, repetition_flags
from sizing.inventory import Host
from sizing.load.tools import closed_loop_parse
from sizing.loadproto import WindowOutput, WindowSpec
from sizing.measure.cpu import (
    client_cpus,
    kernel_outside,
    nginx_cpu_pct,
    quota_limits,
    server_work,
    upstream_window,
    window_cpu,
)
from sizing.measure.metadata import ran_version, throughput_metadata
from sizing.measure.multihost import Extras, multihost_extras
from sizing.measure.validity import StopRule, judge, median_ci
from sizing.model import SERVER_DIED, PointResult, Sample, Status
from sizing.plan.points import PlannedPoint
from sizing.provision.platforms.base import Target
from sizing.records import (
    GuardInputs,
    Guards,
    MergedLatencyRecord,
    PointMeta,
    RepetitionEvidence,
    SampleMeta,
    UpstreamWindow,
)
from sizing.records.host import HostRecord

__all__ = [
    "Measurement",
    "Outputs",
    "PointWindows",
    "WindowTotals",
    "client_window",
    "evaluate_windows",
    "server_death",
    "window_rates",
]

Measurement = tuple[PointResult, list[tuple[int, Sample]]]
Outputs = MutableMapping[str, list[WindowOutput]]  # host -> its window outputs, in order


def _window_of(
    outputs: Mapping[str, Sequence[WindowOutput]], host: str, idx: int
) -> WindowOutput | None:
    """Host ``host``'s output of window ``idx``, if it gave one."""
    return next((w for w in outputs.get(host, ()) if w.index == idx), None)


def window_rates(point: PlannedPoint, outputs: Mapping[str, Sequence[WindowOutput]]) -> list[float]:
    """The summed client rate of every timed window so far (for the stop rule)."""
    per: dict[int, float] = {}
    for c in point.clients:
        for w in outputs.get(c.name, ()):
            if w.index == 0 or not w.commands:
                continue
            try:
                rps = closed_loop_parse(point.profile.generator, w.commands[0]).rps
                per[w.index] = per.get(w.index, 0.0) + rps
            except SizingError:
                per.setdefault(w.index, 0.0)
    return [per[i] for i in sorted(per)]


def server_death(
    point: PlannedPoint, target: Target, outputs: Mapping[str, Sequence[WindowOutput]], idx: int
) -> str:
    """``nginx died on HOST`` when the server's probe saw its nginx gone at the end of
    window ``idx``, or ``the upstream nginx died on HOST`` for an upstream's (its workers
    may serve on, unmeasured); else "". The one check every method makes."""
    sw = _window_of(outputs, target.host, idx)
    if sw is not None and sw.server_alive is False:
        return f"nginx died on {target.host}"
    for up in point.upstreams:
        uw = _window_of(outputs, up.host, idx)
        if uw is not None and uw.upstream_alive is False:
            return f"the upstream nginx died on {up.host}"
    return ""


def _during(idx: int) -> str:
    return "the warm-up" if idx == 0 else f"repetition {idx}"


@dataclass
class WindowTotals:
    """The clients' sums over one window."""

    rps: float = 0.0
    requests: int = 0
    socket_errors: int = 0
    http_errors: int = 0
    ran: int = 0  # clients whose generator's output could be read
    starts: list[float] = field(default_factory=list)
    client_cpu: dict[str, float] = field(default_factory=dict)


def client_window(
    point: PlannedPoint,
    client: Host,
    cw: WindowOutput | None,
    totals: WindowTotals,
    samples: list[tuple[int, Sample]],
    problems: list[str],
) -> None:
    """Add one client's output of a window to ``totals``, its sample to ``samples``."""
    prof = point.profile
    if cw is None or not cw.commands:
        return
    idx = cw.index
    cmd = cw.commands[0]
    totals.starts.append(cw.start)
    try:
        parsed = closed_loop_parse(prof.generator, cmd)
    except SizingError as exc:
        err_lines = cmd.stderr.strip().splitlines()
        problems.append(
            f"{client.name}: {prof.generator} failed in window {idx} (rc {cmd.rc}): "
            f"{err_lines[-1] if err_lines else exc}"
        )
        return
    totals.ran += 1
    totals.rps += parsed.rps
    totals.requests += parsed.requests
    totals.socket_errors += parsed.total_errors
    totals.http_errors += parsed.non_2xx_3xx
    if cw.sampled_cpu:
        busy = window_cpu(cw, client_cpus(cw, point.client_cpus.get(client.name, ())))
        if busy is not None and busy.busy is not None:
            totals.client_cpu[client.name] = busy.busy
    meta = SampleMeta(
        client=client.name,
        requests=parsed.requests,
        errors=parsed.total_errors,
        non_2xx_3xx=parsed.non_2xx_3xx,
        latency=MergedLatencyRecord(
            latency_mean_ms=parsed.latency_mean_ms,
            latency_p99_ms=parsed.latency_percentiles_ms.get(99.0),
        ),
        transfer_bps=parsed.transfer_bps,
        cpu_busy=totals.client_cpu.get(client.name),
    )
    samples.append((idx, Sample(f"{prof.metric}.client", parsed.rps, prof.unit, meta)))


def upstream_windows(
    point: PlannedPoint, outputs: Mapping[str, Sequence[WindowOutput]], idx: int
) -> dict[str, UpstreamWindow]:
    """Each upstream host's CPU over window ``idx`` (:func:`upstream_window`)."""
    out: dict[str, UpstreamWindow] = {}
    for up in point.upstreams:
        got = upstream_window(_window_of(outputs, up.host, idx), up.cpus, bool(up.shares_with))
        if got is not None:
            out[up.host] = got
    return out


@dataclass
class PointWindows:
    """A closed-loop point's windows as they are read: the samples, the timed values and
    one :class:`RepetitionEvidence` per timed window (the guards' input)."""

    point: PlannedPoint
    target: Target
    outputs: Mapping[str, Sequence[WindowOutput]]
    extras: Extras
    samples: list[tuple[int, Sample]] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    evidence: list[RepetitionEvidence] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    suites: dict[str, int] = field(default_factory=dict)

    def add(self, idx: int) -> str:
        """Read window ``idx`` of every host; returns why the point fails ("" when not)."""
        point, target = self.point, self.target
        totals = WindowTotals()
        for c in point.clients:
            client_window(
                point, c, _window_of(self.outputs, c.name, idx), totals, self.samples, self.problems
            )
        died = server_death(point, target, self.outputs, idx)
        if died:
            # the figure of a window whose nginx (or its upstream) died cannot be trusted;
            # the run stops here, and `--resume` measures the point again
            return f"{died} during {_during(idx)}"
        sw = _window_of(self.outputs, target.host, idx)
        meta = self._window_meta(idx, sw, totals)
        self.samples.append(
            (idx, Sample(point.profile.metric, totals.rps, point.profile.unit, meta))
        )
        if idx == 0 or totals.ran < len(point.clients):
            return ""
        self.values.append(totals.rps)
        if sw is not None and sw.tls is not None:
            for suite, n in sw.tls.suites.items():
                self.suites[suite] = self.suites.get(suite, 0) + n
        self.evidence.append(self._repetition(meta, totals))
        return ""

    def _window_meta(self, idx: int, sw: WindowOutput | None, totals: WindowTotals) -> SampleMeta:
        workers = self.target.workers
        server_cpu = window_cpu(sw, workers)
        # the clients' starts and the server's CPU sample: a host Ansible reached after the
        # common start began late, and the skew says by how much
        starts = totals.starts + ([sw.start] if sw and sw.start else [])
        extra = self.extras.windows.get(idx)
        # the server's and the load generators' hosts only: an upstream-only host's limit
        # is the upstream-bound guard's (its probe), never "the nginx under test's"
        hosts = {self.target.host, *(c.name for c in self.point.clients)}
        quota, quota_throttled = quota_limits(
            [w for h in hosts for w in self.outputs.get(h, ()) if w.index == idx]
        )
        return SampleMeta(
            repetition=idx,
            warmup=idx == 0,
            requests=totals.requests,
            errors=totals.socket_errors + totals.http_errors,
            socket_errors=totals.socket_errors,
            http_errors=totals.http_errors,
            start_skew_s=(max(starts) - min(starts)) if len(starts) > 1 else 0.0,
            # when the window began (epoch s): paired legs show their alternation by it
            started_at=min(starts) if starts else None,
            server_cpu=server_cpu,
            nginx_cpu_pct=nginx_cpu_pct(sw, workers),
            # Headroom is idle time on the server's pinned CPUs ("busy" counts every
            # non-idle tick); nginx's own CPU time is recorded beside it.
            server_busy=server_cpu.busy if server_cpu else None,
            client_cpu_busy=dict(totals.client_cpu),
            established=sw.established if sw else None,
            tls_full=sw.tls.full if sw and sw.tls else None,
            tls_reused=sw.tls.reused if sw and sw.tls else None,
            throttled=sw.throttled if sw else None,
            quota_cpus=quota,
            quota_throttled=quota_throttled,
            upstream_cpu=upstream_windows(self.point, self.outputs, idx) or None,
            kernel_outside=kernel_outside(sw, workers),
            server_net=extra.server_net if extra else None,  # multi-host: the NIC
            latency=extra.latency if extra else MergedLatencyRecord(),  # merged over clients
        )

    def _repetition(self, m: SampleMeta, totals: WindowTotals) -> RepetitionEvidence:
        ups = m.upstream_cpu or {}
        return RepetitionEvidence(
            value=totals.rps,
            requests=totals.requests,
            socket_errors=totals.socket_errors,
            http_errors=totals.http_errors,
            server_busy=m.server_busy,
            server_steal=m.server_cpu.steal if m.server_cpu else None,
            client_busy=dict(totals.client_cpu),
            established=m.established,
            tls_full=m.tls_full or 0,
            tls_reused=m.tls_reused or 0,
            throttled=m.throttled or 0,
            quota_throttled=m.quota_throttled or 0,
            quota_cpus=m.quota_cpus,
            upstream_busy={h: u.busy for h, u in ups.items() if u.busy is not None},
            upstream_capacity={h: u.capacity for h, u in ups.items() if u.capacity is not None},
            upstream_shares_client=any(u.shares_with for u in self.point.upstreams),
            server_work=server_work(m.server_cpu, m.nginx_cpu_pct),
        )

    def medians(self) -> tuple[float | None, float | None, dict[str, float] | None]:
        """The point-level medians of the timed windows: the kernel's softirq time outside
        the pinned CPUs, the server's CPU and each upstream's CPU."""
        timed = [
            s.metadata for i, s in self.samples if i > 0 and s.metric == self.point.profile.metric
        ]
        outside = [
            m.kernel_outside.softirq_pct
            for m in timed
            if m.kernel_outside and m.kernel_outside.softirq_pct is not None
        ]
        busy = [e.server_busy for e in self.evidence if e.server_busy is not None]
        ups: dict[str, list[float]] = {}
        for e in self.evidence:
            for host, b in e.upstream_busy.items():
                ups.setdefault(host, []).append(b)
        return (
            statistics.median(outside) if outside else None,
            statistics.median(busy) if busy else None,
            {h: statistics.median(v) for h, v in ups.items()} or None,
        )


def _dead_before_any_client(
    point: PlannedPoint, target: Target, outputs: Mapping[str, Sequence[WindowOutput]]
) -> str:
    """The server's own probe says why the clients gave nothing: its nginx died."""
    for win in outputs.get(target.host, ()):
        if win.server_alive is False and any(c.name not in outputs for c in point.clients):
            return f"nginx died on {target.host} during {_during(win.index)}"
    return ""


def evaluate_windows(
    point: PlannedPoint,
    target: Target,
    outputs: Mapping[str, Sequence[WindowOutput]],
    windows: Sequence[WindowSpec],
    *,
    connections: int,
    duration: float,
    rule: StopRule,
    facts: HostFacts | None,
    client_tool_version: str | None,
    broken: Mapping[str, str] | None = None,
) -> Measurement:
    """The point's result and samples from every host's window outputs (see the module)."""
    assert point.allocation is not None
    key = point.key
    dead = _dead_before_any_client(point, target, outputs)
    if dead:
        return PointResult(key, Status.FAILED, dead, flags=(SERVER_DIED,)), []
    for host in sorted({target.host, *(c.name for c in point.clients)}):
        if host not in outputs:
            why = (broken or {}).get(host, "no result")
            return PointResult(key, Status.FAILED, f"{host}: {why}"), []
    server_facts = facts.record if facts else HostRecord()
    base = throughput_metadata(
        point,
        target,
        connections=connections,
        duration=duration,
        rule=rule,
        facts=server_facts,
        tool_version=ran_version(point, outputs) or client_tool_version,
    )
    # multi-host: server network rates and merged client latency, per window and point
    extras = multihost_extras(
        [c.name for c in point.clients],
        target.host,
        outputs,
        windows,
        server_facts,
        point.server.sizing.nic_gbps,
        point.profile.generator,
    )
    acc = PointWindows(point, target, outputs, extras)
    for win in windows:
        died = acc.add(win.index)
        if died:
            return PointResult(
                key,
                Status.FAILED,
                died,
                repetitions=len(acc.values),
                flags=(SERVER_DIED,),
                metadata=base,
            ), acc.samples
    if not acc.values or len(acc.values) < len([w for w in windows if w.index > 0]):
        reason = "; ".join(acc.problems) or "no repetition finished"
        return PointResult(
            key, Status.FAILED, reason, repetitions=len(acc.values), metadata=base
        ), acc.samples
    return _judged(point, target, acc, base, rule, connections, bool(server_facts.hypervisor))


def _judged(
    point: PlannedPoint,
    target: Target,
    acc: PointWindows,
    base: PointMeta,
    rule: StopRule,
    connections: int,
    virtualized: bool,
) -> Measurement:
    """Every guard's verdict on the timed windows, and the point with its evidence."""
    prof = point.profile
    values, extras = acc.values, acc.extras
    inputs = GuardInputs(
        requested_connections=connections * len(point.clients),
        keepalive=prof.keepalive,
        handshake_profile=prof.scheme == "https" and not prof.keepalive,
        clients=len(point.clients),
        network_bound="network-bound" in extras.flags,
    )
    verdicts = judge(acc.evidence, **vars(inputs))
    flags = [v.flag for v in verdicts]
    problems = acc.problems + [v.reason for v in verdicts]
    invalid = any(v.invalid for v in verdicts)
    # erratic: one window measured something else (drift is decided across the run's points
    # when the store reads them back: sizing.store.drift_flag)
    odd, odd_why = repetition_flags(values)
    if odd:
        flags.extend(odd)
        problems.append(odd_why)
    ci = median_ci(values)
    if rule.fixed is None and not rule.converged(values) and ci is not None:
        if ci.half_width > rule.target:
            flags.append("noisy")
            problems.append(
                f"noisy: ±{100 * ci.half_width:.1f}% ({interval_words(len(values))}) after "
                f"{len(values)} repetitions (target ±{100 * rule.target:.0f}%)"
            )
    if target.emulated:
        flags.append("emulated")
    if virtualized and point.server.platform == "baremetal":
        flags.append("virtualized-host")
    # multi-host: network-bound flag and reason
    flags.extend(f for f in extras.flags if f not in flags)
    problems.extend(extras.reasons)
    if "network-bound" in extras.flags:
        invalid = True  # the NIC, not the CPU, set the figure: not a CPU sizing figure
    softirq, server, upstreams = acc.medians()
    evidence = replace(
        extras.point,
        tls_suites=acc.suites or None,
        softirq_outside_pct_median=softirq,
        server_busy_median=server,
        upstream_busy_median=upstreams,
        guards=Guards.of(inputs, tuple(acc.evidence), tuple(verdicts)),
    )
    median = statistics.median(values)
    return PointResult(
        point.key,
        Status.INVALID if invalid else Status.MEASURED,
        "; ".join(problems),
        value=median,
        unit=prof.unit,
        repetitions=len(values),
        spread=(max(values) - min(values)) / median if median else None,
        ci_low=ci.low if ci else None,
        ci_high=ci.high if ci else None,
        flags=tuple(flags),
        metadata=replace(base, evidence=evidence),
    ), acc.samples
