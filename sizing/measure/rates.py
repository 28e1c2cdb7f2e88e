"""Open-loop windows at constant rates on every host of a point (:class:`RateWindows`), and
one rate's figures: a window's (:func:`latency_point`) and the merge of its repetitions
(:func:`merged_point`), and the soak's jumps (:func:`soak_jumps`)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

from sizing.errors import ServerDied, SizingError, ToolError
from sizing.knee import LatencyPoint
from sizing.load.latency import LatencyReport, merge_latency
from sizing.load.result import LoadResult
from sizing.load.tools import open_loop_tool
from sizing.loadproto import Command, LoadSpec, WindowOutput, WindowSpec
from sizing.measure.cpu import client_cpus, window_cpu
from sizing.measure.measure_context import MeasureContext
from sizing.measure.throughput import DEFAULT_PIDFILE
from sizing.measure.validity import STEAL_LIMIT
from sizing.measure.windows import WindowRunner, point_lead, schedule_windows
from sizing.plan.loadspec import client_request
from sizing.plan.points import PlannedPoint
from sizing.provision.platforms.base import Target
from sizing.records import CpuWindow, HistogramRecord, SampleMeta, SoakRep

JUMP_FACTOR = 2.0  # a repetition whose p95 is 2x the median of the rate's others: a jump


@dataclass
class RateWindow:
    """One window at one rate, its clients' outputs parsed."""

    window: WindowSpec
    results: list[LoadResult]
    problems: list[str]
    server_cpu: CpuWindow | None
    client_busy: dict[str, float]


class RateWindows:
    """Runs windows of constant-rate load on every host of a point at a common start."""

    def __init__(self, ctx: MeasureContext, point: PlannedPoint, target: Target, url: str) -> None:
        self.ctx, self.point, self.target, self.url = ctx, point, target, url
        self.tool = open_loop_tool(point.profile.generator)
        self.next_index = 0

    def _command(self, c_name: str, rate: int, duration: float) -> Command:
        point = self.point
        c = next(c for c in point.clients if c.name == c_name)
        return self.tool.command(client_request(point, c, self.url, rate, duration))

    def run(self, plan: Sequence[tuple[int, float]]) -> list[RateWindow]:
        """Run one window per (rate, duration); returns, per window, the parsed results."""
        point, target = self.point, self.target
        windows = [
            replace(w, rate=rate)
            for w, (rate, _) in zip(
                schedule_windows([d for _, d in plan], first_index=self.next_index),
                plan,
                strict=True,
            )
        ]
        self.next_index += len(windows)
        specs: dict[str, LoadSpec] = {}
        for c in point.clients:
            specs[c.name] = LoadSpec(
                windows=[
                    replace(
                        w, commands=[self._command(c.name, int(w.rate or 0), w.duration)], rate=None
                    )
                    for w in windows
                ],
                sample_cpu=True,
            )
        sz = point.server.sizing
        srv = specs.get(target.host) or LoadSpec(
            windows=[replace(w, rate=None) for w in windows], sample_cpu=True
        )
        specs[target.host] = replace(srv, pidfile=sz.pid_file or DEFAULT_PIDFILE)
        outputs: dict[str, dict[int, WindowOutput]] = {}
        lost: str | None = None
        for out in WindowRunner(self.ctx).run(specs, lead_s=point_lead(self.ctx, point, target)):
            if out.windows is None:
                lost = lost or f"{out.host}: {out.problem}"
                continue
            outputs[out.host] = {w.index: w for w in out.windows}
        # The server's own probe first, whatever the host order: a dead nginx is the
        # cause, a client's missing output only its consequence.
        rates = {w.index: w.rate for w in windows}
        for idx, sw in outputs.get(target.host, {}).items():
            if sw.server_alive is False:
                raise ServerDied(f"nginx died on {target.host} at {rates.get(idx)} requests/s")
        if lost is not None:
            raise ToolError(lost)
        return [self._window(w, outputs) for w in windows]

    def _window(self, w: WindowSpec, outputs: dict[str, dict[int, WindowOutput]]) -> RateWindow:
        point, target = self.point, self.target
        parsed: list[LoadResult] = []
        problems: list[str] = []
        client_busy: dict[str, float] = {}
        for c in point.clients:
            cw = outputs.get(c.name, {}).get(w.index)
            if cw is None or not cw.commands:
                problems.append(f"{c.name}: window {w.index} did not run")
                continue
            cmd = cw.commands[0]
            try:
                parsed.append(self.tool.parse(cmd))
            except SizingError as exc:
                err = (cmd.stderr.strip().splitlines() or [str(exc)])[-1]
                problems.append(
                    f"{c.name}: {self.tool.name} failed at {w.rate}/s (rc {cmd.rc}): {err}"
                )
                continue
            if cw.sampled_cpu:
                busy = window_cpu(cw, client_cpus(cw, point.client_cpus.get(c.name, ())))
                if busy is not None and busy.busy is not None:
                    client_busy[c.name] = busy.busy
        server = window_cpu(outputs.get(target.host, {}).get(w.index), target.workers)
        return RateWindow(w, parsed, problems, server, client_busy)


