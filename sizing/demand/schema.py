"""The demand file's schema: every field typed, every range checked, unknown keys and
versions refused, each error naming the field (``full_handshakes.peak: ...``).

A demand file is handed around (to a colleague, to the customer) and edited by hand (the
role, an assumption), so :func:`sizing.demand.file.load_demand` reads it as untrusted input:
a negative or NaN peak must be refused, not sized as "no TLS figure". Version 1 files
(before the workload section) are read too; the samples of skipped lines they carry are cut
to their file:line and reason, as version 2 writes them, so that no line of the customer's
log written by an older sizing reaches a guide.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sizing.workload import ASSUMABLE, Role

KIND = "sizing-demand"
VERSIONS = (1, 2)
CLASSES = ("1xx", "2xx", "3xx", "4xx", "5xx")

_STRICT = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, populate_by_name=True)
Count = Annotated[int, Field(ge=0, le=10**15)]
NonNeg = Annotated[float, Field(ge=0, le=1e12)]
Share = Annotated[float, Field(ge=0, le=1)]
Text = Annotated[str, Field(max_length=2000)]
Iso = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")]


class RateDoc(BaseModel):
    model_config = _STRICT
    peak: NonNeg
    peak_at: Iso
    p99: NonNeg
    p999: NonNeg
    average: NonNeg
    start: Iso
    end: Iso
    seconds: Annotated[int, Field(ge=1, le=10**10)]
    peak_to_average: NonNeg | None = None  # written for people; derived again on read

    @model_validator(mode="after")
    def _ordered(self) -> RateDoc:
        if not self.p99 <= self.p999 <= self.peak:
            raise ValueError("p99 <= p99.9 <= peak does not hold")
        if self.average > self.peak:
            raise ValueError("the average is above the peak")
        if self.end < self.start:
            raise ValueError("end is before start")
        return self


class SourceDoc(BaseModel):
    model_config = _STRICT
    path: Text
    sha256: Annotated[str, Field(pattern=r"^([0-9a-f]{64})?$")]
    bytes: Count
    lines: Count
    skipped: dict[Annotated[str, Field(max_length=100)], Count] = {}
    gzip: bool = False
    damage: Text = ""
    server: Text = ""


class MissingDoc(BaseModel):
    model_config = _STRICT
    figure: Text
    add: Text


class SizeDoc(BaseModel):
    model_config = _STRICT
    bucket: Annotated[str, Field(max_length=20)]
    responses: Count


class RequestTimeDoc(BaseModel):
    model_config = _STRICT
    p50: Count
    p99: Count


class SizeBinDoc(BaseModel):
    model_config = _STRICT
    upto: Annotated[int, Field(ge=0, le=64 << 20)] | None  # as plan.workload_spec
    share: Share


class ConnBinDoc(BaseModel):
    model_config = _STRICT
    lo: Annotated[int, Field(ge=1, le=10**9, alias="from")]
    hi: Annotated[int | None, Field(ge=1, le=10**9, alias="to")]
    share: Share


class AssumedDoc(BaseModel):
    model_config = _STRICT
    figure: Literal[ASSUMABLE]  # type: ignore[valid-type]
    value: NonNeg
    source: Annotated[str, Field(min_length=1, max_length=500)]


class WorkloadDoc(BaseModel):
    model_config = _STRICT
    role: Role | None = None
    role_source: Text = ""
    size_field: Literal["bytes_sent", "body_bytes_sent", ""] = ""
    sizes: Annotated[list[SizeBinDoc], Field(max_length=64)] = []
    per_connection: Annotated[list[ConnBinDoc], Field(max_length=64)] = []
    requests_per_connection: Annotated[float, Field(ge=1, le=1e9)] | None = None
    tls_share: Share | None = None
    resumption_share: Share | None = None
    status: dict[Literal[CLASSES], Share] = {}  # type: ignore[valid-type]
    assumed: Annotated[list[AssumedDoc], Field(max_length=len(ASSUMABLE))] = []
    missing: Annotated[list[Text], Field(max_length=32)] = []

    @model_validator(mode="after")
    def _shares(self) -> WorkloadDoc:
        for name, shares in (
            ("sizes", [b.share for b in self.sizes]),
            ("per_connection", [b.share for b in self.per_connection]),
            ("status", list(self.status.values())),
        ):
            if shares and abs(sum(shares) - 1) > 0.01:
                raise ValueError(f"{name}: the shares add up to {sum(shares):.3f}, not 1")
        for b in self.per_connection:
            if b.hi is not None and b.hi < b.lo:
                raise ValueError(f"per_connection: from {b.lo} is above to {b.hi}")
        figures = [a.figure for a in self.assumed]
        for name in set(figures):
            if figures.count(name) > 1:
                raise ValueError(f"assumed: {name} stated twice")
            if getattr(self, name) is not None:
                raise ValueError(f"assumed: {name} is in the logs; it is not assumed")
        for a in self.assumed:
            if a.figure in ("tls_share", "resumption_share") and a.value > 1:
                raise ValueError(f"assumed: {a.figure} is a share between 0 and 1")
            if a.figure == "requests_per_connection" and a.value < 1:
                raise ValueError("assumed: requests_per_connection is 1 or more")
        return self


class TotalsDoc(BaseModel):
    model_config = _STRICT
    requests: Count
    classes: dict[Literal[CLASSES], Count] = {}  # type: ignore[valid-type]
    bytes_sent: Count | None = None
    outliers: Count = 0


class DemandDoc(BaseModel):
    model_config = _STRICT
    kind: Literal["sizing-demand"]
    version: Literal[1, 2]
    method: Text
    arrival: Text
    resolution_s: Annotated[float, Field(gt=0, le=86400)]
    requests: RateDoc
    classes: dict[Literal[CLASSES], RateDoc] = {}  # type: ignore[valid-type]
    new_connections: RateDoc | None = None
    full_handshakes: RateDoc | None = None
    resumption_share: Share | None = None
    requests_per_connection: Annotated[float, Field(gt=0, le=1e9)] | None = None
    sizes: Annotated[list[SizeDoc], Field(max_length=64)] = []
    request_time_ms: RequestTimeDoc | None = None
    chart_start: Iso
    chart: Annotated[list[Count], Field(min_length=1, max_length=3600)]
    sources: Annotated[list[SourceDoc], Field(max_length=10000)] = []
    lines: Count
    skipped: Count
    skipped_samples: Annotated[list[Text], Field(max_length=5)] = []
    notes: Annotated[list[Text], Field(max_length=200)] = []
    missing: Annotated[list[MissingDoc], Field(max_length=32)] = []
    workload: WorkloadDoc | None = None
    totals: TotalsDoc | None = None

    @model_validator(mode="after")
    def _consistent(self) -> DemandDoc:
        if self.version == 1 and self.workload is not None:
            raise ValueError("workload: a version 1 file has no workload section")
        if self.skipped > self.lines:
            raise ValueError("skipped: more lines skipped than read")
        return self


# What a skipped line's sample may say: file:line, the reason, the field (version 2).
_SAMPLE = re.compile(
    r"^(?P<where>.{1,4000}?:\d+): (?P<reason>empty line|binary data|not in the given format"
    r"|time not readable|not JSON with a time|line too long)(?P<at> \(at [^()]{1,80}\))?"
)


def clean_sample(sample: str) -> str | None:
    """A skipped line's sample as file:line, reason and field; None for anything else
    (a version 1 file kept the line's first 80 characters after the reason)."""
    m = _SAMPLE.match(sample)
    if m is None:
        return None
    return m.group("where") + ": " + m.group("reason") + (m.group("at") or "")


def clean_note(note: str) -> str:
    """A note as version 2 writes it: version 1's skipped-lines note ended with the first
    skipped line's text (``...; first at FILE:LINE: reason: TEXT``)."""
    head, sep, tail = note.partition("; first at ")
    if not sep:
        return note
    sample = clean_sample(tail)
    return head + ("; first at " + sample if sample else "")


def _known() -> frozenset[str]:
    names: set[str] = {*CLASSES, *ASSUMABLE, "from", "to"}
    for model in (
        RateDoc,
        SourceDoc,
        MissingDoc,
        SizeDoc,
        RequestTimeDoc,
        SizeBinDoc,
        ConnBinDoc,
        AssumedDoc,
        WorkloadDoc,
        TotalsDoc,
        DemandDoc,
    ):
        names.update(model.model_fields)
    return frozenset(names)


def errors_of(exc: ValidationError) -> list[str]:
    """``field.path: message`` per error, never the value that failed (it may be the
    customer's), nor a key the file made up (a key is the file's content too: shown as
    ``[key]``)."""
    known = _known()
    out = []
    for e in exc.errors(include_url=False, include_input=False):
        parts = [p if isinstance(p, int) or p in known else "[key]" for p in e["loc"]]
        where = ".".join(str(p) for p in parts) or "demand"
        out.append(f"{where}: {str(e['msg']).removeprefix('Value error, ')}")
    return out[:20]


# a log or a counters export given where a demand file goes (the usual mistake): the way on
WRITE_ONE = " (from a log or counters, `sizing demand FILE -o demand.yml` writes one)"


def validate(doc: Any) -> DemandDoc:
    """The demand file's document, validated (ValidationError, or ValueError when it is
    not a mapping or not a demand file at all)."""
    if not isinstance(doc, dict):
        name = type(doc).__name__
        shown = "empty" if doc is None else ("an " if name[0] in "aeiou" else "a ") + name
        raise ValueError(
            f"not a sizing demand file: the document is {shown}, not a mapping{WRITE_ONE}"
        )
    if doc.get("kind") != KIND:
        raise ValueError(f"kind: not {KIND!r}: not a sizing demand file{WRITE_ONE}")
    if doc.get("version") not in VERSIONS:
        raise ValueError(
            "version: this sizing reads demand files of version "
            + " and ".join(map(str, VERSIONS))
            + "; run sizing demand again (or update sizing)"
        )
    return DemandDoc.model_validate(doc)
