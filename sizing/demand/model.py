"""The demand: what the logs or counters showed, as figures with the span they cover and
how they were obtained. It is written to and read from the demand file (YAML), which
``recommend --demand`` and ``guide --demand`` size for."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sizing.demand.totals import Totals
from sizing.workload import Assumed, Role, WorkloadMix

if TYPE_CHECKING:
    from sizing.demand.schema import DemandDoc, RateDoc, WorkloadDoc

KIND = "sizing-demand"
VERSION = 2  # 2: the workload section (role and traffic mix); 1 is read too
PEAKS = ("max", "p99.9", "p99")


def iso(sec: float) -> str:
    """An epoch second in ISO 8601, UTC."""
    return datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Rate:
    """A per-second rate over a span: the busiest second (and when), the 99th and 99.9th
    percentiles of the per-second rates (nearest rank, every second of the span counted,
    a second without a request as 0) and the average."""

    peak: float
    peak_at: str
    p99: float
    p999: float
    average: float
    start: str
    end: str
    seconds: int

    def at(self, peak: str) -> float:
        """The figure ``--peak`` names: ``max``, ``p99.9`` or ``p99``."""
        return {"max": self.peak, "p99.9": self.p999, "p99": self.p99}[peak]

    @property
    def peak_to_average(self) -> float | None:
        return self.peak / self.average if self.average else None


@dataclass(frozen=True)
class SourceFile:
    """One file read: where, its hash, what was read and skipped."""

    path: str
    sha256: str
    bytes: int
    lines: int
    skipped: dict[str, int] = field(default_factory=dict)
    gzip: bool = False
    damage: str = ""
    server: str = ""


@dataclass(frozen=True)
class Missing:
    """A figure the input cannot give, and the ``log_format`` addition that would."""

    figure: str
    add: str  # the variables to add to the log_format ($...), or what else gives it

    @property
    def advice(self) -> str:
        """``add `$x` to the log_format`` or, for what no log variable gives, the way."""
        if self.add.startswith("$"):
            return f"add `{self.add}` to the log_format"
        return f"needs {self.add}"


@dataclass(frozen=True)
class TrafficDemand:
    """The demand derived from a customer's logs or counters."""

    method: str  # "access log" or "counters (stub_status)" ...
    arrival: str  # how the second of a request was found, in words
    resolution_s: float  # 1 for logs; the scrape interval for counters
    requests: Rate
    classes: dict[str, Rate]
    new_connections: Rate | None
    full_handshakes: Rate | None
    resumption_share: float | None
    requests_per_connection: float | None
    sizes: list[tuple[str, int]]
    request_time_ms: tuple[int, int] | None  # p50, p99
    chart_start: str
    chart: list[int]  # the busiest hour (or the span when shorter), one value per second
    sources: list[SourceFile]
    lines: int
    skipped: int
    skipped_samples: list[str]
    notes: list[str]
    missing: list[Missing]
    workload: WorkloadMix | None = None  # the role and traffic mix (issue 57)
    totals: Totals | None = None  # requests, per status class and bytes sent

    def to_dict(self) -> dict[str, Any]:
        # the chart (up to 3,600 ints) as a plain copy: asdict deep-copies each value, a
        # few ms of a small log's run
        doc = asdict(replace(self, chart=[]))
        doc["chart"] = list(self.chart)
        doc["requests"]["peak_to_average"] = self.requests.peak_to_average
        doc["sizes"] = [{"bucket": b, "responses": n} for b, n in self.sizes]
        rt = self.request_time_ms
        doc["request_time_ms"] = None if rt is None else {"p50": rt[0], "p99": rt[1]}
        doc["workload"] = None if self.workload is None else workload_dict(self.workload)
        return {"kind": KIND, "version": VERSION, **doc}


def workload_dict(w: WorkloadMix) -> dict[str, Any]:
    """The demand file's ``workload:`` section (the shape the replay reads)."""
    return {
        "role": None if w.role is None else w.role.value,
        "role_source": w.role_source,
        "size_field": w.size_field,
        "sizes": [{"upto": hi, "share": share} for _, hi, share in w.sizes],
        "per_connection": [{"from": lo, "to": hi, "share": sh} for lo, hi, sh in w.per_connection],
        "requests_per_connection": w.requests_per_connection,
        "tls_share": w.tls_share,
        "resumption_share": w.resumption_share,
        "status": dict(w.status),
        "assumed": [{"figure": a.figure, "value": a.value, "source": a.source} for a in w.assumed],
        "missing": list(w.missing),
    }


def _rate(doc: RateDoc | None) -> Rate | None:
    if doc is None:
        return None
    return Rate(**doc.model_dump(exclude={"peak_to_average"}))


def _workload(doc: WorkloadDoc | None) -> WorkloadMix | None:
    if doc is None:
        return None
    sizes, lo = [], 0
    for b in doc.sizes:
        sizes.append((lo, b.upto, b.share))
        lo = (b.upto or 0) + 1
    return WorkloadMix(
        role=None if doc.role is None else Role(doc.role),
        role_source=doc.role_source,
        sizes=tuple(sizes),
        size_field=doc.size_field,
        per_connection=tuple((b.lo, b.hi, b.share) for b in doc.per_connection),
        requests_per_connection=doc.requests_per_connection,
        tls_share=doc.tls_share,
        resumption_share=doc.resumption_share,
        status=tuple(doc.status.items()),
        assumed=tuple(Assumed(a.figure, a.value, a.source) for a in doc.assumed),
        missing=tuple(doc.missing),
    )


def demand_from_dict(raw: Any) -> TrafficDemand:
    """The demand a demand file holds; ValueError (or pydantic's ValidationError, a
    ValueError) when it is not one, naming the field and never the value."""
    from sizing.demand.schema import clean_note, clean_sample, validate  # deferred: pydantic

    doc: DemandDoc = validate(raw)
    rt = doc.request_time_ms
    requests = _rate(doc.requests)
    assert requests is not None  # a required field
    samples = [c for s in doc.skipped_samples if (c := clean_sample(s)) is not None]
    return TrafficDemand(
        method=doc.method,
        arrival=doc.arrival,
        resolution_s=doc.resolution_s,
        requests=requests,
        classes={k: r for k, v in doc.classes.items() if (r := _rate(v)) is not None},
        new_connections=_rate(doc.new_connections),
        full_handshakes=_rate(doc.full_handshakes),
        resumption_share=doc.resumption_share,
        requests_per_connection=doc.requests_per_connection,
        sizes=[(s.bucket, s.responses) for s in doc.sizes],
        request_time_ms=None if rt is None else (rt.p50, rt.p99),
        chart_start=doc.chart_start,
        chart=list(doc.chart),
        sources=[SourceFile(**s.model_dump()) for s in doc.sources],
        lines=doc.lines,
        skipped=doc.skipped,
        skipped_samples=samples,
        notes=[clean_note(n) for n in doc.notes],
        missing=[Missing(m.figure, m.add) for m in doc.missing],
        workload=_workload(doc.workload),
        totals=None if doc.totals is None else Totals(**doc.totals.model_dump()),
    )