def latency_point(
    rate: int, win: RateWindow
) -> tuple[LatencyPoint, SampleMeta, list[LatencyReport]]:
    """One window's results as a :class:`LatencyPoint`, a sample's record and the clients'
    latency reports (the rate's merge over repetitions: not stored)."""
    results = win.results
    if not results:
        raise ToolError("; ".join(win.problems) or f"no result at {rate}/s")
    reports = [r.latency_report() for r in results]
    merged = merge_latency(reports, percentiles=(50.0, 90.0, 95.0, 99.0))
    requests = sum(r.requests for r in results)
    failed = sum(r.failed for r in results)
    sent = sum(r.rate for r in results)
    if len(results) == 1 or merged is None:
        r0 = results[0]
        pct = r0.latency_percentiles_ms
        mean, mx = r0.latency_mean_ms, r0.latency_max_ms
    else:
        pct, mean, mx = merged.percentiles_ms, merged.mean_ms, merged.max_ms
    server = win.server_cpu
    lp = LatencyPoint(
        rate=float(rate),
        mean_ms=mean,
        p50_ms=pct[50.0],
        p90_ms=pct[90.0],
        p95_ms=pct[95.0],
        p99_ms=pct[99.0],
        max_ms=mx,
        achieved=sum(r.throughput for r in results),
        error_ratio=failed / max(requests, 1),
        server_busy=server.busy if server else None,
        server_steal=server.steal if server else None,
        client_busy=max(win.client_busy.values(), default=None),
    )
    meta = SampleMeta(
        **asdict(lp),
        sent_rate=sent,
        lag=max(0.0, (rate - sent) / rate),
        requests=requests,
        errors=failed,
        status_codes=_sum_codes(results),
        error_messages=tuple(sorted({e for r in results for e in r.error_messages})[:5]),
        latency_histogram=(
            HistogramRecord.parse(merged.histogram.to_json())
            if merged is not None and merged.histogram
            else None
        ),
        client_cpu_busy=win.client_busy,
        server_cpu=server,
        clients=len(results),
        problems=tuple(win.problems),
    )
    return lp, meta, reports


def _sum_codes(results: Sequence[LoadResult]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in results:
        for code, n in r.status_codes.items():
            out[code] = out.get(code, 0) + n
    return out


def mean_point(reps: Sequence[LatencyPoint]) -> LatencyPoint:
    """A rate's figures over its soak repetitions: the mean of each (the article's way)."""
    if len(reps) == 1:
        return reps[0]

    def avg(name: str) -> float | None:
        vals = [getattr(r, name) for r in reps if getattr(r, name) is not None]
        return statistics.fmean(vals) if vals else None

    return replace(
        reps[0],
        mean_ms=statistics.fmean(r.mean_ms for r in reps),
        p50_ms=statistics.fmean(r.p50_ms for r in reps),
        p90_ms=avg("p90_ms"),
        p95_ms=statistics.fmean(r.p95_ms for r in reps),
        p99_ms=statistics.fmean(r.p99_ms for r in reps),
        max_ms=max(r.max_ms for r in reps),
        achieved=avg("achieved"),
        error_ratio=statistics.fmean(r.error_ratio for r in reps),
        server_busy=avg("server_busy"),
        server_steal=avg("server_steal"),
        client_busy=avg("client_busy"),
    )


def merged_point(reps: Sequence[LatencyPoint], reports: Sequence[LatencyReport]) -> LatencyPoint:
    """A rate's figures over its repetitions: latencies from the merged distribution of
    every request of every repetition and client (never averaged percentiles), rates,
    errors and CPU the mean over repetitions."""
    base = mean_point(reps)
    if len(reps) == 1:
        return base
    m = merge_latency(reports, percentiles=(50.0, 90.0, 95.0, 99.0))
    if m is None:
        return base
    return replace(
        base,
        mean_ms=m.mean_ms,
        p50_ms=m.percentiles_ms[50.0],
        p90_ms=m.percentiles_ms[90.0],
        p95_ms=m.percentiles_ms[95.0],
        p99_ms=m.percentiles_ms[99.0],
        max_ms=m.max_ms,
    )


def soak_jumps(series: Sequence[SoakRep], factor: float = JUMP_FACTOR) -> list[int]:
    """Repetitions (1-based) whose p95 or mean is ``factor`` x the median of the rate's
    repetitions, or whose steal exceeds the steal limit: the guide shows the table then."""
    if len(series) < 2:
        return []
    p95 = statistics.median(s.p95_ms or 0.0 for s in series)
    mean = statistics.median(s.mean_ms or 0.0 for s in series)
    out = []
    for s in series:
        if (
            (s.p95_ms or 0.0) > factor * p95
            or (s.mean_ms or 0.0) > factor * mean
            or (s.server_steal or 0.0) > STEAL_LIMIT
        ):
            out.append(s.repetition)
    return out
