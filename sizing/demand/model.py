"""The demand: what the logs or counters showed, as figures with the span they cover and
how they were obtained. It is written to and read from the demand file (YAML), which
``recommend --demand`` and ``guide --demand`` size for."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from sizing.demand.totals import Totals, totals_from_dict

KIND = "sizing-demand"
VERSION = 1
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
    totals: Totals | None = None  # requests, per status class and bytes sent

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["requests"]["peak_to_average"] = self.requests.peak_to_average
        doc["sizes"] = [{"bucket": b, "responses": n} for b, n in self.sizes]
        rt = self.request_time_ms
        doc["request_time_ms"] = None if rt is None else {"p50": rt[0], "p99": rt[1]}
        return {"kind": KIND, "version": VERSION, **doc}


def _rate(doc: Any) -> Rate | None:
    if doc is None:
        return None
    return Rate(**{k: v for k, v in doc.items() if k != "peak_to_average"})


def demand_from_dict(doc: dict[str, Any]) -> TrafficDemand:
    """The demand a demand file holds (KeyError/TypeError/ValueError when it is not one)."""
    if doc.get("kind") != KIND:
        raise ValueError(f"kind is {doc.get('kind')!r}, not {KIND!r}")
    rt = doc.get("request_time_ms")
    requests = _rate(doc["requests"])
    assert requests is not None
    return TrafficDemand(
        method=doc["method"],
        arrival=doc["arrival"],
        resolution_s=float(doc["resolution_s"]),
        requests=requests,
        classes={k: r for k, v in doc["classes"].items() if (r := _rate(v)) is not None},
        new_connections=_rate(doc.get("new_connections")),
        full_handshakes=_rate(doc.get("full_handshakes")),
        resumption_share=doc.get("resumption_share"),
        requests_per_connection=doc.get("requests_per_connection"),
        sizes=[(s["bucket"], int(s["responses"])) for s in doc.get("sizes", [])],
        request_time_ms=None if rt is None else (int(rt["p50"]), int(rt["p99"])),
        chart_start=doc["chart_start"],
        chart=[int(v) for v in doc["chart"]],
        sources=[SourceFile(**s) for s in doc.get("sources", [])],
        lines=int(doc["lines"]),
        skipped=int(doc["skipped"]),
        skipped_samples=list(doc.get("skipped_samples", [])),
        notes=list(doc.get("notes", [])),
        missing=[Missing(**m) for m in doc.get("missing", [])],
        totals=totals_from_dict(doc.get("totals")),
    )
