"""Latency under steady load: the chart series and the tables of the latency points."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sizing.engine.figures import series_order
from sizing.errors import SizingError
from sizing.knee import KNEE_FACTOR, KNEE_FLOOR_MS
from sizing.measure.validity import STEAL_LIMIT
from sizing.model import FigureKind, Platform, PointResult, Status
from sizing.option_text import parse_slo
from sizing.records import LatencyRecord, PointMeta, SoakRep
from sizing.report.data.format import (
    MISSING,
    PLATFORM_LABELS,
    cell_source,
    latency_ms,
    number,
    percent,
)
from sizing.report.data.model import LatencySection, LatencySeries, TableBlock, TCell
from sizing.sources import RunData

LATENCY_STATUSES = (Status.MEASURED, Status.INVALID)


def _latency_label(item: LatencyChartItem, multi_ht: bool, multi_profile: bool) -> str:
    cores = item.cores
    label = f"{PLATFORM_LABELS.get(item.platform, item.platform)}, {cores} core"
    label += "s" if cores != 1 else ""
    if multi_ht:
        label += f", HT {item.ht}"
    if multi_profile:
        label += f", {item.profile}"
    if "emulated" in item.flags:
        label += ", emulated"
    if item.status != str(Status.MEASURED):
        label += " (invalid)"
    return label


def _slo_parts(text: str | None) -> tuple[str | None, float | None]:

    if not text:
        return None, None
    try:
        slo = parse_slo(text)
    except SizingError:
        return None, None
    return slo.stat, slo.limit_ms


def _rate_span(rates: Sequence[float]) -> str:
    if not rates:
        return MISSING
    lo, hi = min(rates), max(rates)
    return f"{number(lo)}–{number(hi)} ({len(rates)} rates)" if lo != hi else number(lo)


def latency_section(runs: Sequence[RunData]) -> LatencySection | None:
    """The latency points of ``runs`` (measured or invalid, the newest per platform, cores,
    HT and profile) as chart series and tables; None when the runs hold none."""
    newest: dict[tuple[str, int, str, str], tuple[LatencyChartItem, PointMeta]] = {}
    for run in runs:
        for p in run.points:
            if p.result.status not in LATENCY_STATUSES or p.result.metadata.workload.cpu_curve:
                continue  # a gateway CPU curve has its own section (report.data.gateway)
            for item in latency_chart_data([(run.record.id, p.result)]):
                key = (item.platform, item.cores, item.ht, item.profile)
                newest[key] = (item, p.result.metadata)
    if not newest:
        return None
    order = sorted(newest, key=lambda k: (k[3], series_order((k[0], k[2], "rps")), k[1]))
    multi_ht = len({k[2] for k in order}) > 1
    multi_profile = len({k[3] for k in order}) > 1
    series: list[LatencySeries] = []
    summary: list[tuple[TCell, ...]] = []
    rate_tables: list[TableBlock] = []
    soak_tables: list[TableBlock] = []
    for key in order:
        item, meta = newest[key]
        src = cell_source(FigureKind.MEASURED, "emulated" in item.flags, item.flags)
        s = _series(item, _latency_label(item, multi_ht, multi_profile))
        series.append(s)
        summary.append(_summary_row(s, item, meta, src))
        rate_tables.append(_rates_table(s, meta.latency, meta.env.tool, src))
        soak = _soak_table(s, item, src)
        if soak is not None:
            soak_tables.append(soak)
    return LatencySection(
        series=tuple(series),
        summary=TableBlock(
            title="Latency capacity per configuration",
            headers=(
                "Configuration",
                "Run, host",
                "Offered rates (requests/s)",
                "Knee (requests/s)",
                "Objective",
                "SLO capacity (requests/s)",
            ),
            rows=tuple(summary),
            notes=(
                f"Knee: the last offered rate before latency spikes (p95 above {KNEE_FACTOR:g} "
                f"times its low-load value and above {KNEE_FLOOR_MS:g} ms).",
                "SLO capacity: the highest offered rate that met the objective, narrowed to "
                "±2% by probing further rates when the run was given the objective.",
            ),
        ),
        rates=tuple(rate_tables),
        soak=tuple(soak_tables),
    )


def _series(item: LatencyChartItem, label: str) -> LatencySeries:
    stat, limit = _slo_parts(item.slo)
    return LatencySeries(
        label=label,
        platform=item.platform,
        cores=item.cores,
        ht=item.ht,
        profile=item.profile,
        run_id=item.run_id,
        host=item.host,
        status=item.status,
        emulated="emulated" in item.flags,
        rates=item.rates,
        mean_ms=item.mean_ms,
        p95_ms=item.p95_ms,
        server_busy=item.server_busy,
        knee_rate=item.knee_rate,
        slo=item.slo,
        slo_stat=stat,
        slo_limit_ms=limit,
        slo_capacity=item.slo_capacity,
    )


def _summary_row(
    s: LatencySeries, item: LatencyChartItem, meta: PointMeta, src: str
) -> tuple[TCell, ...]:
    """A configuration's knee and SLO capacity."""
    if s.knee_rate is not None and "client-bound" in item.flags:
        knee_text = TCell(f"≥{number(s.knee_rate)} (client-bound)", src)
    elif s.knee_rate is not None:
        knee_text = TCell(number(s.knee_rate), src)
    elif "no-knee" in item.flags:
        knee_text = TCell(f"above {number(max(s.rates))}")
    else:
        knee_text = TCell(MISSING)
    if s.slo is None:
        cap_text = TCell(MISSING)
    elif s.slo_capacity is None:
        cap_text = TCell("no rate met it")
    else:
        cap_text = TCell(number(s.slo_capacity), src)
    objective = f"{s.slo_stat} ≤ {s.slo_limit_ms:g} ms" if s.slo_stat else MISSING
    return (
        TCell(s.label, numeric=False),
        TCell(f"{s.run_id}, {s.host}", numeric=False),
        TCell(_rate_span(sorted(set(meta.latency.rates or s.rates)))),
        knee_text,
        TCell(objective, numeric=False),
        cap_text,
    )


