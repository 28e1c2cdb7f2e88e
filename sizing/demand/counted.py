"""The demand of a counters' series (:mod:`sizing.demand.counters`): the same figures
as a log's, at the scrape interval."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sizing.demand.counters import Samples, parse_samples
from sizing.demand.derive import HOUR, busiest_hour, outliers
from sizing.demand.inputs import distinct_files
from sizing.demand.mix import mix_of_counters
from sizing.demand.model import Missing, Rate, SourceFile, TrafficDemand, iso
from sizing.demand.persecond import PerSecond
from sizing.demand.rates import Rates, Series, rates
from sizing.errors import UsageError
from sizing.workload import Assumed, Role


def _rate(rates: Rates, total: float, t0: float, t1: float) -> Rate:
    ordered = np.sort(rates.values)
    return Rate(
        peak=float(ordered[-1]),
        peak_at=iso(rates.peak_at()),
        p99=_rank(ordered, 0.99),
        p999=_rank(ordered, 0.999),
        average=total / (t1 - t0),
        start=iso(t0),
        end=iso(t1),
        seconds=int(t1 - t0),
    )


def _rank(ordered: npt.NDArray[np.float64], q: float) -> float:
    """derive.nearest_rank of a sorted array."""
    return float(ordered[max(1, math.ceil(q * len(ordered))) - 1])


def _chart(rates: Rates, step: float) -> tuple[int, list[int]]:
    """Per second, each interval's rate over its seconds: the busiest hour (or all).
    Only the seconds within an hour of the busiest interval are filled: bounded, whatever
    the span."""
    order = np.argsort(rates.keys)
    keys, values = rates.keys[order], rates.values[order]
    start, end = int(keys[0]), int(keys[-1]) + max(1, int(step))
    top = rates.peak_at()
    # busiest_hour reads the hours around the first busiest second (at or before top):
    # nothing past top + HOUR, whatever the step (a scrape a year apart filled a year)
    lo, hi = top - HOUR, top + HOUR + min(max(1, int(step)), HOUR)
    nxt = np.r_[keys[1:], end]
    near = (keys < hi) & (nxt > lo)  # the intervals that reach into the hour around the top
    per: dict[int, int] = {}
    for a, b, v in zip(keys[near].tolist(), nxt[near].tolist(), values[near].tolist(), strict=True):
        for s in range(max(a, lo), min(b, hi)):
            per[s] = int(round(v))
    return busiest_hour(PerSecond.of(per), start, end - 1)


def _far(path: Path, got: Samples, notes: list[str]) -> Samples:
    """The samples without those at times far from the rest (noted, with their lines)."""
    if len(got) < 2:
        return got
    secs = got.time.astype(np.int64)  # in time order (merged): counted by runs, no sort
    starts = np.flatnonzero(np.r_[True, secs[1:] != secs[:-1]])
    counts = np.diff(np.r_[starts, len(secs)])
    busy = PerSecond()
    for a in range(0, len(starts), 1 << 16):  # a slice at a time: few temporary arrays
        busy.add_many(secs[starts[a : a + (1 << 16)]], counts[a : a + (1 << 16)])
    del starts, counts
    far = outliers(busy)
    if not len(far):
        return got
    out = np.isin(secs, far)
    lines = [f"{path}:{n}" for n in got.line[out].tolist() if n][:3]
    notes.append(
        f"{int(out.sum())} sample(s) at times far from the rest left out"
        + (f": at {', '.join(lines)}" if lines else "")
    )
    return got.take(~out)


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
    series: list[Samples] = []
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
        got = _far(path, got, notes)
        if len(got) < 2:
            raise UsageError(f"{path}: fewer than 2 {kind} samples: no rate to derive")
        kinds.add(kind)
        series.append(got)
        sources.append(
            SourceFile(str(path), state.sha256, path.stat().st_size, len(got), gzip=state.gzip)
        )
    first = series[0]
    step = float(np.median(np.diff(first.time)))
    if len(series) > 1:
        notes.append(f"{len(series)} series, one per server: rates summed per {step:g} s")
    req = rates(series, "requests", step)
    if req is None:
        raise UsageError(f"{paths[0]}: no request counter in the samples")
    if not len(req[0]):
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
    t0 = min(float(s.time[0]) for s in series)
    t1 = max(float(s.time[-1]) for s in series)
    demand = _counters_demand(series, (t0, t1), sorted(kinds), sources, notes, req, step)
    mix = mix_of_counters(
        demand.requests_per_connection,
        demand.resumption_share,
        role=role,
        role_source=role_source,
        assumed=assumed,
    )
    return replace(demand, workload=mix)


def _less(a: Rates, b: Rates) -> Rates:
    """``a``'s rates less ``b``'s in the same interval (0 where ``b`` has none), at least
    0: the full handshakes, from the handshakes and the resumed ones."""
    order = np.argsort(b.keys)
    keys = b.keys[order]
    at = np.minimum(np.searchsorted(keys, a.keys), max(len(keys) - 1, 0))
    same = keys[at] == a.keys if len(keys) else np.zeros(len(a.keys), np.bool_)
    minus = np.where(same, b.values[order][at] if len(keys) else 0.0, 0.0)
    return Rates(a.keys, np.maximum(0.0, a.values - minus))


def _counters_demand(
    series: list[Samples],
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
    if hs and ru and len(hs[0]):  # (no interval left: no figure, not a crash)
        full = _rate(_less(hs[0], ru[0]), hs[1] - ru[1], t0, t1)
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
        new_connections=_rate(acc[0], acc[1], t0, t1) if acc and len(acc[0]) else None,
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
