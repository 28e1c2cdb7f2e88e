"""The guide's view model: what the templates and the charts receive. Pure dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sizing.engine import Demand, Recommendation
from sizing.engine.choice import Choice
from sizing.engine.table import SizingTable
from sizing.report.data.curves import SeriesCurve
from sizing.report.data.format import MARKS, PROFILE_LABELS
from sizing.sizing_request import Inputs, SizingRequest
from sizing.sources import RunData

if TYPE_CHECKING:
    from sizing.demand.model import TrafficDemand


@dataclass(frozen=True)
class GuideRequest:
    """What the guide was asked for (``sizing guide`` options): how it looks, and the one
    sizing request (:class:`SizingRequest`) that ``recommend`` and ``table`` answer too."""

    title: str = "NGINX Sizing Guide"
    customer: str = ""
    prepared_by: str = ""  # who prepared it (--prepared-by)
    date: str = ""
    paper: str = "a4"  # a4 | letter
    tool_version: str = ""
    sizing: SizingRequest = field(default_factory=SizingRequest)
    traffic: TrafficDemand | None = None  # --demand: the customer's traffic (Your traffic)
    peak: str = "max"  # --peak: which of its figures was sized for

    @property
    def demand(self) -> Demand | None:
        return self.sizing.demand

    @property
    def inputs(self) -> Inputs:
        return self.sizing.inputs


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
    # what the guide's figures came from, for its cover ("the results store and the bundled
    # reference data", or one of them): only what was used
    sources: str = "the results store and the bundled reference data"


@dataclass(frozen=True)
class CpuPoint:
    """One timed repetition: its throughput and the server CPU it used."""

    platform: str
    cores: int
    ht: str
    profile: str  # what it sizes: rps or tps (a static-file profile's figures too)
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
    pairs: int = 0  # the legs alternated: pairs of repetitions (0: unpaired)
    interval: str = ""  # what the interval is and covers, in words
    platform: str = ""  # the guest's platform (a container's overhead is labelled so)

    @property
    def group(self) -> str:
        """The metric as a chart or table labels it: ``RPS``, ``RPS (container)``."""
        label = PROFILE_LABELS.get(self.profile, self.profile)
        return label + (" (container)" if self.platform == "container" else "")


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
class GatewaySeries:
    """One gateway point's curve: offered calls/s against the server's CPU busy %."""

    label: str
    profile: str
    role: str
    cores: int
    run_id: int
    host: str
    rates: tuple[float, ...]
    achieved: tuple[float | None, ...]
    server_busy: tuple[float | None, ...]
    p95_ms: tuple[float | None, ...]


@dataclass(frozen=True)
class GatewaySection:
    """The guide's gateway section: the curves and one table per point."""

    series: tuple[GatewaySeries, ...]
    tables: tuple[TableBlock, ...]


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
    basis_text: str  # names the chosen bases and why they were chosen
    reference_only: bool
    citation: str
    reference_url: str
    currency: str
    cost_basis: str
    headlines: tuple[Headline, ...]
    recommendation: RecommendationView | None
    tables: tuple[TableBlock, ...]
    table: SizingTable
    choice: Choice
    overhead: tuple[OverheadPoint, ...]
    overhead_table: TableBlock | None
    ht_gain_table: TableBlock | None
    emulated_table: TableBlock | None
    cpu_points: tuple[CpuPoint, ...]
    methodology: Methodology
    validity: TableBlock | None
    provenance: TableBlock
    runs: tuple[RunData, ...]
    legend: tuple[Fact, ...]
    latency: LatencySection | None = None
    gateway: GatewaySection | None = None  # the API gateway's CPU curve (data/gateway.py)
    certainty: tuple[str, ...] = ()  # "How sure are these figures" (data/certainty.py)
    predicted: TableBlock | None = None
    certainty_closing: tuple[str, ...] = ()
    limits_text: tuple[str, ...] = ()  # "How close to the limit" (data/limits.py)
    limits_table: TableBlock | None = None
    limit_points: tuple[Any, ...] = ()  # data.limits.Limit, for the chart
    versus: Any = None  # data.versus.VersusView: bare metal or the hypervisor for the demand
    limits_all: TableBlock | None = None  # every figure against its ceiling (an appendix)
    about: tuple[Fact, ...] = ()  # who, when, the prices and what a cost includes (about.py)
    measured_on: tuple[str, ...] = ()  # the body's hosts, each as what it is
    left_out: tuple[Any, ...] = ()  # data.scope.LeftOut: hosts the body leaves to Appendix A
    cover: Any = None  # data.cover.Cover: what the cover says the guide contains, in one voice
    bases: tuple[Fact, ...] = ()  # the bases by id and why they were chosen (methodology)
    proposal: Any = None  # data.proposal.Proposal: the options, costs and capacity, page 1
    assumptions: TableBlock | None = None  # every price and term with its source (page 1)
    curves: tuple[SeriesCurve, ...] = ()  # what the throughput chart draws of each series

    def to_dict(self) -> dict[str, Any]:
        """The guide's data as one JSON-able document (for tests and debugging)."""
        return {
            "title": self.title,
            "customer": self.customer,
            "date": self.date,
            "inventories": list(self.inventories),
            "run_ids": list(self.run_ids),
            "basis": self.basis,
            "basis_text": self.basis_text,
            "bases": self.choice.to_dict(),
            "headlines": [h.__dict__ for h in self.headlines],
            "tables": [t.to_dict() for t in self.tables],
            "validity": None if self.validity is None else self.validity.to_dict(),
            "provenance": self.provenance.to_dict(),
            "certainty": list(self.certainty),
            "predicted": None if self.predicted is None else self.predicted.to_dict(),
            "limits": list(self.limits_text),
            "versus": None
            if self.versus is None
            else {"sentence": self.versus.sentence, **self.versus.comparison.to_dict()},
            "limits_table": None if self.limits_table is None else self.limits_table.to_dict(),
            "latency": None
            if self.latency is None
            else {
                "summary": self.latency.summary.to_dict(),
                "rates": [t.to_dict() for t in self.latency.rates],
                "soak": [t.to_dict() for t in self.latency.soak],
            },
            "gateway": None
            if self.gateway is None
            else {"tables": [t.to_dict() for t in self.gateway.tables]},
            "assumptions": None if self.assumptions is None else self.assumptions.to_dict(),
            "proposal": None
            if self.proposal is None
            else {
                "lead": self.proposal.lead,
                **{
                    k: None if t is None else t.to_dict()
                    for k, t in (
                        ("options", self.proposal.options),
                        ("costs", self.proposal.costs),
                        ("capacity", self.proposal.capacity),
                    )
                },
            },
        }
