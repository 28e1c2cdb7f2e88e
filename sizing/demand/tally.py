"""The per-second tallies a scan fills: requests, status classes, new connections, full
and resumed TLS handshakes, keyed by the arrival second (epoch, UTC); the response-size
histogram and the request times (ms). Out-of-order lines only add to an earlier key: no
line is kept, nothing is sorted."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field

# Upper edges (bytes) of the response-size histogram; the last bucket is open.
SIZE_EDGES = (128, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304)
CLASSES = ("1xx", "2xx", "3xx", "4xx", "5xx")


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
    """Counts per arrival second, and the distributions that have no second."""

    requests: Counter[int] = field(default_factory=Counter)
    classes: dict[str, Counter[int]] = field(
        default_factory=lambda: {c: Counter() for c in CLASSES}
    )
    new_connections: Counter[int] = field(default_factory=Counter)
    full_handshakes: Counter[int] = field(default_factory=Counter)
    resumed: Counter[int] = field(default_factory=Counter)
    sizes: list[int] = field(default_factory=lambda: [0] * (len(SIZE_EDGES) + 1))
    request_ms: Counter[int] = field(default_factory=Counter)

    def add(self, sec: int, n: int, cls: bytes | None, first: bool, reused: bytes | None) -> None:
        self.requests[sec] += n
        if cls is not None:
            name = f"{cls.decode()}xx"
            if name in self.classes:
                self.classes[name][sec] += n
        if first:
            self.new_connections[sec] += n
            if reused == b".":
                self.full_handshakes[sec] += n
            elif reused == b"r":
                self.resumed[sec] += n

    def merge(self, other: Tally) -> None:
        self.requests.update(other.requests)
        for c in CLASSES:
            self.classes[c].update(other.classes[c])
        self.new_connections.update(other.new_connections)
        self.full_handshakes.update(other.full_handshakes)
        self.resumed.update(other.resumed)
        self.sizes = [a + b for a, b in zip(self.sizes, other.sizes, strict=True)]
        self.request_ms.update(other.request_ms)
