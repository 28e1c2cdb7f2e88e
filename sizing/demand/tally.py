"""The per-second tallies a scan fills: requests, status classes, new connections, full
and resumed TLS handshakes, keyed by the arrival second (epoch, UTC); the response-size
histogram and the request times (ms). Out-of-order lines only add to an earlier second:
no line is kept."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from sizing.demand.persecond import Ints, PerSecond

# Upper edges (bytes) of the response-size histogram; the last bucket is open.
SIZE_EDGES = (128, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304)
_EDGES = np.array(SIZE_EDGES, np.int64)
_SUM_SAFE = 2**63 - 1  # the largest sum an int64 holds
CLASSES = ("1xx", "2xx", "3xx", "4xx", "5xx")
# ``$connection_requests`` is counted exactly up to CONN_EXACT; every larger value is
# counted together under CONN_OVER (a bounded histogram, whatever the log holds).
CONN_EXACT = 1001
CONN_OVER = CONN_EXACT + 1
EDGES_KEPT = 8  # the earliest and latest seconds kept with where they were read


def size_label(i: int) -> str:
    """The histogram bucket's label: ``≤ 128 B``, ``≤ 1 KiB``, ``> 4 MiB``."""
    if i == len(SIZE_EDGES):
        return f"> {_bytes(SIZE_EDGES[-1])}"
    return f"≤ {_bytes(SIZE_EDGES[i])}"


