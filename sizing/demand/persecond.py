"""Counts per epoch second, in memory bounded whatever the span or the traffic.

The seconds are cut into blocks of :data:`BLOCK` (16,384 s, about 4.5 hours), each a dense
array of counts, created when a second of it first carries traffic. A few blocks are hot
(in memory, as int64, added to in place); all the series of a process share one budget,
:data:`HOT_BYTES`, and the least recently used block beyond it is spilled: stored in its
smallest integer type, zlib-compressed, in one temporary file (an append-only spill that
the operating system deletes when the process ends). A log read in time order touches one
or two blocks at a time; whatever the span (a year of one request a second, or ten years
between two lines), the memory is the budget and an index of the blocks (a few dozen
bytes a block), never a slot, a pair or an object per second of the span.

Readers walk the blocks in order (:meth:`PerSecond.blocks`), one at a time: a spilled
block is read back for the walk without being made hot again.
"""

from __future__ import annotations

import os
import tempfile
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import IO

import numpy as np
import numpy.typing as npt

from sizing.errors import UsageError

Ints = npt.NDArray[np.int64]
BITS = 14
BLOCK = 1 << BITS  # seconds a block covers
HOT_BYTES = 32 << 20  # the hot blocks of every series together (256 blocks of 128 KiB)
_PENDING = 1 << 16  # one-at-a-time adds (the JSON path) buffered before they are added
_TYPES = (np.uint8, np.uint16, np.uint32)


class _Spill:
    """The process's hot blocks, least recently used first, and the file spilled ones
    are written to."""

    def __init__(self) -> None:
        self.hot: OrderedDict[tuple[int, int], weakref.ref[PerSecond]] = OrderedDict()
        self.file: IO[bytes] | None = None
        self.end = 0

    def touch(self, owner: PerSecond, key: int) -> None:
        """``owner``'s block ``key`` was used: it becomes the most recent; blocks beyond
        the budget are spilled, oldest first."""
        at = (id(owner), key)
        if at in self.hot:
            self.hot.move_to_end(at)
            return
        self.hot[at] = weakref.ref(owner)
        while len(self.hot) > 1 and len(self.hot) * BLOCK * 8 > HOT_BYTES:  # never ``at``
            (_, old), ref = self.hot.popitem(last=False)
            victim = ref()
            if victim is not None:
                victim.spill(old)

    def forget(self, owner: PerSecond, key: int) -> None:
        self.hot.pop((id(owner), key), None)

    def write(self, data: bytes) -> int:
        at = self.end
        try:
            if self.file is None:
                self.file = tempfile.TemporaryFile(prefix="sizing-demand-")
            os.pwrite(self.file.fileno(), data, at)
        except OSError as exc:
            raise UsageError(
                f"cannot keep the per-second counts in a temporary file ({tempfile.gettempdir()}):"
                f" {exc.strerror}; set TMPDIR to a directory with room"
            ) from None
        self.end += len(data)
        return at

    def read(self, at: int, n: int) -> bytes:
        assert self.file is not None
        return os.pread(self.file.fileno(), n, at)


_SPILL = _Spill()


def _pack(block: Ints) -> tuple[bytes, str]:
    """A block in the smallest unsigned type that holds it, compressed."""
    top = int(block.max())
    kind = next((t for t in _TYPES if top <= np.iinfo(t).max), np.int64)
    if int(block.min()) < 0:
        kind = np.int64
    return zlib.compress(block.astype(kind).tobytes(), 1), np.dtype(kind).str


def _unpack(data: bytes, kind: str) -> Ints:
    return np.frombuffer(zlib.decompress(data), np.dtype(kind)).astype(np.int64)


