"""Latency under steady load: the chart series and the tables of the latency points."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sizing.engine.figures import series_order
from sizing.knee import KNEE_FACTOR, KNEE_FLOOR_MS
from sizing.model import Platform, PointResult, Status
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


def _latency_label(item: Mapping[str, Any], multi_ht: bool, multi_profile: bool) -> str:
    cores = int(item["cores"])
    label = f"{PLATFORM_LABELS.get(item['platform'], item['platform'])}, {cores} core"
    label += "s" if cores != 1 else ""
    if multi_ht:
        label += f", HT {item['ht']}"
    if multi_profile:
        label += f", {item['profile']}"
    if "emulated" in item["flags"]:
        label += ", emulated"
    if item["status"] != str(Status.MEASURED):
        label += " (invalid)"
    return label


def _slo_parts(text: str | None) -> tuple[str | None, float | None]:
    from sizing.errors import SizingError
    from sizing.knee import parse_slo

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
    newest: dict[tuple[str, int, str, str], tuple[dict[str, Any], Mapping[str, Any]]] = {}
    for run in runs:
        for p in run.points:
            if p.result.status not in LATENCY_STATUSES or p.result.metadata.get("cpu_curve"):
                continue  # a gateway CPU curve has its own section (report.data.gateway)
            for item in latency_chart_data([(run.record.id, p.result)]):
                key = (item["platform"], item["cores"], item["ht"], item["profile"])
                newest[key] = (item, p.result.metadata)
    if not newest:
        return None
    order = sorted(
        newest,
        key=lambda k: (k[3], series_order((k[0], k[2], "rps")), k[1]),
    )
    multi_ht = len({k[2] for k in order}) > 1
    multi_profile = len({k[3] for k in order}) > 1
    series: list[LatencySeries] = []
    summary: list[tuple[TCell, ...]] = []
    rate_tables: list[TableBlock] = []
    soak_tables: list[TableBlock] = []
    for key in order:
        item, meta = newest[key]
        label = _latency_label(item, multi_ht, multi_profile)
        stat, limit = _slo_parts(item["slo"])
        capacity = item["slo_capacity"]
        knee_rate = item["knee_rate"]
        src = cell_source("measured", "emulated" in item["flags"])
        s = LatencySeries(
            label=label,
            platform=item["platform"],
            cores=int(item["cores"]),
            ht=item["ht"],
            profile=item["profile"],
            run_id=int(item["run_id"]),
            host=item["host"],
            status=item["status"],
            emulated="emulated" in item["flags"],
            rates=tuple(item["rates"]),
            mean_ms=tuple(item["mean_ms"]),
            p95_ms=tuple(item["p95_ms"]),
            server_busy=tuple(None if b is None else float(b) for b in item["server_busy"]),
            knee_rate=None if knee_rate is None else float(knee_rate),
            slo=item["slo"],
            slo_stat=stat,
            slo_limit_ms=limit,
            slo_capacity=None if capacity is None else float(capacity),
        )
        series.append(s)
        if s.knee_rate is not None and "client-bound" in item["flags"]:
            knee_text = TCell(f"≥{number(s.knee_rate)} (client-bound)", src)
        elif s.knee_rate is not None:
            knee_text = TCell(number(s.knee_rate), src)
        elif "no-knee" in item["flags"]:
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
        summary.append(
            (
                TCell(label, numeric=False),
                TCell(f"{s.run_id}, {s.host}", numeric=False),
                TCell(_rate_span(sorted(set(meta.get("rates") or s.rates)))),
                knee_text,
                TCell(objective, numeric=False),
                cap_text,
            )
        )
        rate_tables.append(_rates_table(s, meta, src))
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


def _rates_table(s: LatencySeries, meta: Mapping[str, Any], src: str) -> TableBlock:
    rows: list[tuple[TCell, ...]] = []
    for p in sorted(meta.get("curve") or [], key=lambda p: float(p["rate"])):
        rate = float(p["rate"])
        notes = []
        if s.knee_rate is not None and rate == s.knee_rate:
            notes.append("knee")
        if s.slo_capacity is not None and rate == s.slo_capacity:
            notes.append("SLO capacity")
        busy = p.get("server_busy")
        rows.append(
            (
                TCell(number(rate)),
                TCell(number(p.get("achieved"))),
                TCell(latency_ms(p.get("mean_ms")), src),
                TCell(latency_ms(p.get("p50_ms")), src),
                TCell(latency_ms(p.get("p95_ms")), src),
                TCell(latency_ms(p.get("p99_ms")), src),
                TCell(latency_ms(p.get("max_ms")), src),
                TCell(percent(None if busy is None else float(busy))),
                TCell(", ".join(notes) or MISSING, numeric=False),
            )
        )
    reps = int(meta.get("repetitions_per_rate") or 1)
    notes = [
        f"Offered open loop by {meta.get('tool') or 'the load generator'}; latencies in "
        "milliseconds, merged over the load generators weighted by request count."
    ]
    if reps > 1:
        notes.append(
            f"Each rate was repeated {reps} times back to back; its figures are the mean over "
            "the repetitions (max: the highest)."
        )
    if s.slo is not None:
        searched = meta.get("slo_search") or {}
        probes = searched.get("probes") or []
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


def _soak_table(s: LatencySeries, item: Mapping[str, Any], src: str) -> TableBlock | None:
    """The repetitions of the rates whose latency or steal jumped, or None without jumps."""
    jumps: Mapping[str, Sequence[int]] = item.get("soak_jumps") or {}
    reps_by_rate: Mapping[str, Sequence[Mapping[str, Any]]] = item.get("soak_series") or {}
    if not jumps or not reps_by_rate:
        return None
    from sizing.measure.validity import STEAL_LIMIT

    rows: list[tuple[TCell, ...]] = []
    for rate_key in sorted(jumps, key=float):
        jumped = set(jumps[rate_key])
        for rep in reps_by_rate.get(rate_key, ()):
            n = int(rep["repetition"])
            steal = rep.get("server_steal")
            busy = rep.get("server_busy")
            why = ""
            if n in jumped:
                why = "steal" if steal is not None and float(steal) > STEAL_LIMIT else "latency"
            rows.append(
                (
                    TCell(number(float(rate_key))),
                    TCell(str(n)),
                    TCell(latency_ms(rep.get("mean_ms")), src),
                    TCell(latency_ms(rep.get("p95_ms")), src),
                    TCell(latency_ms(rep.get("p99_ms")), src),
                    TCell(latency_ms(rep.get("max_ms")), src),
                    TCell(percent(None if busy is None else float(busy))),
                    TCell(percent(None if steal is None else float(steal))),
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


def latency_chart_data(points: Iterable[tuple[int, PointResult]]) -> list[dict[str, Any]]:
    """For the guide's charts: one series per latency point (platform, cores, HT,
    profile), newest run last. Each holds the offered rates and, per rate, mean and p95
    latency (ms) and the server's CPU busy % (the CPU-against-offered-rate curve), the
    knee rate to mark, the SLO capacity when one was searched, and the per-repetition
    soak table with the repetitions where latency or steal jumped (the guide shows the
    table only when there are such jumps)."""
    out: list[dict[str, Any]] = []
    for run_id, r in points:
        meta = r.metadata
        curve = meta.get("curve") or []
        if meta.get("mode") != "fixed-rate" or not curve:
            continue
        search = meta.get("slo_search") or {}
        out.append({
            "run_id": run_id,
            "host": r.key.host,
            "platform": _family(r.key.platform),
            "cores": r.key.cores,
            "ht": r.key.ht,
            "profile": r.key.profile,
            "status": str(r.status),
            "flags": list(r.flags),
            "rates": [float(p["rate"]) for p in curve],
            "mean_ms": [float(p["mean_ms"]) for p in curve],
            "p95_ms": [float(p["p95_ms"]) for p in curve],
            "server_busy": [p.get("server_busy") for p in curve],
            "knee_rate": meta.get("knee_rate"),
            "slo": meta.get("slo"),
            "slo_capacity": search.get("capacity"),
            "soak_series": meta.get("soak_series"),
            "soak_jumps": meta.get("soak_jumps"),
        })
    return out