def _bytes(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n // scale} {unit}"
    return f"{n} B"


def size_bucket(n: int) -> int:
    return bisect_left(SIZE_EDGES, n)


@dataclass
class Skipped:
    """Lines not counted: how many per reason and the first few by file:line, reason and
    the field that failed. A line's content is never kept: a customer's log holds client
    addresses, user names, URLs, tokens and cookies, and what is skipped is reported in
    the demand file, the terminal and the guide."""

    counts: Counter[str] = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)

    def add(self, reason: str, where: str, at: str = "", n: int = 1) -> None:
        """Count ``n`` lines skipped for ``reason``; the first few are kept as
        ``file:line: reason (at $field)``."""
        self.counts[reason] += n
        if len(self.samples) < 5:
            self.samples.append(f"{where}: {reason}" + (f" (at {at})" if at else ""))

    @property
    def want_sample(self) -> bool:
        """Whether the next skipped line is still sampled (finding its field costs a few
        matches: only the sampled ones pay it)."""
        return len(self.samples) < 5

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass
class Tally:
    """Counts per arrival second (:class:`PerSecond`: blocks within one memory budget),
    and the distributions that have no second."""

    requests: PerSecond = field(default_factory=PerSecond)
    classes: dict[str, PerSecond] = field(default_factory=lambda: {c: PerSecond() for c in CLASSES})
    new_connections: PerSecond = field(default_factory=PerSecond)
    full_handshakes: PerSecond = field(default_factory=PerSecond)
    resumed: PerSecond = field(default_factory=PerSecond)
    sizes: list[int] = field(default_factory=lambda: [0] * (len(SIZE_EDGES) + 1))
    request_ms: Counter[int] = field(default_factory=Counter)
    bytes_sent: int = 0  # the sum of $bytes_sent (or $body_bytes_sent) over the requests
    # $connection_requests -> requests logged with it (values above CONN_EXACT under
    # CONN_OVER); and the new connections (connection_requests = 1) by whether they were
    # TLS ($ssl_session_reused "." or "r") or plain ("" or "-")
    conn_requests: Counter[int] = field(default_factory=Counter)
    tls_connections: int = 0
    plain_connections: int = 0
    # a few seconds, each with the file:line it was read at: the earliest and latest, and
    # those that moved the span by more than a day when read (where an outlier is named)
    edges: dict[int, str] = field(default_factory=dict)
    outliers: int = 0  # requests left out of the span (times far from the rest)
    _bounds: tuple[int, int] = field(default=(0, 0), repr=False)
    _range: tuple[int, int] | None = field(default=None, repr=False)

    def add(self, sec: int, n: int, cls: bytes | None, first: bool, reused: bytes | None) -> None:
        """Count ``n`` requests in second ``sec`` (one key at a time: the JSON path)."""
        self.requests.add(sec, n)
        if cls is not None:
            name = f"{cls.decode(errors='replace')}xx"
            if name in self.classes:
                self.classes[name].add(sec, n)
        if first:
            self.new_connections.add(sec, n)
            if reused == b".":
                self.full_handshakes.add(sec, n)
                self.tls_connections += n
            elif reused == b"r":
                self.resumed.add(sec, n)
                self.tls_connections += n
            elif reused is not None:
                self.plain_connections += n

    def add_rows(
        self,
        secs: Ints,
        n: Ints,
        status: npt.NDArray[np.uint8] | None,
        first: npt.NDArray[np.bool_] | None,
        reused: npt.NDArray[np.uint8] | None,
    ) -> None:
        """Count ``n[i]`` requests in second ``secs[i]``, with their status's first digit
        (ASCII), whether each was a connection's first and its ``$ssl_session_reused``
        byte (ASCII; 0 when empty): a chunk's keys at once."""
        self.requests.add_many(secs, n)
        if status is not None:
            for i, c in enumerate(CLASSES):
                m = status == ord("1") + i
                if m.any():
                    self.classes[c].add_many(secs[m], n[m])
        if first is not None and first.any():
            self.new_connections.add_many(secs[first], n[first])
            if reused is not None:
                for byte, series in ((ord("."), self.full_handshakes), (ord("r"), self.resumed)):
                    m = first & (reused == byte)
                    series.add_many(secs[m], n[m])
                    self.tls_connections += int(n[m].sum())
                plain = first & ((reused == 0) | (reused == ord("-")))
                self.plain_connections += int(n[plain].sum())

    def add_sizes(self, values: Ints, long: int = 0) -> None:
        """Count responses of these sizes (bytes), and ``long`` ones past int64 (in the
        largest bucket, not in the bytes sent)."""
        self.sizes[-1] += long
        buckets = np.searchsorted(_EDGES, values, side="left")
        for i, c in enumerate(np.bincount(buckets, minlength=len(self.sizes)).tolist()):
            self.sizes[i] += c
        # int64 holds one size, not always their sum: 20 sizes of 10^18 wrapped to a
        # wrong total. numpy sums only when the largest times the count cannot overflow.
        if len(values) and int(values.max()) > _SUM_SAFE // len(values):
            self.bytes_sent += sum(values.tolist())
        else:
            self.bytes_sent += int(values.sum())

    def add_conn(self, value: int, n: int) -> None:
        """Count ``n`` requests whose ``$connection_requests`` was ``value``."""
        self.conn_requests[min(value, CONN_OVER)] += n

    def moves_span(self, lo: int, hi: int) -> tuple[bool, bool]:
        """Whether a chunk's earliest and latest seconds move the span read so far by
        more than a day (or are the first read): those are located by file:line."""
        if self._range is None:
            self._range = (lo, hi)
            return True, True
        a, b = self._range
        self._range = (min(a, lo), max(b, hi))
        return lo < a - 86_400, hi > b + 86_400

    def is_edge(self, sec: int) -> bool:
        """Whether ``sec`` would be among the earliest or latest seconds kept."""
        if len(self.edges) < 2 * EDGES_KEPT:
            return sec not in self.edges
        lo, hi = self._bounds
        return sec < lo or sec > hi

    def add_edge(self, sec: int, where: str) -> None:
        """Keep where ``sec`` was read, if it is among the earliest or latest."""
        if sec in self.edges:
            return
        self.edges[sec] = where
        if len(self.edges) >= 2 * EDGES_KEPT:
            ordered = sorted(self.edges)
            for s in ordered[EDGES_KEPT:-EDGES_KEPT]:
                del self.edges[s]
            self._bounds = (ordered[EDGES_KEPT - 1], ordered[-EDGES_KEPT])

    def series(self) -> list[PerSecond]:
        """Every per-second series."""
        return [
            self.requests,
            self.new_connections,
            self.full_handshakes,
            self.resumed,
            *self.classes.values(),
        ]

    def drop(self, seconds: Ints) -> None:
        """Leave these seconds out of every per-second series (outliers)."""
        for counts in self.series():
            counts.drop(seconds)

    def merge(self, other: Tally) -> None:
        for mine, theirs in zip(self.series(), other.series(), strict=True):
            mine.merge(theirs)
        self.sizes = [a + b for a, b in zip(self.sizes, other.sizes, strict=True)]
        self.request_ms.update(other.request_ms)
        self.bytes_sent += other.bytes_sent
        self.conn_requests.update(other.conn_requests)
        self.tls_connections += other.tls_connections
        self.plain_connections += other.plain_connections
        for sec, where in other.edges.items():
            self.add_edge(sec, where)
