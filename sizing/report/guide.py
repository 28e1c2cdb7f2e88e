"""What the sizing guide shows, prepared from the store, the reference data and the engine.

Pure: no I/O, no CLI, no matplotlib. :func:`build_guide` takes the cost catalog, the
reference dataset, the figures chosen by ``--source`` (a :class:`sizing.engine.Selection`),
the stored runs the guide covers and the request (title, customer, target demand...) and
returns a :class:`Guide`: every number already formatted for print and labelled with its
provenance (``measured``, ``reference``, ``extrapolated`` or ``emulated``), plus the
engine's own outputs (table, fits, recommendation) for the charts.

Nothing here invents a figure: each number comes from the store (a point, a sample or a
run's host facts), the reference dataset, the catalog, or the engine computing on those.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from sizing.catalog import Reference
from sizing.engine import (
    Configuration,
    CostCatalog,
    Demand,
    Recommendation,
    Selection,
    recommend,
)
from sizing.engine.figures import series_order
from sizing.engine.table import SizingTable, build_table, overhead_pct
from sizing.model import Figure, Sample, Status
from sizing.store import RunRecord, StoredPoint

PLATFORM_LABELS = {
    "baremetal": "Bare metal",
    "hypervisor": "Hypervisor",
    "kubernetes": "Kubernetes",
}
PROFILE_LABELS = {"rps": "RPS", "tps": "SSL TPS"}
PROFILE_UNITS = {"rps": "requests/s", "tps": "handshakes/s"}
MARKS = {"measured": "m", "reference": "r", "extrapolated": "x", "emulated": "e"}
PROVENANCE_TEXT = {
    "measured": "measured with sizing on the inventory's hosts",
    "reference": "published reference data",
    "extrapolated": "extrapolated by the fitted scaling model",
    "emulated": "measured in a software-emulated guest (not real hardware)",
}
FLAG_TEXT = {
    "client-bound": "the load generator saturated before the server",
    "connections": "fewer connections were established than asked",
    "errors": "socket errors or non-2xx/3xx responses",
    "reused-sessions": "TLS sessions were resumed in a handshake test",
    "no-tls-proof": "no proof that the TLS handshakes were full ones",
    "unstable": "CPU was stolen or throttled while throughput dropped",
    "noisy": "the 95% interval stayed wider than the target",
    "emulated": "software-emulated guest (QEMU TCG), not real hardware",
    "network-bound": "the network interface, not the CPU, set the figure",
    "virtualized-host": "the 'bare metal' host is itself a virtual machine or container",
    "generator-lag": "the load generator sent below the offered rate at some rates",
    "no-knee": "latency stayed flat over the whole sweep: the knee lies above it",
    "slo-not-converged": "the search for the SLO capacity did not converge",
}
STATUS_TEXT = {
    "measured": "measured",
    "invalid": "invalid (not used)",
    "skipped": "skipped",
    "failed": "failed",
}


# -- inputs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RunData:
    """One stored run with its points and each point's samples (by point id)."""

    record: RunRecord
    points: tuple[StoredPoint, ...]
    samples: Mapping[int, tuple[tuple[int, Sample], ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class GuideRequest:
    """What the guide was asked for (``sizing guide`` options)."""

    title: str = "NGINX Sizing Guide"
    customer: str = ""
    date: str = ""
    paper: str = "a4"  # a4 | letter
    source: str = "both"  # what --source asked for
    rps: float | None = None
    tps: float | None = None
    headroom: float = 0.2  # a fraction
    platform: str = "any"
    include_emulated: bool = False
    tool_version: str = ""

    @property
    def demand(self) -> Demand | None:
        if self.rps is None and self.tps is None:
            return None
        return Demand(rps=self.rps, tps=self.tps, headroom=self.headroom)


# -- outputs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TCell:
    """A table cell: its text, its provenance (empty for labels) and its alignment."""

    text: str
    source: str = ""
    numeric: bool = True

    @property
    def mark(self) -> str:
        return MARKS.get(self.source, "")


@dataclass(frozen=True)
class TableBlock:
    """A printed table: headers, rows of cells and footnotes."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[TCell, ...], ...]
    notes: tuple[str, ...] = ()
    caption: str = ""
    # Grouped headers for print: (label, sub-headers); no sub-headers: a single column.
    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "headers": list(self.headers),
            "rows": [[c.text for c in r] for r in self.rows],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Fact:
    """A label and its value (a line of the methodology)."""

    label: str
    value: str


@dataclass(frozen=True)
class Headline:
    """A headline figure of the executive summary."""

    label: str
    value: str
    detail: str
    source: str

    @property
    def mark(self) -> str:
        return MARKS.get(self.source, "")


@dataclass(frozen=True)
class RecommendationView:
    """The recommendation for the requested demand, ready to print."""

    demand: str
    feasible: bool
    headline: str
    facts: tuple[Fact, ...]
    figures: tuple[Fact, ...]
    explanation: tuple[str, ...]
    alternatives: TableBlock | None
    result: Recommendation


@dataclass(frozen=True)
class HostView:
    """One host of a run and what its facts say."""

    name: str
    role: str
    run_id: int
    facts: tuple[Fact, ...]


@dataclass(frozen=True)
class Methodology:
    """How the figures were obtained: hosts, software, settings, nginx configuration."""

    measured: bool
    hosts: tuple[HostView, ...]
    workloads: TableBlock | None
    settings: tuple[Fact, ...]
    nginx_directives: tuple[str, ...]
    nginx_per_point: tuple[Fact, ...]
    reference: tuple[Fact, ...]
    models: tuple[Fact, ...]
    cost: tuple[Fact, ...]


@dataclass(frozen=True)
class CpuPoint:
    """One timed repetition: its throughput and the server CPU it used."""

    platform: str
    cores: int
    ht: str
    profile: str
    value: float
    busy: float  # mean busy share (%) of the server's pinned CPUs
    status: str
    emulated: bool
    run_id: int
    host: str


@dataclass(frozen=True)
class OverheadPoint:
    """Virtualization overhead at one core count; an interval when both legs have one."""

    ht: str
    profile: str
    cores: int
    pct: float
    low: float | None
    high: float | None
    source: str


@dataclass(frozen=True)
class LatencySeries:
    """One latency point's curve (offered rate against latency and server CPU), for the
    charts; taken from :func:`sizing.engine.slo.latency_chart_data`."""

    label: str
    platform: str
    cores: int
    ht: str
    profile: str
    run_id: int
    host: str
    status: str
    emulated: bool
    rates: tuple[float, ...]
    mean_ms: tuple[float, ...]
    p95_ms: tuple[float, ...]
    server_busy: tuple[float | None, ...]
    knee_rate: float | None
    slo: str | None  # "p95=10ms", as stored
    slo_stat: str | None
    slo_limit_ms: float | None
    slo_capacity: float | None


@dataclass(frozen=True)
class LatencySection:
    """Latency under steady load: the curves, a summary, a table of rates per point and,
    for soak runs whose latency or steal jumped, the per-repetition tables."""

    series: tuple[LatencySeries, ...]
    summary: TableBlock
    rates: tuple[TableBlock, ...]
    soak: tuple[TableBlock, ...]


@dataclass(frozen=True)
class Guide:
    """Everything the templates and the charts need."""

    request: GuideRequest
    title: str
    customer: str
    date: str
    paper: str
    inventories: tuple[str, ...]
    run_ids: tuple[int, ...]
    basis: str  # measured | reference | both
    basis_text: str
    reference_only: bool
    citation: str
    reference_url: str
    currency: str
    cost_basis: str
    headlines: tuple[Headline, ...]
    recommendation: RecommendationView | None
    tables: tuple[TableBlock, ...]
    table: SizingTable
    selection: Selection
    overhead: tuple[OverheadPoint, ...]
    overhead_table: TableBlock | None
    emulated_table: TableBlock | None
    cpu_points: tuple[CpuPoint, ...]
    methodology: Methodology
    validity: TableBlock | None
    provenance: TableBlock
    runs: tuple[RunData, ...]
    legend: tuple[Fact, ...]
    latency: LatencySection | None = None

    def to_dict(self) -> dict[str, Any]:
        """The guide's data as one JSON-able document (for tests and debugging)."""
        return {
            "title": self.title,
            "customer": self.customer,
            "date": self.date,
            "inventories": list(self.inventories),
            "run_ids": list(self.run_ids),
            "basis": self.basis,
            "headlines": [h.__dict__ for h in self.headlines],
            "tables": [t.to_dict() for t in self.tables],
            "validity": None if self.validity is None else self.validity.to_dict(),
            "provenance": self.provenance.to_dict(),
            "latency": None
            if self.latency is None
            else {
                "summary": self.latency.summary.to_dict(),
                "rates": [t.to_dict() for t in self.latency.rates],
                "soak": [t.to_dict() for t in self.latency.soak],
            },
        }


# -- formatting -------------------------------------------------------------------------


def number(v: float | None) -> str:
    """A throughput for print: thousands separated, no decimals (``48,000``)."""
    if v is None:
        return "–"
    return f"{v:,.0f}"


def money(v: float | None, currency: str = "USD") -> str:
    """A price: whole units from 100 on, cents below (``$2,200``, ``$15.63``)."""
    if v is None:
        return "–"
    sign = "$" if currency == "USD" else f"{currency} "
    return f"{sign}{v:,.0f}" if abs(v) >= 100 else f"{sign}{v:,.2f}"


def percent(v: float | None, digits: int = 1) -> str:
    """A percentage (``12.5%``)."""
    if v is None:
        return "–"
    return f"{v:.{digits}f}%"


def series_label(platform: str, ht: str, profile: str, *, with_ht: bool = True) -> str:
    """``Bare metal RPS (HT off)``."""
    text = f"{PLATFORM_LABELS.get(platform, platform)} {PROFILE_LABELS.get(profile, profile)}"
    return f"{text} (HT {ht})" if with_ht else text


def cell_source(source: str, emulated: bool) -> str:
    """The provenance shown for a figure: emulated beats measured."""
    return "emulated" if emulated and source == "measured" else source


def inventory_name(path: str) -> str:
    """An inventory's name for the title page: the file name without ``.yml``."""
    name = PurePath(path).name
    for suffix in (".yml", ".yaml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name or path


# -- the table --------------------------------------------------------------------------


def _fig_cell(table: SizingTable, cores: int, platform: str, ht: str, profile: str) -> TCell:
    row = next(r for r in table.rows if r.cores == cores)
    c = row.cell(platform, ht, profile)
    if c is None:
        return TCell("–")
    return TCell(number(c.value), cell_source(c.source, c.emulated))


def _cost_cell(table: SizingTable, cores: int, platform: str, ht: str, profile: str) -> TCell:
    row = next(r for r in table.rows if r.cores == cores)
    c = row.cell(platform, ht, profile)
    if c is None:
        return TCell("–")
    return TCell(money(c.cost_per_unit, table.currency), cell_source(c.source, c.emulated))


def _overhead_cell(table: SizingTable, cores: int, ht: str, profile: str) -> TCell:
    row = next(r for r in table.rows if r.cores == cores)
    c = row.cell("hypervisor", ht, profile)
    if c is None or c.overhead_pct is None:
        return TCell("–")
    return TCell(percent(c.overhead_pct), cell_source(c.source, c.emulated))


def sizing_tables(table: SizingTable, catalog: CostCatalog) -> list[TableBlock]:
    """The article's table per HT mode, its cost and overhead companion, and Kubernetes."""
    cur = table.currency
    keys = {s.key for s in table.series}
    blocks: list[TableBlock] = []
    cost_note = (
        f"Cost per unit = server cost ({table.cost_basis}) ÷ throughput of one server."
        if table.cost_basis
        else "Cost per unit = server cost ÷ throughput of one server."
    )
    overhead_note = (
        "Virtualization overhead = (bare metal − hypervisor) ÷ bare metal, shown only where "
        "both figures come from the same source and neither is extrapolated."
    )
    for ht in ("off", "on"):
        if not any(k[0] in ("baremetal", "hypervisor") and k[1] == ht for k in keys):
            continue
        rows = tuple(
            (
                TCell(money(r.hardware_cost, cur)),
                TCell(str(r.cores)),
                _fig_cell(table, r.cores, "baremetal", ht, "rps"),
                _fig_cell(table, r.cores, "hypervisor", ht, "rps"),
                _fig_cell(table, r.cores, "baremetal", ht, "tps"),
                _fig_cell(table, r.cores, "hypervisor", ht, "tps"),
            )
            for r in table.rows
        )
        blocks.append(
            TableBlock(
                title=f"Throughput per server, traditional architecture, hyper-threading {ht}",
                headers=(
                    "Hardware cost",
                    "CPU cores",
                    "RPS – Bare metal",
                    "RPS – Hypervisor",
                    "SSL TPS – Bare metal",
                    "SSL TPS – Hypervisor",
                ),
                rows=rows,
                notes=(
                    "RPS: requests per second; SSL TPS: new TLS connections (full handshakes) "
                    "per second.",
                ),
                groups=(
                    ("Hardware cost", ()),
                    ("CPU cores", ()),
                    ("RPS", ("Bare metal", "Hypervisor")),
                    ("SSL TPS", ("Bare metal", "Hypervisor")),
                ),
            )
        )
        cost_rows = tuple(
            (
                TCell(str(r.cores)),
                _cost_cell(table, r.cores, "baremetal", ht, "rps"),
                _cost_cell(table, r.cores, "hypervisor", ht, "rps"),
                _cost_cell(table, r.cores, "baremetal", ht, "tps"),
                _cost_cell(table, r.cores, "hypervisor", ht, "tps"),
                _overhead_cell(table, r.cores, ht, "rps"),
                _overhead_cell(table, r.cores, ht, "tps"),
            )
            for r in table.rows
        )
        blocks.append(
            TableBlock(
                title=f"Cost per throughput and virtualization overhead, hyper-threading {ht}",
                headers=(
                    "CPU cores",
                    "Cost per 1k RPS – Bare metal",
                    "Cost per 1k RPS – Hypervisor",
                    "Cost per 100 SSL TPS – Bare metal",
                    "Cost per 100 SSL TPS – Hypervisor",
                    "Overhead RPS",
                    "Overhead SSL TPS",
                ),
                rows=cost_rows,
                notes=(cost_note, overhead_note),
                groups=(
                    ("CPU cores", ()),
                    (f"Cost per 1k RPS ({cur})", ("Bare metal", "Hypervisor")),
                    (f"Cost per 100 SSL TPS ({cur})", ("Bare metal", "Hypervisor")),
                    ("Virtualization overhead", ("RPS", "SSL TPS")),
                ),
            )
        )
    if any(k[0] == "kubernetes" for k in keys):
        rows = tuple(
            (
                TCell(str(r.cores)),
                _fig_cell(table, r.cores, "kubernetes", "off", "rps"),
                _fig_cell(table, r.cores, "kubernetes", "off", "tps"),
                _fig_cell(table, r.cores, "kubernetes", "on", "tps"),
                TCell(money(r.hardware_cost, cur)),
                _cost_cell(table, r.cores, "kubernetes", "off", "rps"),
            )
            for r in table.rows
        )
        blocks.append(
            TableBlock(
                title="Kubernetes architecture (NGINX Ingress Controller)",
                headers=(
                    "CPU cores",
                    "RPS",
                    "SSL TPS (RSA)",
                    "SSL TPS (RSA) with hyper-threading",
                    "Hardware cost",
                    "Cost per 1k RPS",
                ),
                rows=rows,
                notes=(cost_note,),
                groups=(
                    ("CPU cores", ()),
                    ("RPS", ()),
                    ("SSL TPS (RSA)", ("HT off", "HT on")),
                    ("Hardware cost", ()),
                    (f"Cost per 1k RPS ({cur})", ()),
                ),
            )
        )
    return blocks


def overhead_points(table: SizingTable) -> list[OverheadPoint]:
    """Virtualization overhead per HT, profile and core count, with an interval when the
    two legs are measured with confidence intervals.

    The interval is conservative: the lowest overhead pairs the bare-metal interval's low
    end with the hypervisor interval's high end, the highest the other way round.
    """
    series = {s.key: s for s in table.series}
    out: list[OverheadPoint] = []
    for (platform, ht, profile), hv in series.items():
        bm = series.get(("baremetal", ht, profile))
        if platform != "hypervisor" or bm is None:
            continue
        for row in table.rows:
            f_bm, f_hv = bm.at(row.cores), hv.at(row.cores)
            pct = overhead_pct(f_bm, f_hv)
            if pct is None:
                continue
            low = high = None
            if None not in (f_bm.ci_low, f_bm.ci_high, f_hv.ci_low, f_hv.ci_high):
                assert f_bm.ci_low is not None and f_bm.ci_high is not None
                assert f_hv.ci_low is not None and f_hv.ci_high is not None
                if f_bm.ci_low > 0 and f_bm.ci_high > 0:
                    low = (1.0 - f_hv.ci_high / f_bm.ci_low) * 100.0
                    high = (1.0 - f_hv.ci_low / f_bm.ci_high) * 100.0
            out.append(
                OverheadPoint(
                    ht=ht,
                    profile=profile,
                    cores=row.cores,
                    pct=pct,
                    low=low,
                    high=high,
                    source=cell_source(f_bm.source, f_bm.emulated or f_hv.emulated),
                )
            )
    return out


def overhead_table(points: Sequence[OverheadPoint]) -> TableBlock | None:
    """The overhead with its interval, one row per HT, profile and core count.

    Only when some overhead has an interval: the cost table already shows the rest.
    """
    if not any(p.low is not None for p in points):
        return None
    rows = tuple(
        (
            TCell(PROFILE_LABELS.get(p.profile, p.profile), numeric=False),
            TCell(p.ht, numeric=False),
            TCell(str(p.cores)),
            TCell(percent(p.pct), p.source),
            TCell(
                "–" if p.low is None or p.high is None else f"{percent(p.low)} to {percent(p.high)}"
            ),
        )
        for p in sorted(points, key=lambda p: (p.ht, p.profile, p.cores))
    )
    return TableBlock(
        title="Virtualization overhead per core count",
        headers=("Metric", "HT", "CPU cores", "Overhead", "Interval (95% per leg)"),
        rows=rows,
        notes=(
            "The interval combines the 95% confidence intervals of the bare-metal and the "
            "hypervisor figure (lowest: bare-metal low against hypervisor high; highest: "
            "the other way round). Reference figures carry no interval.",
        ),
    )


# -- the executive summary ---------------------------------------------------------------


def headlines(table: SizingTable) -> list[Headline]:
    """The few figures a reader takes away, each with its provenance."""
    cells = [c for r in table.rows for c in r.cells]
    out: list[Headline] = []
    rps = [c for c in cells if c.profile == "rps" and c.platform in ("baremetal", "hypervisor")]
    if rps:
        best = min(rps, key=lambda c: (c.cost_per_unit, c.source == "extrapolated"))
        out.append(
            Headline(
                "Lowest cost per 1k RPS",
                money(best.cost_per_unit, table.currency),
                f"{PLATFORM_LABELS[best.platform]}, {best.cores} cores, HT {best.ht}",
                cell_source(best.source, best.emulated),
            )
        )
    for profile in ("rps", "tps"):
        one = [
            c for c in cells if c.profile == profile and c.platform == "baremetal" and c.cores == 1
        ]
        if one:
            c = min(one, key=lambda c: c.ht)
            out.append(
                Headline(
                    f"{PROFILE_LABELS[profile]} per core, bare metal",
                    number(c.value),
                    f"1 core, HT {c.ht}, {PROFILE_UNITS[profile]}",
                    cell_source(c.source, c.emulated),
                )
            )
    for profile in ("rps", "tps"):
        ov = [
            c.overhead_pct
            for c in cells
            if c.profile == profile and c.platform == "hypervisor" and c.overhead_pct is not None
        ]
        src = {
            cell_source(c.source, c.emulated)
            for c in cells
            if c.profile == profile and c.platform == "hypervisor" and c.overhead_pct is not None
        }
        if ov:
            value = percent(min(ov)) if len(ov) == 1 else f"{min(ov):.0f}–{max(ov):.0f}%"
            out.append(
                Headline(
                    f"Virtualization overhead, {PROFILE_LABELS[profile]}",
                    value,
                    f"range over {len(ov)} core count{'s' if len(ov) > 1 else ''}",
                    src.pop() if len(src) == 1 else "",
                )
            )
    return out


def recommendation_view(result: Recommendation, currency: str) -> RecommendationView:
    """The recommendation, its figures and the next cheapest alternatives, for print."""
    best = result.recommendation
    demand = result.demand.describe()
    if best is None:
        return RecommendationView(
            demand=demand,
            feasible=False,
            headline="No configuration in the catalog carries this demand.",
            facts=(),
            figures=(),
            explanation=result.explanation,
            alternatives=None,
            result=result,
        )
    facts = [
        Fact("Configuration", _config_text(best)),
        Fact("Total cost", money(best.total_cost, currency)),
        Fact("Cost per server", money(best.cost_per_server, currency)),
    ]
    if best.capacity_rps is not None:
        facts.append(Fact("RPS capacity", f"{number(best.capacity_rps)} requests/s"))
    if best.capacity_tps is not None:
        facts.append(Fact("SSL TPS capacity", f"{number(best.capacity_tps)} handshakes/s"))
    facts.append(Fact("CPU utilisation at the target", percent(best.utilization * 100.0)))
    if best.counted_servers != best.servers:
        facts.append(Fact("Servers counted on", f"{best.counted_servers} (one spare)"))
    figures = tuple(
        Fact(
            f"{PROFILE_LABELS.get(f.profile, f.profile)} at {f.cores} cores",
            f"{number(f.value)} [{cell_source(f.source, f.emulated)}"
            + (f": {f.origin}" if f.origin else "")
            + "]",
        )
        for f in best.figures
    )
    alts = result.alternatives[:5]
    alternatives = None
    if alts:
        alternatives = TableBlock(
            title="Next cheapest configurations",
            headers=("Configuration", "Total cost", "RPS capacity", "SSL TPS capacity", "CPU use"),
            rows=tuple(
                (
                    TCell(_config_text(c), "extrapolated" if c.extrapolated else "", False),
                    TCell(money(c.total_cost, currency)),
                    TCell(number(c.capacity_rps)),
                    TCell(number(c.capacity_tps)),
                    TCell(percent(c.utilization * 100.0)),
                )
                for c in alts
            ),
        )
    return RecommendationView(
        demand=demand,
        feasible=True,
        headline=f"{_config_text(best)} for {money(best.total_cost, currency)}",
        facts=tuple(facts),
        figures=figures,
        explanation=result.explanation,
        alternatives=alternatives,
        result=result,
    )


def _config_text(c: Configuration) -> str:
    servers = f"{c.servers} server{'s' if c.servers != 1 else ''}"
    return (
        f"{servers}, {PLATFORM_LABELS.get(c.platform, c.platform).lower()}, "
        f"{c.cores_per_server} cores each, HT {c.ht}"
    )


# -- validity and provenance ------------------------------------------------------------


def validity_table(runs: Sequence[RunData]) -> TableBlock | None:
    """Every point that was not used as measured, or was used with a warning flag."""
    rows: list[tuple[TCell, ...]] = []
    for run in runs:
        for p in run.points:
            r = p.result
            if r.status is Status.MEASURED and not r.flags:
                continue
            flags = ", ".join(r.flags)
            reason = r.reason or "; ".join(FLAG_TEXT.get(f, f) for f in r.flags)
            if r.status is Status.MEASURED and "emulated" in r.flags:
                status = "measured, emulated (not used for sizing by default)"
            elif r.status is Status.MEASURED:
                status = "measured, used with a warning"
            else:
                status = STATUS_TEXT[str(r.status)]
            rows.append(
                (
                    TCell(str(run.record.id)),
                    TCell(r.key.host, numeric=False),
                    TCell(r.key.platform, numeric=False),
                    TCell(str(r.key.cores)),
                    TCell(r.key.ht, numeric=False),
                    TCell(PROFILE_LABELS.get(r.key.profile, r.key.profile), numeric=False),
                    TCell(status, numeric=False),
                    TCell(number(r.value) if r.value is not None else "–"),
                    TCell(flags or "–", numeric=False),
                    TCell(reason or "–", numeric=False),
                )
            )
    if not rows:
        return None
    seen_flags = sorted(
        {f for run in runs for p in run.points for f in p.result.flags if f in FLAG_TEXT}
    )
    return TableBlock(
        title="Points skipped, invalid, failed or flagged",
        headers=(
            "Run",
            "Host",
            "Platform",
            "Cores",
            "HT",
            "Metric",
            "Status",
            "Value",
            "Flags",
            "Reason",
        ),
        rows=tuple(rows),
        notes=tuple(f"{f}: {FLAG_TEXT[f]}." for f in seen_flags),
    )


def provenance_table(table: SizingTable) -> TableBlock:
    """Every figure of the sizing table, its provenance and where it comes from."""
    rows: list[tuple[TCell, ...]] = []
    fits = {s.key: s for s in table.series}
    for s in sorted(table.series, key=lambda s: series_order(s.key)):
        for r in table.rows:
            c = r.cell(*s.key)
            if c is None:
                continue
            src = cell_source(c.source, c.emulated)
            observed = next((f for f in s.observed if f.cores == c.cores), None)
            origin = c.origin
            if c.source == "extrapolated":
                origin = f"{fits[s.key].fit.describe()}, from the {s.basis} figures"
            interval = "–"
            if observed is not None and observed.ci_low is not None and observed.ci_high:
                interval = f"{number(observed.ci_low)} to {number(observed.ci_high)}"
            rows.append(
                (
                    TCell(series_label(*s.key), numeric=False),
                    TCell(str(c.cores)),
                    TCell(number(c.value), src),
                    TCell(src, numeric=False),
                    TCell(interval),
                    TCell(origin or "–", numeric=False),
                )
            )
    return TableBlock(
        title="Provenance of every figure",
        headers=("Series", "Cores", "Value", "Provenance", "95% interval", "Source"),
        rows=tuple(rows),
        notes=tuple(f"{k}: {v}." for k, v in PROVENANCE_TEXT.items()),
    )


def emulated_table(figures: Sequence[Figure], included: bool) -> TableBlock | None:
    """Figures from software-emulated guests, shown and labelled, used only when asked."""
    if not figures:
        return None
    rows = tuple(
        (
            TCell(series_label(f.platform, f.ht, f.profile), numeric=False),
            TCell(str(f.cores)),
            TCell(number(f.value), "emulated"),
            TCell(f.unit, numeric=False),
            TCell(f.origin or "–", numeric=False),
        )
        for f in sorted(
            figures, key=lambda f: (series_order((f.platform, f.ht, f.profile)), f.cores)
        )
    )
    note = (
        "These figures are used in this guide's sizing because it was asked for."
        if included
        else "These figures are not used for sizing: a software-emulated guest (QEMU TCG) "
        "runs far slower than a guest on a real hypervisor."
    )
    return TableBlock(
        title="Figures measured in software-emulated guests",
        headers=("Series", "Cores", "Value", "Unit", "Source"),
        rows=rows,
        notes=(note,),
    )


# -- CPU use per repetition ------------------------------------------------------------


def cpu_points(runs: Sequence[RunData]) -> list[CpuPoint]:
    """Throughput and server CPU busy share of every timed repetition (warm-ups left out)."""
    out: list[CpuPoint] = []
    for run in runs:
        for p in run.points:
            r = p.result
            if r.status not in (Status.MEASURED, Status.INVALID):
                continue
            if r.metadata.get("mode") == "fixed-rate":
                continue  # latency windows (value: p95 ms), charted against the offered rate
            family = "baremetal" if r.key.platform == "baremetal" else "hypervisor"
            for rep, s in run.samples.get(p.id, ()):
                if rep == 0 or s.metric.endswith(".client"):
                    continue
                cpu = s.metadata.get("server_cpu") or {}
                busy = cpu.get("busy") if isinstance(cpu, dict) else None
                if busy is None:
                    continue
                out.append(
                    CpuPoint(
                        platform=family,
                        cores=r.key.cores,
                        ht=r.key.ht,
                        profile=r.key.profile,
                        value=s.value,
                        busy=float(busy),
                        status=str(r.status),
                        emulated="emulated" in r.flags,
                        run_id=run.record.id,
                        host=r.key.host,
                    )
                )
    return out


# -- latency under steady load -----------------------------------------------------------

LATENCY_STATUSES = (Status.MEASURED, Status.INVALID)


def latency_ms(v: float | None) -> str:
    """A latency for print: three significant figures or so (``0.84``, ``12.5``, ``1,204``)."""
    if v is None:
        return "–"
    if abs(v) < 10:
        return f"{v:.2f}"
    if abs(v) < 100:
        return f"{v:.1f}"
    return f"{v:,.0f}"


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
        return "–"
    lo, hi = min(rates), max(rates)
    return f"{number(lo)}–{number(hi)} ({len(rates)} rates)" if lo != hi else number(lo)


def latency_section(runs: Sequence[RunData]) -> LatencySection | None:
    """The latency points of ``runs`` (measured or invalid, the newest per platform, cores,
    HT and profile) as chart series and tables; None when the runs hold none."""
    from sizing.engine.slo import latency_chart_data

    newest: dict[tuple[str, int, str, str], tuple[dict[str, Any], Mapping[str, Any]]] = {}
    for run in runs:
        for p in run.points:
            if p.result.status not in LATENCY_STATUSES:
                continue
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
        if s.knee_rate is not None:
            knee_text = TCell(number(s.knee_rate), src)
        elif "no-knee" in item["flags"]:
            knee_text = TCell(f"above {number(max(s.rates))}")
        else:
            knee_text = TCell("–")
        if s.slo is None:
            cap_text = TCell("–")
        elif s.slo_capacity is None:
            cap_text = TCell("no rate met it")
        else:
            cap_text = TCell(number(s.slo_capacity), src)
        objective = f"{s.slo_stat} ≤ {s.slo_limit_ms:g} ms" if s.slo_stat else "–"
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
                "Knee: the last offered rate before latency explodes (p95 above three times "
                "its low-load value).",
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
                TCell(", ".join(notes) or "–", numeric=False),
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
    from sizing.validity import STEAL_LIMIT

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
                    TCell(why or "–", numeric=False),
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


# -- methodology -------------------------------------------------------------------------

_DIRECTIVE = re.compile(r"^\s*([a-z_]+)\s+([^;{}]+);\s*$")


def nginx_fixed_directives(template: str) -> list[str]:
    """The directives of ``templates/nginx.conf.j2`` that are the same for every point.

    Lines with a template expression, and lines inside ``{% if %}`` or ``{% macro %}``
    blocks (which depend on the point), are left out.
    """
    out: list[str] = []
    depth = 0
    for line in re.sub(r"\{#.*?#\}", "", template, flags=re.S).splitlines():
        stripped = line.strip()
        if re.match(r"\{%-?\s*(if|macro|for)\b", stripped):
            depth += 1
            continue
        if re.match(r"\{%-?\s*end(if|macro|for)\b", stripped):
            depth = max(0, depth - 1)
            continue
        if depth or "{{" in line or "{%" in line or stripped.startswith("#"):
            continue
        m = _DIRECTIVE.match(line)
        if m and m.group(1) not in ("return", "default_type", "log_format"):
            d = f"{m.group(1)} {m.group(2).strip()};"
            if d not in out:
                out.append(d)
    return out


def _distinct(values: Iterable[Any]) -> list[str]:
    seen: list[str] = []
    for v in values:
        if v is None or v == "" or v == {}:
            continue
        text = str(v)
        if text not in seen:
            seen.append(text)
    return seen


def _join(values: Iterable[Any], empty: str = "not recorded") -> str:
    d = _distinct(values)
    return ", ".join(d) if d else empty


def _host_facts(raw: Mapping[str, Any]) -> list[Fact]:
    lscpu = str(raw.get("lscpu") or "")
    cpus = [ln for ln in lscpu.splitlines() if ln and not ln.startswith("#")]
    cores = {tuple(ln.split(",")[1:3]) for ln in cpus if ln.count(",") >= 2}
    facts = [
        Fact("CPU", str(raw.get("cpu_model") or "not recorded")),
        Fact(
            "CPUs",
            f"{len(cpus)} logical, {len(cores)} physical core{'s' if len(cores) != 1 else ''}"
            if cpus
            else "not recorded",
        ),
    ]
    mem = raw.get("mem_total_kb")
    if mem:
        facts.append(Fact("Memory", f"{int(mem) / 1024 / 1024:.1f} GiB"))
    facts.append(Fact("Operating system", str(raw.get("os") or "not recorded")))
    facts.append(
        Fact("Kernel", f"{raw.get('kernel') or 'not recorded'} ({raw.get('arch') or '?'})")
    )
    hv = raw.get("hypervisor")
    facts.append(Fact("Virtualization", str(hv) if hv else "none detected"))
    if raw.get("governor"):
        facts.append(Fact("CPU frequency governor", str(raw["governor"])))
    if raw.get("smt_control"):
        facts.append(Fact("SMT (hyper-threading) control", str(raw["smt_control"])))
    if raw.get("nginx_version"):
        built = raw.get("nginx_openssl")
        facts.append(
            Fact(
                "nginx",
                str(raw["nginx_version"]) + (f", built with OpenSSL {built}" if built else ""),
            )
        )
    if raw.get("openssl_version"):
        facts.append(Fact("OpenSSL", str(raw["openssl_version"])))
    if raw.get("wrk_version"):
        facts.append(Fact("wrk", str(raw["wrk_version"])))
    return facts


def _workloads(points: Sequence[tuple[RunData, StoredPoint]]) -> TableBlock | None:
    by_profile: dict[str, list[tuple[RunData, StoredPoint]]] = {}
    for run, p in points:
        by_profile.setdefault(p.result.key.profile, []).append((run, p))
    rows: list[tuple[TCell, ...]] = []
    for profile in sorted(by_profile, key=lambda p: (p not in PROFILE_LABELS, p)):
        items = by_profile[profile]
        metas = [p.result.metadata for _, p in items]
        reps = [p.result.repetitions for _, p in items if p.result.repetitions]
        keepalive = _distinct(
            "yes" if m.get("keepalive") else "no" for m in metas if "keepalive" in m
        )
        rows.append(
            (
                TCell(PROFILE_LABELS.get(profile, profile), numeric=False),
                TCell(_join(f"{m['file_size']:,} B" for m in metas if m.get("file_size"))),
                TCell(", ".join(keepalive) if keepalive else "not recorded", numeric=False),
                TCell(_join((m.get("tls_key") for m in metas), "–"), numeric=False),
                TCell(_join(m.get("connections") for m in metas)),
                TCell(_join(f"{float(m['duration_s']):g} s" for m in metas if m.get("duration_s"))),
                TCell(
                    (f"{min(reps)}–{max(reps)}" if min(reps) != max(reps) else str(reps[0]))
                    if reps
                    else "–"
                ),
            )
        )
    if not rows:
        return None
    return TableBlock(
        title="Workloads",
        headers=(
            "Metric",
            "File size",
            "Keep-alive",
            "TLS key",
            "Connections per client",
            "Timed repetition",
            "Repetitions per point",
        ),
        rows=tuple(rows),
    )


def methodology(
    runs: Sequence[RunData],
    reference: Reference,
    table: SizingTable,
    catalog: CostCatalog,
    nginx_template: str,
) -> Methodology:
    """The methodology section, generated from the stored metadata and the engine's fits."""
    used = [
        (run, p)
        for run in runs
        for p in run.points
        if p.result.status in (Status.MEASURED, Status.INVALID)
    ]
    metas = [p.result.metadata for _, p in used]
    hosts: list[HostView] = []
    servers = {p.result.key.host for _, p in used} | {
        str(m.get("target")) for m in metas if m.get("target")
    }
    clients = {str(c) for m in metas for c in (m.get("clients") or [])}
    for run in runs:
        for name, raw in sorted(run.record.environment.items()):
            if not isinstance(raw, dict):
                continue
            role = " and ".join(
                r
                for r, s in (("server (nginx)", servers), ("load generator", clients))
                if name in s
            )
            hosts.append(HostView(name, role or "host", run.record.id, tuple(_host_facts(raw))))
    settings: list[Fact] = []
    per_point: list[Fact] = []
    if used:
        tools = _distinct(
            f"{m.get('tool')} {m.get('tool_version') or ''}".strip() for m in metas if m.get("tool")
        )
        settings.append(Fact("Load generator", ", ".join(tools) or "not recorded"))
        settings.append(Fact("nginx", _join(m.get("nginx_version") for m in metas)))
        settings.append(Fact("OpenSSL (nginx's)", _join(m.get("openssl_version") for m in metas)))
        settings.append(Fact("Kernel", _join(m.get("kernel") for m in metas)))
        settings.append(Fact("CPU model", _join(m.get("cpu_model") for m in metas)))
        warmups = _distinct(
            f"{float(run.record.options['warmup_s']):g} s"
            for run in runs
            if run.record.options.get("warmup_s") is not None
        )
        settings.append(
            Fact(
                "Warm-up before the timed repetitions",
                ", ".join(warmups) if warmups else "the workload profile's default (not stored)",
            )
        )
        rules = _distinct(_stop_rule_text(m.get("stop_rule")) for m in metas if m.get("stop_rule"))
        settings.append(Fact("Repetitions", "; ".join(rules) if rules else "not recorded"))
        settings.append(
            Fact(
                "Figure of a point",
                "the median of its timed repetitions, with a 95% confidence interval "
                "(Student's t) of their mean",
            )
        )
        suites: dict[str, int] = {}
        for m in metas:
            for k, v in (m.get("tls_suites") or {}).items():
                suites[k] = suites.get(k, 0) + int(v)
        if suites:
            settings.append(
                Fact(
                    "TLS protocol and cipher negotiated",
                    "; ".join(
                        f"{k} ({v:,} handshakes)"
                        for k, v in sorted(suites.items(), key=lambda kv: -kv[1])
                    ),
                )
            )
        full = reused = 0
        for run, p in used:
            for rep, s in run.samples.get(p.id, ()):
                if rep and not s.metric.endswith(".client"):
                    full += int(s.metadata.get("tls_full") or 0)
                    reused += int(s.metadata.get("tls_reused") or 0)
        if full or reused:
            settings.append(
                Fact("TLS handshakes logged by nginx", f"{full:,} full, {reused:,} resumed")
            )
        pins = _distinct(
            f"{p.result.key.cores} core{'s' if p.result.key.cores != 1 else ''}: nginx on CPU "
            f"{p.result.metadata.get('server_cpus')}, load generator on CPU "
            + ", ".join(str(v) for v in (p.result.metadata.get("client_cpus") or {}).values())
            for _, p in used
            if p.result.metadata.get("server_cpus") is not None
        )
        if pins:
            per_point.append(Fact("CPU pinning", "; ".join(pins)))
        per_point.append(
            Fact(
                "worker_processes",
                "one worker per measured core, pinned with worker_cpu_affinity",
            )
        )
        keys = _distinct(m.get("tls_key") for m in metas)
        if keys:
            per_point.append(Fact("ssl_certificate", "key type " + ", ".join(keys)))
    ref_facts: list[Fact] = []
    if any(s.basis == "reference" for s in table.series):
        for arch, cond in reference.conditions.items():
            for k, v in cond.items():
                ref_facts.append(Fact(f"{arch.capitalize()}: {k}", " ".join(str(v).split())))
    models = tuple(Fact(series_label(*s.key), s.fit.describe()) for s in table.series)
    cost: list[Fact] = [
        Fact("Cost basis", table.cost_basis or "hardware price"),
        Fact(
            "Catalog",
            catalog.name or "unnamed catalog",
        ),
        Fact(
            "Prices",
            "; ".join(
                f"{o.cores} cores {money(o.price, catalog.currency)}" for o in catalog.servers
            ),
        ),
    ]
    return Methodology(
        measured=bool(used),
        hosts=tuple(hosts),
        workloads=_workloads(used),
        settings=tuple(settings),
        nginx_directives=tuple(nginx_fixed_directives(nginx_template)) if used else (),
        nginx_per_point=tuple(per_point),
        reference=tuple(ref_facts),
        models=models,
        cost=tuple(cost),
    )


def _stop_rule_text(rule: Any) -> str:
    if not isinstance(rule, dict):
        return str(rule)
    if rule.get("fixed"):
        return f"exactly {rule['fixed']} per point"
    target = rule.get("target_half_width")
    return (
        f"adaptive: {rule.get('min')} to {rule.get('max')} per point, until the 95% "
        f"interval is within ±{float(target) * 100:g}%"
        if target is not None
        else f"{rule.get('min')} to {rule.get('max')} per point"
    )


# -- the guide --------------------------------------------------------------------------


def figures_of_runs(runs: Sequence[RunData], include_emulated: bool) -> list[Figure]:
    """Valid measured figures of the given runs, newest point per configuration.

    The same rule as :meth:`sizing.store.Store.figures`, restricted to ``runs``.
    """
    from sizing.store import newest_figures

    return newest_figures((p for run in runs for p in run.points), include_emulated)


def build_guide(
    request: GuideRequest,
    catalog: CostCatalog,
    reference: Reference,
    selection: Selection,
    runs: Sequence[RunData],
    *,
    emulated: Sequence[Figure] = (),
    nginx_template: str = "",
) -> Guide:
    """Prepare the whole guide (see the module docstring)."""
    table = build_table(selection.figures, catalog)
    basis = table.source
    citation = reference.citation()
    inventories = tuple(_distinct(inventory_name(r.record.inventory) for r in runs))
    if basis == "reference":
        basis_text = (
            f"Based on published reference data ({citation}), not on measurements of your hardware."
        )
    elif basis == "measured":
        basis_text = (
            "Based on figures measured with sizing on "
            + (", ".join(inventories) or "the inventory's hosts")
            + "."
        )
    else:
        basis_text = (
            "Based on figures measured with sizing on "
            + (", ".join(inventories) or "the inventory's hosts")
            + f" where measured, and published reference data ({citation}) elsewhere."
        )
    rec_view = None
    demand = request.demand
    if demand is not None:
        result = recommend(
            selection.figures,
            catalog,
            demand,
            platforms=None if request.platform == "any" else [request.platform],
        )
        rec_view = recommendation_view(result, catalog.currency)
    ov = overhead_points(table)
    legend = tuple(Fact(MARKS[k], f"{k}: {v}") for k, v in PROVENANCE_TEXT.items())
    return Guide(
        request=request,
        title=request.title,
        customer=request.customer,
        date=request.date,
        paper=request.paper,
        inventories=inventories,
        run_ids=tuple(r.record.id for r in runs),
        basis=basis,
        basis_text=basis_text,
        reference_only=basis == "reference",
        citation=citation,
        reference_url=reference.url,
        currency=catalog.currency,
        cost_basis=table.cost_basis,
        headlines=tuple(headlines(table)),
        recommendation=rec_view,
        tables=tuple(sizing_tables(table, catalog)),
        table=table,
        selection=selection,
        overhead=tuple(ov),
        overhead_table=overhead_table(ov),
        emulated_table=emulated_table(emulated, request.include_emulated),
        cpu_points=tuple(cpu_points(runs)),
        methodology=methodology(runs, reference, table, catalog, nginx_template),
        validity=validity_table(runs),
        provenance=provenance_table(table),
        runs=tuple(runs),
        legend=legend,
        latency=latency_section(runs),
    )