class PerSecond:
    """Requests (or new connections, handshakes...) per epoch second."""

    __slots__ = ("_hot", "_cold", "_buf", "_total", "__weakref__")

    def __init__(self) -> None:
        self._hot: dict[int, Ints] = {}  # block key -> its counts (int64, in memory)
        self._cold: dict[int, tuple[int, int, str]] = {}  # key -> (offset, bytes, dtype)
        self._buf: dict[int, int] = {}
        self._total = 0  # the sum of every count (kept: no walk of the blocks to read it)

    def __del__(self) -> None:
        try:
            for key in self._hot:  # its hot blocks leave the budget with it
                _SPILL.forget(self, key)
        except Exception:  # noqa: BLE001 - at interpreter exit the module may be gone
            pass

    @classmethod
    def of(cls, counts: Mapping[int, float]) -> PerSecond:
        """From a mapping of second -> count (counts rounded to whole)."""
        out = cls()
        if counts:
            secs = np.fromiter(counts.keys(), np.int64, len(counts))
            vals = np.fromiter((round(v) for v in counts.values()), np.int64, len(counts))
            out.add_many(secs, vals)
        return out

    # -- writing ------------------------------------------------------------------

    def _block(self, key: int) -> Ints:
        """Block ``key``, hot (read back from the spill, or new)."""
        block = self._hot.get(key)
        if block is None:
            where = self._cold.pop(key, None)
            if where is None:
                block = np.zeros(BLOCK, np.int64)
            else:
                at, n, kind = where
                block = _unpack(_SPILL.read(at, n), kind).copy()
            self._hot[key] = block
        _SPILL.touch(self, key)
        return block

    def spill(self, key: int) -> None:
        """Write block ``key`` to the spill file and free its memory."""
        block = self._hot.pop(key, None)
        if block is not None:
            data, kind = _pack(block)
            self._cold[key] = (_SPILL.write(data), len(data), kind)

    def add(self, sec: int, n: int = 1) -> None:
        self._buf[sec] = self._buf.get(sec, 0) + n
        if len(self._buf) >= _PENDING:
            self._flush()

    def add_many(self, secs: Ints, counts: Ints) -> None:
        """Add each ``counts[i]`` to second ``secs[i]`` (unsorted, repeats allowed)."""
        if not len(secs):
            return
        self._total += int(counts.sum())
        keys = secs >> BITS
        lo, hi = int(keys.min()), int(keys.max())
        if lo == hi:  # a chunk read in time order: one block
            np.add.at(self._block(lo), secs & (BLOCK - 1), counts)
            return
        order = np.argsort(keys, kind="stable")
        keys, secs, counts = keys[order], secs[order], counts[order]
        cuts = np.flatnonzero(np.diff(keys)) + 1
        for a, b in zip(np.r_[0, cuts].tolist(), np.r_[cuts, len(keys)].tolist(), strict=True):
            np.add.at(self._block(int(keys[a])), secs[a:b] & (BLOCK - 1), counts[a:b])

    def merge(self, other: PerSecond) -> None:
        """Add ``other``'s counts (``other`` is left as it was)."""
        for base, counts in other.blocks():
            self._block(base >> BITS)[:] += counts
        self._total += other.total()

    def _flush(self) -> None:
        if self._buf:
            n = len(self._buf)
            secs = np.fromiter(self._buf.keys(), np.int64, n)
            counts = np.fromiter(self._buf.values(), np.int64, n)
            self._buf = {}
            self.add_many(secs, counts)

    def drop(self, seconds: Ints) -> None:
        """Leave these seconds out."""
        self._flush()
        seconds = np.asarray(seconds, np.int64)
        for key in np.unique(seconds >> BITS).tolist():
            if key in self._hot or key in self._cold:
                at = np.unique(seconds[(seconds >> BITS) == key] & (BLOCK - 1))
                block = self._block(key)
                self._total -= int(block[at].sum())
                block[at] = 0

    # -- reading ------------------------------------------------------------------

    def blocks(self, lo: int | None = None, hi: int | None = None) -> Iterator[tuple[int, Ints]]:
        """Each block (its first second, its counts), in time order; only those that
        overlap [lo, hi] when given. A spilled block is read for the walk, not kept."""
        for key in self.keys(lo, hi):
            base = key << BITS
            block = self._hot.get(key)
            if block is None:
                at, n, kind = self._cold[key]
                block = _unpack(_SPILL.read(at, n), kind)
            yield base, block

    def keys(self, lo: int | None = None, hi: int | None = None) -> list[int]:
        """The keys of the blocks that overlap [lo, hi], in order."""
        self._flush()
        if lo is not None and hi is not None and (hi >> BITS) - (lo >> BITS) < 64:
            near = range(lo >> BITS, (hi >> BITS) + 1)  # a window: no sort of every key
            return [k for k in near if k in self._hot or k in self._cold]
        a = -(1 << 62) if lo is None else lo >> BITS
        b = 1 << 62 if hi is None else hi >> BITS
        return sorted(k for k in self._hot.keys() | self._cold.keys() if a <= k <= b)

    def busy(self, lo: int | None = None, hi: int | None = None) -> Iterator[tuple[Ints, Ints]]:
        """Per block, in time order: the seconds in [lo, hi] that carry a count, and
        their counts."""
        for base, block in self.blocks(lo, hi):
            a = 0 if lo is None else max(0, lo - base)
            b = BLOCK if hi is None else min(BLOCK, hi - base + 1)
            at = np.flatnonzero(block[a:b]) + a
            if len(at):
                yield at + base, block[at]

    @property
    def secs(self) -> Ints:
        """The seconds that carry a count, ascending (a list of every busy second: for
        small series and tests; the readers of a log walk :meth:`busy`)."""
        parts = [s for s, _ in self.busy()]
        return np.concatenate(parts) if parts else np.empty(0, np.int64)

    @property
    def counts(self) -> Ints:
        """Each second's count, in the order of :attr:`secs`."""
        parts = [c for _, c in self.busy()]
        return np.concatenate(parts) if parts else np.empty(0, np.int64)

    def __len__(self) -> int:
        return sum(len(s) for s, _ in self.busy())

    def __bool__(self) -> bool:
        return next(self.busy(), None) is not None

    def total(self) -> int:
        self._flush()
        return self._total

    def first(self) -> int:
        for secs, _ in self.busy():
            return int(secs[0])
        raise IndexError("no second carries a count")

    def last(self) -> int:
        for key in reversed(self.keys()):
            for secs, _ in self.busy(key << BITS, (key << BITS) + BLOCK - 1):
                return int(secs[-1])
        raise IndexError("no second carries a count")

    def get(self, sec: int, default: int = 0) -> int:
        got = self.dense(sec, sec)
        return int(got[0]) if got[0] else default

    def __getitem__(self, sec: int) -> int:
        return self.get(sec)

    def __iter__(self) -> Iterator[int]:
        return iter(self.secs.tolist())

    def items(self) -> Iterable[tuple[int, int]]:
        for secs, counts in self.busy():
            yield from zip(secs.tolist(), counts.tolist(), strict=True)

    def values(self) -> list[int]:
        return list(self.counts.tolist())

    def dense(self, lo: int, hi: int) -> Ints:
        """The counts of every second from ``lo`` to ``hi`` (a quiet one 0): only for a
        bounded window (an hour or two), never the span."""
        out = np.zeros(hi - lo + 1, np.int64)
        for base, block in self.blocks(lo, hi):
            a, b = max(lo, base), min(hi, base + BLOCK - 1)
            out[a - lo : b - lo + 1] = block[a - base : b - base + 1]
        return out


def aligned(series: list[PerSecond], lo: int, hi: int) -> Iterator[tuple[int, list[Ints]]]:
    """For each block any of ``series`` has over [lo, hi], in order: the first second of
    its part inside [lo, hi], and each series' counts over that part (zeros where a series
    has none). Bounded: one block of each at a time."""
    keys = sorted(set().union(*(s.keys(lo, hi) for s in series)))
    for key in keys:
        a, b = max(lo, key << BITS), min(hi, (key << BITS) + BLOCK - 1)
        yield a, [s.dense(a, b) for s in series]
