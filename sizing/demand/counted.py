"""The demand of a counters' series (:mod:`sizing.demand.counters`): the same figures
as a log's, at the scrape interval."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import replace
from pathlib import Path

from sizing.demand.counters import CounterSample, Series, parse_samples, rates
from sizing.demand.derive import HOUR, busiest_hour, nearest_rank, outliers
from sizing.demand.inputs import distinct_files
from sizing.demand.mix import mix_of_counters
from sizing.demand.model import Missing, Rate, SourceFile, TrafficDemand, iso
from sizing.demand.persecond import PerSecond
from sizing.errors import UsageError
from sizing.workload import Assumed, Role


def _rate(rates: Counter[int], total: float, t0: float, t1: float) -> Rate:
    ordered = sorted(rates.values())
    peak_at = max(rates, key=lambda s: rates[s])
    return Rate(
        peak=ordered[-1],
        peak_at=iso(peak_at),
        p99=nearest_rank(ordered, 0.99),
        p999=nearest_rank(ordered, 0.999),
        average=total / (t1 - t0),
        start=iso(t0),
        end=iso(t1),
        seconds=int(t1 - t0),
    )


def _chart(rates: Counter[int], step: float) -> tuple[int, list[int]]:
    """Per second, each interval's rate over its seconds: the busiest hour (or all).
    Only the seconds within an hour of the busiest interval are filled: bounded, whatever
    the span."""
    start, end = min(rates), max(rates) + max(1, int(step))
    top = max(rates, key=lambda s: rates[s])
    lo, hi = top - HOUR, top + HOUR + max(1, int(step))
    per: Counter[int] = Counter()
    keys = sorted(rates)
    for a, b in zip(keys, keys[1:] + [end], strict=True):
        for s in range(max(a, lo), min(b, hi)):
            per[s] = int(round(rates[a]))
    return busiest_hour(PerSecond.of(per), start, end - 1)


def read_counters(
    paths: list[Path],
    *,
    role: Role | None = None,
    role_source: str = "",
    assumed: tuple[Assumed, ...] = (),
) -> TrafficDemand:
    """The demand of the counters' files (one server's series each: their rates summed
    per interval on the first file's scrape grid); a file given twice, or a copy, is
    counted once."""
    series: list[list[CounterSample]] = []
    kinds, sources = set(), []
    files, notes = distinct_files(paths)
    seen: dict[str, Path] = {}
    for path in files:
        kind, got, state = parse_samples(path)
        if state.content_sha256 in seen:
            notes.append(f"{path}: the same samples as {seen[state.content_sha256]}: counted once")
            continue
        seen[state.content_sha256] = path
        notes.extend(state.notes)
        far = set(outliers(PerSecond.of(Counter(int(s.time) for s in got))).tolist())
        if far:
            lines = [f"{path}:{s.line}" for s in got if int(s.time) in far and s.line][:3]
            notes.append(
                f"{len([s for s in got if int(s.time) in far])} sample(s) at times far from"
                " the rest left out" + (f": at {', '.join(lines)}" if lines else "")
            )
            got = [s for s in got if int(s.time) not in far]
        if len(got) < 2:
            raise UsageError(f"{path}: fewer than 2 {kind} samples: no rate to derive")
        kinds.add(kind)
        series.append(got)
        sources.append(
            SourceFile(str(path), state.sha256, path.stat().st_size, len(got), gzip=state.gzip)
        )
    first = series[0]
    step = statistics.median(b.time - a.time for a, b in zip(first, first[1:], strict=False))
    if len(series) > 1:
        notes.append(f"{len(series)} series, one per server: rates summed per {step:g} s")
    req = rates(series, "requests", step)
    if req is None:
        raise UsageError(f"{paths[0]}: no request counter in the samples")
    if not req[0]:
        raise UsageError(
            f"{paths[0]}: no interval gives a rate: a counter went down (a restart) or jumped"
            " beyond any server's rate between every two samples; give more samples"
        )
    notes.append(
        f"counters scraped every {step:g} s: a peak shorter than that is averaged away,"
        " so the busiest interval is a lower bound on the busiest second"
    )
    if req[2]:
        notes.append(
            f"{req[2]} interval(s) where a counter went down (a restart) or jumped beyond any"
            " server's rate left out"
        )
    t0 = min(s[0].time for s in series)
    t1 = max(s[-1].time for s in series)
    demand = _counters_demand(series, (t0, t1), sorted(kinds), sources, notes, req, step)
    mix = mix_of_counters(
        demand.requests_per_connection,
        demand.resumption_share,
        role=role,
        role_source=role_source,
        assumed=assumed,
    )
    return replace(demand, workload=mix)


def _counters_demand(
    series: list[list[CounterSample]],
    span: tuple[float, float],
    kinds: list[str],
    sources: list[SourceFile],
    notes: list[str],
    req: Series,
    step: float,
) -> TrafficDemand:
    t0, t1 = span
    per, total, _ = req
    acc = rates(series, "accepted", step)
    hs, ru = rates(series, "handshakes", step), rates(series, "reuses", step)
    full = None
    share = None
    if hs and ru:
        full_rates = Counter({k: max(0.0, v - ru[0].get(k, 0)) for k, v in hs[0].items()})
        full = _rate(full_rates, hs[1] - ru[1], t0, t1)  # type: ignore[arg-type]
        share = round(ru[1] / hs[1], 4) if hs[1] else None
    missing = []
    if hs is None:
        missing.append(
            Missing(
                "full TLS handshakes/s and the resumption share (stub_status has no TLS counters)",
                "the NGINX Plus API's /api/N/ssl, or an access log with"
                " $connection_requests $ssl_session_reused",
            )
        )
    chart_start, chart = _chart(per, step)
    return TrafficDemand(
        method="counters (" + ", ".join(kinds) + f", every {step:g} s)",
        arrival=f"counter differences over each {step:g} s scrape interval",
        resolution_s=step,
        requests=_rate(per, total, t0, t1),
        classes={},
        new_connections=_rate(acc[0], acc[1], t0, t1) if acc else None,
        full_handshakes=full,
        resumption_share=share,
        requests_per_connection=round(total / acc[1], 3) if acc and acc[1] else None,
        sizes=[],
        request_time_ms=None,
        chart_start=iso(chart_start),
        chart=chart,
        sources=sources,
        lines=sum(len(s) for s in series),
        skipped=0,
        skipped_samples=[],
        notes=notes,
        missing=missing + [Missing("the response-size mix and request times", "an access log")],
    )