def _rates_table(s: LatencySeries, meta: LatencyRecord, tool: str | None, src: str) -> TableBlock:
    rows: list[tuple[TCell, ...]] = []
    for p in sorted(meta.curve, key=lambda p: p.rate):
        rate = p.rate
        notes = []
        if s.knee_rate is not None and rate == s.knee_rate:
            notes.append("knee")
        if s.slo_capacity is not None and rate == s.slo_capacity:
            notes.append("SLO capacity")
        rows.append(
            (
                TCell(number(rate)),
                TCell(number(p.achieved)),
                TCell(latency_ms(p.mean_ms), src),
                TCell(latency_ms(p.p50_ms), src),
                TCell(latency_ms(p.p95_ms), src),
                TCell(latency_ms(p.p99_ms), src),
                TCell(latency_ms(p.max_ms), src),
                TCell(percent(p.server_busy)),
                TCell(", ".join(notes) or MISSING, numeric=False),
            )
        )
    reps = meta.repetitions_per_rate or 1
    notes = [
        f"Offered open loop by {tool or 'the load generator'}; latencies in "
        "milliseconds, merged over the load generators weighted by request count."
    ]
    if reps > 1:
        notes.append(
            f"Each rate was repeated {reps} times back to back; its figures are the mean over "
            "the repetitions (max: the highest)."
        )
    if s.slo is not None:
        probes = meta.probes
        if probes:
            notes.append(
                f"Rates probed by the search for the SLO capacity ({s.slo}): "
                + ", ".join(number(float(r)) for r in probes)
                + "."
            )
    return TableBlock(
        title=f"Latency against offered rate: {s.label} (run {s.run_id}, {s.host})",
        headers=(
            "Offered rate (requests/s)",
            "Achieved (responses/s)",
            "Mean (ms)",
            "p50 (ms)",
            "p95 (ms)",
            "p99 (ms)",
            "Max (ms)",
            "Server CPU busy",
            "Note",
        ),
        rows=tuple(rows),
        notes=tuple(notes),
        groups=(
            ("Offered rate (requests/s)", ()),
            ("Achieved (responses/s)", ()),
            ("Latency (ms)", ("Mean", "p50", "p95", "p99", "Max")),
            ("Server CPU busy", ()),
            ("Note", ()),
        ),
    )


