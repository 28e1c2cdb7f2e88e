"""A run's points for the terminal (a table that fits it, 100 columns at most), for
``--json`` and for ``--csv``: the figure with the interval of its median and that
interval's coverage, the flags, errors, server and client CPU; spread, latency and reasons
in full under ``--verbose``. The guards' evidence comes from
:func:`sizing.report.data.evidence.point_evidence`."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from sizing.intervals import median_coverage
from sizing.model import (
    VIRTUALIZED_HOST_WORDS,
    PointKey,
    PointResult,
    Status,
    client_floor,
)
from sizing.report.data.evidence import NO_EVIDENCE, Evidence
from sizing.report.data.format import MISSING, number
from sizing.report.data.pairs import PairView, pair_summary
from sizing.report.render.grid import grid
from sizing.report.render.point_records import records
from sizing.textfit import WIDTH
from sizing.workload import CUSTOMER_PREFIX

__all__ = ["WIDTH", "comparisons_json", "point_json", "points_csv", "points_table"]

UNITS = {"requests/s": "req/s", "handshakes/s": "hs/s"}
CSV_FIELDS = [
    "run_id",
    "label",
    "host",
    "platform",
    "cores",
    "ht",
    "profile",
    "status",
    "value",
    "unit",
    "ci_low",
    "ci_high",
    "interval_pct",
    "interval_coverage",
    "repetitions",
    "spread",
    "errors",
    "server_cpu_pct",
    "client_cpu_pct",
    "tls_full",
    "tls_reused",
    "latency_p50_ms",
    "latency_p90_ms",
    "latency_p99_ms",
    "ceiling",
    "ceiling_of",
    "ceiling_share",
    "pair_kind",
    "pair_role",
    "pair_partner",
    "pair_figure",
    "pair_pct",
    "pair_low_pct",
    "pair_high_pct",
    "pairs",
    "tool",
    "tool_version",
    "flags",
    "reason",
]


def point_json(r: PointResult, evidence: Evidence | None = None) -> dict[str, Any]:
    """A point for ``--json``: its figure, interval and flags, and (when known) the
    guards' evidence (``server_cpu_pct``, ``client_cpu_pct``, ``errors``, ``tls_full``,
    ``tls_reused``, ``interval_pct``, ``latency_ms``)."""
    doc: dict[str, Any] = {
        "host": r.key.host,
        "platform": r.key.platform,
        "cores": r.key.cores,
        "ht": r.key.ht,
        "profile": r.key.profile,
        "status": str(r.status),
        "reason": r.reason,
        "value": r.value,
        "unit": r.unit,
        "repetitions": r.repetitions,
        "spread": r.spread,
        "ci_low": r.ci_low,
        "ci_high": r.ci_high,
        "flags": list(r.flags),
        # the generator that measured the figure, and its version: the point's own
        "tool": r.metadata.env.tool,
        "tool_version": r.metadata.env.tool_version,
    }
    if evidence is not None:
        doc["evidence"] = evidence.to_json()
        _one_interval(doc, evidence)
    doc["pair"] = pair_summary(r)
    return doc


def comparisons_json(views: Sequence[PairView]) -> list[dict[str, Any]]:
    """Every overhead and HT gain of :func:`sizing.report.data.pairs.pair_views` that has a
    figure, for ``--json``: paired (median of the per-pair ratios) or unpaired (from both
    legs' intervals), with the leg that failed its guards when one did, and the legs' runs
    when they differ."""
    return [
        {
            "kind": v.kind,
            "figure": v.figure,
            "a": v.a.key.label(),
            "b": v.b.key.label(),
            "pct": v.pct,
            "low_pct": v.low,
            "high_pct": v.high,
            "paired": v.paired,
            "pairs": v.pairs,
            "coverage": v.coverage,  # None unpaired: see leg_coverage
            "leg_coverage": v.leg_coverage,
            "interval": v.interval,
            "failed_leg": v.failed or None,
            "flags": sorted(set(v.a.flags) | set(v.b.flags)),
            "runs": None if v.runs is None else list(v.runs),
            "note": (v.note or None) if v.kind == "virtualization" else None,
        }
        for v in views
        if v.pct is not None
    ]


def _one_interval(doc: dict[str, Any], ev: Evidence) -> None:
    """The interval of the median recomputed from the stored runs (what ``recommend``,
    ``table`` and the guide use) replaces the stored one, which points from before issue 22
    kept as a Student-t interval of the mean; its coverage and words come with it."""
    if ev.ci_low is not None and ev.ci_high is not None:
        doc["ci_low"], doc["ci_high"] = ev.ci_low, ev.ci_high
    doc["interval_coverage"] = ev.interval_coverage
    doc["interval"] = ev.interval


def _pct(value: Any) -> str:
    return MISSING if value is None else f"{value:.0f}%"


def _figure(r: PointResult) -> str:
    return MISSING if r.value is None else f"{number(r.value)} {UNITS.get(r.unit, r.unit)}"


def _cover(n: int, ev: Evidence) -> str:
    """`` (75%)``: the true coverage of the interval of the median (of the stored
    repetitions the evidence recomputed it from, else of ``n`` runs)."""
    cov = ev.interval_coverage
    if cov is None and n >= 2:
        cov = median_coverage(n)
    return "" if cov is None else f" ({cov * 100:.3g}%)"


def _fit(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def points_table(
    points: Sequence[PointResult],
    evidence: Mapping[PointKey, Evidence] | None = None,
    *,
    verbose: bool = False,
    width: int = WIDTH,
) -> str:
    """One line per point: the median, ± half the interval of the median with that
    interval's true coverage ("±4.5% (75%)": the range of 3 runs), errors, the server's and
    the busiest client's CPU, status and flags (or the reason of a point not measured).
    Fits ``width`` columns; ``verbose`` adds the platform, repetitions, spread and
    latency, and gives every reason in full on its own line."""
    evidence = evidence or {}
    headers = ["point", "median", "± (cover)", "errors", "srv CPU", "cli CPU", "flags / reason"]
    if verbose:
        headers = [
            "point",
            "median",
            "± (cover)",
            "spread",
            "reps",
            "errors",
            "srv CPU",
            "cli CPU",
            "p50 ms",
            "p99 ms",
            "generator",
            "flags / reason",
        ]
    rows = []
    reasons: list[str] = []
    for r in points:
        ev = evidence.get(r.key, NO_EVIDENCE)
        k = r.key
        name = (
            f"{k.host} {k.platform} {k.cores}c ht={k.ht} {k.profile}"
            if verbose
            else f"{k.host} {k.cores}c {k.ht} {k.profile}"
        )
        interval = ev.interval_pct
        if interval is None and r.ci_low is not None and r.ci_high is not None and r.value:
            interval = 100 * (r.ci_high - r.ci_low) / 2 / r.value
        status = ", ".join(dict.fromkeys((*r.flags, *ev.repetition_flags)))
        if r.status is not Status.MEASURED:
            status = str(r.status) + (f" ({status})" if status else "")
            if r.reason and not verbose:
                status += f": {r.reason}"
        errors = ev.errors
        row = [
            name,
            _figure(r),
            MISSING if interval is None else f"±{interval:.1f}%{_cover(r.repetitions, ev)}",
            MISSING if errors is None else f"{errors:,}",
            _pct(ev.server_cpu_pct),
            _pct(ev.client_cpu_pct),
            status,
        ]
        if verbose:
            p50, p99 = ev.latency("p50"), ev.latency("p99")
            spread = MISSING if r.spread is None else f"{100 * r.spread:.1f}%"
            row[3:3] = [spread, str(r.repetitions or MISSING)]
            row[-1:-1] = [
                MISSING if p50 is None else f"{p50:.2f}",
                MISSING if p99 is None else f"{p99:.2f}",
                r.metadata.env.measured_by or MISSING,
            ]
            if r.reason:
                reasons.append(f"{name}: {r.reason}")
        rows.append(row)
    if verbose:
        return records(headers, rows, reasons, width)
    table = grid(headers, rows, left={0, len(headers) - 1})
    lines = table.splitlines()
    if any(len(line) > width for line in lines):
        lines = [_fit(line, width) for line in lines]
        lines.append(
            _fit(f"(… cut at {width} columns: --verbose gives flags and reasons in full)", width)
        )
    return "\n".join(lines)


def points_csv(
    rows: Sequence[tuple[int, str, PointResult, Evidence]],
) -> str:
    """``results --csv``: one row per point (run id, label, point, evidence)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for run_id, label, r, ev in rows:
        writer.writerow(
            {
                "run_id": run_id,
                "label": label,
                **{k: v for k, v in point_json(r, ev).items() if k in CSV_FIELDS and k != "flags"},
                "interval_pct": ev.interval_pct,
                "errors": ev.errors,
                "server_cpu_pct": ev.server_cpu_pct,
                "client_cpu_pct": ev.client_cpu_pct,
                "tls_full": ev.tls_full,
                "tls_reused": ev.tls_reused,
                "latency_p50_ms": ev.latency("p50"),
                "latency_p90_ms": ev.latency("p90"),
                "latency_p99_ms": ev.latency("p99"),
                **_csv_ceiling(ev),
                **_csv_pair(r),
                "flags": ";".join(r.flags),
            }
        )
    return out.getvalue()


def _csv_pair(r: PointResult) -> dict[str, Any]:
    """A paired leg's pair in the CSV's ``pair_*`` columns (empty for unpaired points)."""
    pair = pair_summary(r)
    if pair is None:
        return {}
    return {
        "pair_kind": pair["kind"],
        "pair_role": pair["role"],
        "pair_partner": pair["partner"],
        "pair_figure": pair["figure"],
        "pair_pct": pair["pct"],
        "pair_low_pct": pair["low_pct"],
        "pair_high_pct": pair["high_pct"],
        "pairs": pair["pairs"],
    }


def _csv_ceiling(ev: Evidence) -> dict[str, Any]:
    """The closest known ceiling of a point (highest share): its limit, what it is, the
    share; else the first one's reason for not being known."""
    closest = ev.closest_ceiling()
    if closest is not None:
        c = closest.to_dict(ev.value)
        return {"ceiling": c["limit"], "ceiling_of": c["what"], "ceiling_share": c["share"]}
    if ev.ceilings:
        return {"ceiling": None, "ceiling_of": ev.ceilings[0].note, "ceiling_share": None}
    return {"ceiling": None, "ceiling_of": "", "ceiling_share": None}


_NOT_LIMITS = ("noisy", "virtualized-host", "emulated", "drift")


def no_valid_figure(
    points: Sequence[PointResult], evidence: Mapping[PointKey, Evidence], width: int = WIDTH
) -> list[str]:
    """When a run measured points but none is valid for sizing, one paragraph (wrapped to
    ``width``): what limited each point, with the server's and the client's CPU; why a
    small host cannot saturate the article's load-balancing workload; and what would give
    a valid figure, including the command for this host. Empty when a figure is valid or
    nothing was measured."""
    import textwrap

    tried = [p for p in points if p.status in (Status.MEASURED, Status.INVALID)]
    if not tried or any(p.status is Status.MEASURED for p in points):
        return []
    limits = []
    for p in tried:
        ev = evidence.get(p.key, NO_EVIDENCE)
        why = [f for f in p.flags if f not in _NOT_LIMITS] or ["invalid"]
        cpu = []
        if ev.server_cpu_pct is not None:
            cpu.append(f"server {ev.server_cpu_pct:.0f}% busy")
        if ev.client_cpu_pct is not None:
            cpu.append(f"client {ev.client_cpu_pct:.0f}%")
        limits.append(
            f"{p.key.profile} at {p.key.cores} core{'s' if p.key.cores != 1 else ''}: "
            + ", ".join(why)
            + (f" ({', '.join(cpu)})" if cpu else "")
        )
    text = [f"No figure of this run is valid for sizing: {'; '.join(limits)}."]
    shared = [
        p for p in tried if any(u.shares_with for u in (p.metadata.env.upstreams or ()))
    ]  # the upstream web servers ran on the client's CPUs (a host too small to part them)
    if shared:
        text.append(
            "The article's workload needs three things on the CPUs: the nginx under test, the "
            "load generator and the web servers it load-balances to. On a host this small the "
            "last two share the client's core, and the server cannot be saturated alone."
        )
    replay = all(p.key.profile.startswith(CUSTOMER_PREFIX) for p in tried)
    if replay or all(p.metadata.workload.role == "web" for p in tried):
        # the static-file profiles themselves (or the customer's own mix) were not valid:
        # suggesting the static profiles leads nowhere (issue 62: a hint must be able to
        # succeed where it is given)
        text.append(
            "For a valid figure, add a client host to the inventory (inventories/lab.yml shows "
            "how), so that the load generator does not share this host's CPUs, or measure when "
            "nothing else runs on the host."
        )
    else:
        text.append(
            "For a valid figure, add a client host (and an upstream host) to the inventory "
            "(inventories/lab.yml shows how), or measure the static-file profiles, which need "
            "no upstream (nginx serves the file itself: not the article's workload): "
            "sizing run --cores 1 --profile static-rps,static-tps"
        )
    floors = [p for p in tried if client_floor(p)]
    if floors:
        names = ", ".join(f"{p.key.profile} at {p.key.cores}c" for p in floors)
        text.append(
            f"Until then {names} {'is a lower bound' if len(floors) == 1 else 'are lower bounds'}"
            ": the load generator alone held the server down, so the server carries at least "
            'what it served. `sizing recommend` sizes on it as "≥" (a fleet on it may be '
            "larger than needed, never smaller), and says so."
        )
    else:
        text.append(
            "Until then `sizing recommend` sizes from the published reference data, and says so."
        )
    out: list[str] = []
    for t in text:
        out.extend(textwrap.wrap(t, width=width, break_on_hyphens=False, break_long_words=False))
    return out


def left_out_by_default(points: Sequence[PointResult], width: int = WIDTH) -> list[str]:
    """When every valid figure of a run is from a virtualized host (a container or VM
    measured as bare metal) or an emulated guest, one paragraph (wrapped to ``width``):
    that ``recommend`` leaves them out unless asked, and the command that sizes on them,
    labelled. Empty otherwise."""
    import textwrap

    valid = [p for p in points if p.status is Status.MEASURED]
    if not valid:
        return []
    kinds = {"virtualized-host": "--include-virtualized", "emulated": "--include-emulated"}
    left = [p for p in valid if any(f in p.flags for f in kinds)]
    if len(left) < len(valid):
        return []
    flags = sorted({f for p in left for f in p.flags if f in kinds})
    what = " and ".join(
        {
            "virtualized-host": f"a {VIRTUALIZED_HOST_WORDS}",
            "emulated": "a software-emulated guest",
        }[f]
        for f in flags
    )
    options = " ".join(kinds[f] for f in flags)
    # the demand the figures can size: a run whose valid figures are all handshakes has no
    # RPS figure, and --rps would quietly size from the reference data
    tls = {p.unit == "handshakes/s" for p in left}
    demand = " ".join(
        d for d, is_tls in (("--rps 200000", False), ("--tps 2000", True)) if is_tls in tls
    )
    text = (
        f"Every valid figure of this run is from {what}: `sizing recommend` leaves such figures "
        "out unless asked, and sizes from the published reference data meanwhile. To size on "
        "them, labelled as what they are (and priced with the article's catalog when the "
        f"inventory declares no sizing_price_usd): sizing recommend {demand} {options} "
        "--article-prices"
    )
    return textwrap.wrap(text, width=width, break_on_hyphens=False, break_long_words=False)


def ceiling_lines(
    points: Sequence[PointResult], evidence: Mapping[PointKey, Evidence], width: int = WIDTH
) -> list[str]:
    """How close each measured figure came to what the hardware allows (the crypto ceiling
    of a handshake figure, the NIC's of any figure), or why that ceiling is not known;
    wrapped to ``width``. Empty when no point has a ceiling to speak of."""
    import textwrap

    out: list[str] = []
    for p in points:
        if p.value is None:
            continue
        cs = evidence.get(p.key, NO_EVIDENCE).ceilings
        if not cs:
            continue
        name = f"{p.key.host} {p.key.cores}c {p.key.ht} {p.key.profile}"
        said = "; ".join(c.words(p.value, p.unit) for c in cs)
        out += textwrap.wrap(
            f"{name}: {said}", width=width, subsequent_indent="    ", break_on_hyphens=False
        )
    if not out:
        return []
    return ["How close to the limit (what the hardware allows at most):", *out]
