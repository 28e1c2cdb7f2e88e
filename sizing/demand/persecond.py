"""Counts per epoch second, kept compact: the seconds that carry traffic and their counts
as two sorted numpy arrays (16 bytes a second), never a slot per second of the span and
never a Python object per second. Chunks add their (unsorted, repeated) seconds as arrays;
they are summed into the sorted pair when enough have come, so memory follows the busy
seconds, whatever the span."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]
_PENDING = 1 << 18  # (second, count) pairs held unsummed before they are summed in


def _merged(base_s: Ints, base_c: Ints, add_s: Ints, add_c: Ints) -> tuple[Ints, Ints]:
    """Two sorted, distinct (second, count) pairs of arrays as one: the seconds in both
    summed, the new ones inserted in place (no sort of the whole, no copy of ``base``
    beyond the one the result is)."""
    if not len(base_s):
        return add_s, add_c
    idx = np.searchsorted(base_s, add_s)
    hit = idx < len(base_s)
    hit[hit] = base_s[idx[hit]] == add_s[hit]
    counts = base_c.copy()  # never in place: base may be shared (see merge)
    counts[idx[hit]] += add_c[hit]
    new = ~hit
    if not new.any():
        return base_s, counts
    return np.insert(base_s, idx[new], add_s[new]), np.insert(counts, idx[new], add_c[new])


def _summed(secs: Ints, counts: Ints) -> tuple[Ints, Ints]:
    """The distinct seconds, sorted, and the sum of each one's counts (zeros left out)."""
    if not len(secs):
        return secs, counts
    order = np.argsort(secs, kind="stable")
    s, c = secs[order], counts[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    uniq, total = s[starts], np.add.reduceat(c, starts)
    keep = total != 0
    return uniq[keep], total[keep]


class PerSecond:
    """Requests (or new connections, handshakes...) per epoch second."""

    __slots__ = ("_secs", "_counts", "_parts", "_pending", "_buf")

    def __init__(self) -> None:
        self._secs: Ints = np.empty(0, np.int64)
        self._counts: Ints = np.empty(0, np.int64)
        self._parts: list[tuple[Ints, Ints]] = []
        self._pending = 0
        self._buf: dict[int, int] = {}  # one-at-a-time adds (the JSON path)

    @classmethod
    def of(cls, counts: Mapping[int, float]) -> PerSecond:
        """From a mapping of second -> count (counts rounded to whole)."""
        out = cls()
        if counts:
            secs = np.fromiter(counts.keys(), np.int64, len(counts))
            vals = np.fromiter((round(v) for v in counts.values()), np.int64, len(counts))
            out.add_many(secs, vals)
        return out

    def add(self, sec: int, n: int = 1) -> None:
        self._buf[sec] = self._buf.get(sec, 0) + n
        if len(self._buf) >= 1 << 16:
            self._flush()

    def add_many(self, secs: Ints, counts: Ints) -> None:
        """Add each ``counts[i]`` to second ``secs[i]`` (unsorted, repeats allowed)."""
        if len(secs):
            self._parts.append((secs, counts))
            self._pending += len(secs)
            if self._pending > max(_PENDING, len(self._secs) // 4):
                self._compact()

    def merge(self, other: PerSecond) -> None:
        if not len(self._secs) and not self._parts and not self._buf:
            # the first merged in: its arrays are shared, not copied (never changed in
            # place: summing and dropping make new ones)
            self._secs, self._counts = other.secs, other.counts
            return
        self.add_many(other.secs, other.counts)

    def _flush(self) -> None:
        if self._buf:
            n = len(self._buf)
            secs = np.fromiter(self._buf.keys(), np.int64, n)
            counts = np.fromiter(self._buf.values(), np.int64, n)
            self._buf = {}
            self._parts.append((secs, counts))
            self._pending += n

    def _compact(self) -> None:
        """Sum the pending pairs among themselves, then into the sorted arrays: the
        memory it takes beyond the arrays is the pending pairs' and one copy of the
        result, never a sort of everything."""
        self._flush()
        if self._parts:
            secs = np.concatenate([p[0] for p in self._parts])
            counts = np.concatenate([p[1] for p in self._parts])
            self._parts, self._pending = [], 0
            self._secs, self._counts = _merged(self._secs, self._counts, *_summed(secs, counts))

    @property
    def secs(self) -> Ints:
        """The seconds that carry a count, ascending."""
        self._compact()
        return self._secs

    @property
    def counts(self) -> Ints:
        """Each second's count, in the order of :attr:`secs`."""
        self._compact()
        return self._counts

    def __len__(self) -> int:
        return len(self.secs)

    def __bool__(self) -> bool:
        return len(self) > 0

    def total(self) -> int:
        return int(self.counts.sum())

    def first(self) -> int:
        return int(self.secs[0])

    def last(self) -> int:
        return int(self.secs[-1])

    def get(self, sec: int, default: int = 0) -> int:
        secs = self.secs
        i = int(np.searchsorted(secs, sec))
        return int(self._counts[i]) if i < len(secs) and secs[i] == sec else default

    def __getitem__(self, sec: int) -> int:
        return self.get(sec)

    def __iter__(self) -> Iterator[int]:
        return iter(self.secs.tolist())

    def items(self) -> Iterable[tuple[int, int]]:
        return zip(self.secs.tolist(), self.counts.tolist(), strict=True)

    def values(self) -> list[int]:
        return list(self.counts.tolist())

    def dense(self, lo: int, hi: int) -> Ints:
        """The counts of every second from ``lo`` to ``hi`` (a quiet one 0): only for a
        bounded window (an hour or two), never the span."""
        out = np.zeros(hi - lo + 1, np.int64)
        secs = self.secs
        a, b = np.searchsorted(secs, lo), np.searchsorted(secs, hi, side="right")
        out[secs[a:b] - lo] = self._counts[a:b]
        return out

    def drop(self, seconds: Ints) -> None:
        """Leave these seconds out."""
        keep = ~np.isin(self.secs, seconds)
        self._secs, self._counts = self._secs[keep], self._counts[keep]
