"""The latency profiles' measurement: constant offered rates, open loop.

The method of a profile with ``mode: fixed-rate`` (:func:`sizing.measure.method.method_for`).
The profile's ``generator`` offers the rates when it runs open loop, else the registry's
default open-loop tool (:func:`sizing.load.tools.open_loop_tool`). One point (host ×
platform × cores × HT × profile) is measured as:

1. **Sweep.** With ``--rates`` (or ``--slo``): a warm-up window at the lowest rate, then one
   window per offered rate, all in one Ansible run with a common start on every host.
   Without them, a **climb to the knee** (:func:`sizing.knee.climb_next`): from the
   profile's lowest rate, doubling, one Ansible run per rate, until p95 exceeds
   ``KNEE_FACTOR`` × the low-load p95 or errors appear, then bisecting the knee's
   interval; it stops at the clients' ceiling (their cores × the generator's planning
   rate per core) or when the generator falls behind (the knee then lies above: a lower
   bound). Every client offers ``rate / clients`` (sums for rates); the latency
   distributions of all clients and repetitions of a rate are merged (a tool with a latency
   histogram: added exactly; one without: request-weighted mixtures), never averaged
   (:func:`sizing.load.latency.merge_latency`). The server's pinned CPUs are sampled per
   window: the CPU-against-offered-rate curve.
2. **SLO search** (``--slo p95=10ms``): :func:`sizing.knee.search` probes new rates, one
   Ansible run each, until the highest rate meeting the SLO is known to ±2%. It probes no
   higher than the same clients' ceiling: met there, the point is flagged
   ``slo-not-converged`` and its figure is a lower bound.
3. **Soak** (``--soak DURATION``): every rate is repeated back to back for that long, each
   repetition kept as its own sample (the article's 20 consecutive runs, which revealed
   CPU-credit exhaustion); a rate's latencies are those of all its repetitions' requests
   merged, its rates and CPU the mean over its repetitions.

**The point's value** is the SLO capacity (requests/s) when an SLO is given, else the knee
rate (:func:`sizing.knee.knee`): the last swept rate before latency spikes. A sweep with
no knee stores the highest rate with the ``no-knee`` flag: the capacity lies above it.
The per-rate curve, the search's probes and the knee are in the point's record
(:class:`sizing.records.LatencyRecord`); each window is a ``latency`` sample (value: p95
in ms; mean, p50, p90, p95, p99, max, rate sent, server CPU and steal in its record).
:class:`RateCurve` accumulates the windows; :func:`measure` runs the sweep, the climb and
the search, and :func:`judge_curve` turns the curve into the point.

**Validity.** A rate whose requests were sent more than 2% below the offered rate (the
generator fell behind its schedule, the one way an open-loop tool can omit latency) is
flagged ``generator-lag`` and never counts as meeting an SLO; the point is invalid when it
sets the figure. Steal above 2% on the server's CPUs marks the point ``unstable``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from sizing.errors import ServerDied, SizingError
from sizing.knee import (
    KNEE_FACTOR,
    LatencyPoint,
    SearchResult,
    Slo,
    below_sweep,
    capacity_from_curve,
    climb_next,
    knee,
    knee_interval,
    knee_limit,
    search,
)
from sizing.load.latency import LatencyReport
from sizing.load.tools import LoadTool, open_loop_tool
from sizing.measure.curve_verdicts import curve_flags
from sizing.measure.evaluate import Measurement
from sizing.measure.measure_context import MeasureContext
from sizing.measure.metadata import latency_metadata
from sizing.measure.rates import RateWindows, latency_point, merged_point, soak_jumps
from sizing.measure.validity import CLIENT_BUSY_LIMIT
from sizing.model import SERVER_DIED, PointResult, Sample, Status
from sizing.plan.loadspec import client_ceiling, url_for
from sizing.plan.points import PlannedPoint
from sizing.plan.settings import Schedule
from sizing.provision.platforms.base import Target
from sizing.records import Climb, LatencyRecord, PointMeta, SloSearch, SoakRep

__all__ = ["FixedRate", "RateCurve", "judge_curve"]


@dataclass
class RateCurve:
    """A latency point's windows as they come: its samples, each rate's repetitions and
    latency reports, the soak series, the rates where the generator lagged."""

    runner: RateWindows
    tool: LoadTool
    duration: float
    reps_per_rate: int
    samples: list[tuple[int, Sample]] = field(default_factory=list)
    reps: dict[float, list[LatencyPoint]] = field(default_factory=dict)
    reports: dict[float, list[LatencyReport]] = field(default_factory=dict)
    series: dict[float, list[SoakRep]] = field(default_factory=dict)
    lagging: set[float] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)

    def record(self, plan: list[tuple[int, float]], phase: str, first_warm: bool) -> None:
        """Run ``plan`` (rate, duration per window); the first window is a warm-up when
        ``first_warm`` (its failure is a problem, not the point's end)."""
        for i, (win, (rate, _)) in enumerate(zip(self.runner.run(plan), plan, strict=True)):
            warm = first_warm and i == 0
            try:
                lp, meta, window_reports = latency_point(rate, win)
            except SizingError as exc:
                self.problems.append(str(exc))
                if not warm:
                    raise
                continue
            rep = len(self.series.get(lp.rate, [])) + 1
            self.samples.append(
                (
                    win.window.index,
                    Sample(
                        "latency",
                        lp.p95_ms,
                        "ms",
                        replace(
                            meta,
                            phase="warmup" if warm else phase,
                            warmup=warm,
                            repetition_at_rate=None if warm else rep,
                            duration_s=self.duration,
                        ),
                    ),
                )
            )
            if warm:
                continue
            # a pacer that falls behind only on the client side says so by its lag (the
            # capability); another's finished rate also falls when the server saturates, so
            # it lags only on a saturated client.
            if (meta.lag or 0.0) > self.tool.max_rate_lag and (
                self.tool.capabilities.lag_means_client_behind
                or any(b >= CLIENT_BUSY_LIMIT for b in win.client_busy.values())
            ):
                self.lagging.add(lp.rate)
            self.reps.setdefault(lp.rate, []).append(lp)
            self.reports.setdefault(lp.rate, []).extend(window_reports)
            self.series.setdefault(lp.rate, []).append(
                SoakRep(
                    rep,
                    lp.mean_ms,
                    lp.p50_ms,
                    lp.p95_ms,
                    lp.p99_ms,
                    lp.max_ms,
                    lp.server_steal,
                    lp.server_busy,
                    meta.lag,
                )
            )

    def curve(self) -> list[LatencyPoint]:
        """Each rate's figures over its repetitions, lowest rate first."""
        out = []
        for rate in sorted(self.reps):
            lp = merged_point(self.reps[rate], self.reports[rate])
            if rate in self.lagging:  # never "meets" an SLO: its latencies may be understated
                lp = replace(lp, error_ratio=max(lp.error_ratio, 1.0))
            out.append(lp)
        return out

    def at(self, rate: float) -> LatencyPoint:
        return next(p for p in self.curve() if p.rate == float(int(rate)))


class FixedRate:
    """The open-loop method of the latency profiles (see the module docstring)."""

    def measure(self, ctx: MeasureContext, point: PlannedPoint, target: Target) -> Measurement:
        return measure(ctx, point, target)


@dataclass(frozen=True)
class _Ceiling:
    """What the clients can offer at most: their cores x the generator's planning rate."""

    rate: float
    client_cores: int
    per_core: int


def measure(ctx: MeasureContext, point: PlannedPoint, target: Target) -> Measurement:
    """Measure one latency point (see the module docstring)."""
    key = point.key
    schedule = Schedule.of(ctx.settings, point.profile)
    try:
        rates = schedule.rates()
        slo = schedule.slo()
        ctx.tools.ensure_generator(point.profile.generator, point.clients)
    except SizingError as exc:
        return PointResult(key, Status.FAILED, str(exc)), []
    tool = open_loop_tool(point.profile.generator)
    # No list given: climb to the knee. A gateway's CPU curve keeps its profile's rates.
    climbing = (
        not ctx.settings.rates and slo is None and point.profile.metric != "gateway_cpu_curve"
    )
    ceiling = _Ceiling(*client_ceiling(point))
    url = url_for(point, target.address)
    reps = schedule.reps_per_rate
    acc = RateCurve(RateWindows(ctx, point, target, url), tool, schedule.rate_duration_s, reps)
    plan: list[tuple[int, float]] = []
    if schedule.rate_warmup_s > 0:
        plan.append((rates[0], schedule.rate_warmup_s))
    for rate in rates[:1] if climbing else rates:
        plan += [(rate, acc.duration)] * reps
    ctx.progress.step(
        f"measuring {key.label()}: "
        + (f"climbing to the knee from {rates[0]:,}/s" if climbing else f"{len(rates)} rates")
    )
    climb_reason = ""
    result: SearchResult | None = None
    try:
        acc.record(plan, "sweep", schedule.rate_warmup_s > 0)
        if climbing:
            climb_reason = _climb(ctx, key.label(), acc, reps, ceiling.rate)
        if slo is not None:

            def probe(rate: float) -> LatencyPoint:
                ctx.progress.step(f"measuring {key.label()}: SLO search at {rate:,.0f}/s")
                acc.record([(int(rate), acc.duration)] * reps, "search", False)
                return acc.at(rate)

            # Never above what the clients can offer by the planning figure: the rule the
            # pre-flight applies to --rates and the climb to its steps.
            result = search(
                probe,
                slo,
                curve=acc.curve(),
                start=float(rates[0]),
                floor=1.0,
                ceiling=min(float(max(rates)) * 64, ceiling.rate),
            )
    except SizingError as exc:
        died: tuple[str, ...] = (SERVER_DIED,) if isinstance(exc, ServerDied) else ()
        failed = PointMeta(latency=LatencyRecord(curve=tuple(acc.curve())))
        return PointResult(key, Status.FAILED, str(exc), flags=died, metadata=failed), acc.samples
    return judge_curve(
        ctx,
        point,
        target,
        acc,
        url=url,
        rates=rates,
        climbing=climbing,
        climb_reason=climb_reason,
        slo=slo,
        result=result,
        ceiling=ceiling,
    )


def _climb(ctx: MeasureContext, label: str, acc: RateCurve, reps: int, ceiling: float) -> str:
    """Climb to the knee, one rate at a time; returns why the climb stopped."""
    while True:
        if acc.lagging:
            return (
                f"the clients could not offer {min(acc.lagging):,.0f} requests/s ({acc.tool.name} "
                "fell behind on saturated client CPUs): the knee lies above the last "
                "good rate; add client cores"
            )
        nxt, reason = climb_next(acc.curve(), ceiling=ceiling)
        if nxt is None:
            return reason
        ctx.progress.step(f"measuring {label}: {nxt:,.0f}/s")
        acc.record([(int(nxt), acc.duration)] * reps, "sweep", False)


def _slo_search(
    result: SearchResult | None, pts: Sequence[LatencyPoint], rates: Sequence[int], slo: Slo | None
) -> SloSearch | None:
    """What the SLO search found (None without one), with the capacity the sweep's own
    rates alone would give."""
    if result is None:
        return None
    swept = [p for p in pts if p.rate in set(rates)]
    return SloSearch(
        capacity=result.capacity,
        bracket=tuple(result.bracket),
        probes=tuple(p.rate for p in result.probes),
        probe_count=result.probe_count,
        converged=result.converged,
        reason=result.reason,
        sweep_capacity=capacity_from_curve(swept, slo) if slo else None,
    )


def judge_curve(
    ctx: MeasureContext,
    point: PlannedPoint,
    target: Target,
    acc: RateCurve,
    *,
    url: str,
    rates: Sequence[int],
    climbing: bool,
    climb_reason: str,
    slo: Slo | None,
    result: SearchResult | None,
    ceiling: _Ceiling,
) -> Measurement:
    """The point from its curve: the knee or the SLO capacity, every flag, the record."""
    pts = acc.curve()
    lagging, problems, tool = acc.lagging, acc.problems, acc.tool.name
    good_pts = [p for p in pts if p.rate not in lagging] or pts
    k = knee(good_pts)
    interval = knee_interval(good_pts)
    # The rate that bounds the figure: the first past the knee, or the SLO's first failure.
    bound_rate = (
        result.bracket[1]
        if slo is not None and result is not None
        else interval[1]
        if interval
        else None
    )
    flags, verdict = curve_flags(pts, lagging, bound_rate, tool, problems)
    if target.emulated:
        flags.append("emulated")
    value = _figure(
        slo, result, k.rate if k else None, good_pts, ceiling, tool, flags, problems, climb_reason
    )
    invalid = value is None or (value in lagging) or "unstable" in flags
    facts = ctx.facts_of(point, target)
    base = latency_metadata(point, target, url, facts.record if facts else None)
    reps = acc.reps_per_rate
    jumps = {f"{r:g}": tuple(soak_jumps(s)) for r, s in acc.series.items() if soak_jumps(s)}
    record = LatencyRecord(
        repetitions_per_rate=reps,
        soak_s=ctx.settings.soak_s,
        rates=tuple(float(r) for r in (sorted(acc.reps) if climbing else rates)),
        curve=tuple(pts),
        knee_rate=k.rate if k else None,
        knee_interval=tuple(interval) if interval else None,
        knee_factor=KNEE_FACTOR,
        knee_limit_ms=knee_limit(good_pts),
        knee_busy=verdict or None,
        knee_reason=None if interval else (climb_reason or _no_knee_reason(good_pts)),
        climb=Climb(ceiling.rate, ceiling.client_cores, ceiling.per_core) if climbing else None,
        slo=str(slo) if slo else None,
        slo_label=slo.label if slo else None,
        slo_search=_slo_search(result, pts, rates, slo),
        soak_series={f"{r:g}": tuple(s) for r, s in acc.series.items()} if reps > 1 else None,
        soak_jumps=jumps or None,
    )
    meta = replace(base, workload=replace(base.workload, duration_s=acc.duration), latency=record)
    return (
        PointResult(
            point.key,
            Status.INVALID if invalid else Status.MEASURED,
            "; ".join(problems),
            value=value,
            unit="requests/s",
            repetitions=reps,
            flags=tuple(flags),
            metadata=meta,
        ),
        acc.samples,
    )


def _figure(
    slo: Slo | None,
    result: SearchResult | None,
    knee_rate: float | None,
    good_pts: Sequence[LatencyPoint],
    ceiling: _Ceiling,
    tool: str,
    flags: list[str],
    problems: list[str],
    climb_reason: str,
) -> float | None:
    """The point's value: the SLO capacity, else the knee, else the highest rate (no knee);
    the flags and problems that go with it are added to ``flags`` and ``problems``."""
    if slo is not None and result is not None:
        if not result.converged:
            flags.append("slo-not-converged")
            if result.bracket[1] is None and (result.capacity or 0) >= ceiling.rate:
                problems.append(
                    f"SLO search: {slo} was still met at the clients' ceiling, "
                    f"{ceiling.rate:,.0f} requests/s ({ceiling.client_cores} client core(s) x "
                    f"{ceiling.per_core:,}/s, {tool}'s planning figure): the capacity is at "
                    "least that; add client cores or clients to find it"
                )
            else:
                problems.append(f"SLO search: {result.reason}")
        if result.capacity is None:
            problems.append(f"no rate met {slo}: {result.reason}")
        return result.capacity
    if knee_rate is not None:
        return knee_rate
    first = below_sweep(good_pts)
    if first is not None:
        # Every rate was past the knee, the lowest included (a dead upstream answers each
        # request with an error): the highest rate is no figure, whatever the curve's shape.
        flags.append("knee-below")
        problems.append(
            f"the lowest rate, {first.rate:,.0f} requests/s, was already past the knee (p95 "
            f"{first.p95_ms:,.4g} ms, {first.error_ratio:.2%} errors): the knee lies below the "
            "sweep; sweep lower rates"
        )
        return None
    flags.append("no-knee")
    problems.append(
        climb_reason or "latency stayed flat over the whole sweep: the knee lies above it"
    )
    return max(p.rate for p in good_pts) if good_pts else None


def _no_knee_reason(pts: Sequence[LatencyPoint]) -> str:
    """Why a curve has no knee interval: no rate past it, or every rate past it."""
    if below_sweep(pts) is not None:
        return "the lowest rate was already past the knee limit: the knee lies below the sweep"
    return "no rate exceeded the knee limit"