def _soak_table(s: LatencySeries, item: LatencyChartItem, src: str) -> TableBlock | None:
    """The repetitions of the rates whose latency or steal jumped, or None without jumps."""
    jumps, reps_by_rate = item.soak_jumps, item.soak_series
    if not jumps or not reps_by_rate:
        return None

    rows: list[tuple[TCell, ...]] = []
    for rate_key in sorted(jumps, key=float):
        jumped = set(jumps[rate_key])
        for rep in reps_by_rate.get(rate_key, ()):
            n = rep.repetition
            steal = rep.server_steal
            why = ""
            if n in jumped:
                why = "steal" if steal is not None and steal > STEAL_LIMIT else "latency"
            rows.append(
                (
                    TCell(number(float(rate_key))),
                    TCell(str(n)),
                    TCell(latency_ms(rep.mean_ms), src),
                    TCell(latency_ms(rep.p95_ms), src),
                    TCell(latency_ms(rep.p99_ms), src),
                    TCell(latency_ms(rep.max_ms), src),
                    TCell(percent(rep.server_busy)),
                    TCell(percent(steal)),
                    TCell(why or MISSING, numeric=False),
                )
            )
    if not rows:
        return None
    return TableBlock(
        title=f"Soak repetitions with jumps: {s.label} (run {s.run_id}, {s.host})",
        headers=(
            "Offered rate (requests/s)",
            "Repetition",
            "Mean (ms)",
            "p95 (ms)",
            "p99 (ms)",
            "Max (ms)",
            "Server CPU busy",
            "Steal",
            "Jump",
        ),
        rows=tuple(rows),
        notes=(
            "Every repetition of the rates where one jumped: its mean or p95 latency rose far "
            f"above the median of the rate's repetitions, or the hypervisor stole more than "
            f"{STEAL_LIMIT:g}% of the server's CPUs (CPU credits running out, a noisy neighbour). "
            "Rates whose repetitions stayed level are left out.",
        ),
        groups=(
            ("Offered rate (requests/s)", ()),
            ("Repetition", ()),
            ("Latency (ms)", ("Mean", "p95", "p99", "Max")),
            ("Server CPU", ("Busy", "Steal")),
            ("Jump", ()),
        ),
    )


def _family(platform: str) -> str:
    try:
        return Platform(platform).family
    except ValueError:
        return platform


@dataclass(frozen=True)
class LatencyChartItem:
    """One latency point's series for the guide's charts and tables."""

    run_id: int
    host: str
    platform: str
    cores: int
    ht: str
    profile: str
    status: str
    flags: tuple[str, ...]
    rates: tuple[float, ...]
    mean_ms: tuple[float, ...]
    p95_ms: tuple[float, ...]
    server_busy: tuple[float | None, ...]
    knee_rate: float | None
    slo: str | None
    slo_capacity: float | None
    soak_series: Mapping[str, Sequence[SoakRep]]
    soak_jumps: Mapping[str, Sequence[int]]


def latency_chart_data(points: Iterable[tuple[int, PointResult]]) -> list[LatencyChartItem]:
    """For the guide's charts: one series per latency point (platform, cores, HT,
    profile), newest run last. Each holds the offered rates and, per rate, mean and p95
    latency (ms) and the server's CPU busy % (the CPU-against-offered-rate curve), the
    knee rate to mark, the SLO capacity when one was searched, and the per-repetition
    soak table with the repetitions where latency or steal jumped (the guide shows the
    table only when there are such jumps)."""
    out: list[LatencyChartItem] = []
    for run_id, r in points:
        lat = r.metadata.latency
        if not r.metadata.is_latency:
            continue
        curve = lat.curve
        out.append(
            LatencyChartItem(
                run_id=run_id,
                host=r.key.host,
                platform=_family(r.key.platform),
                cores=r.key.cores,
                ht=r.key.ht,
                profile=r.key.profile,
                status=str(r.status),
                flags=r.flags,
                rates=tuple(p.rate for p in curve),
                mean_ms=tuple(p.mean_ms for p in curve),
                p95_ms=tuple(p.p95_ms for p in curve),
                server_busy=tuple(p.server_busy for p in curve),
                knee_rate=lat.knee_rate,
                slo=lat.slo,
                slo_capacity=lat.slo_capacity,
                soak_series=lat.soak_series or {},
                soak_jumps=lat.jumps,
            )
        )
    return out
