"""Counts per epoch second, in memory bounded whatever the span or the traffic.

The seconds are cut into blocks of :data:`BLOCK` (65,536 s, about 18 hours), made when a
second of one first carries traffic: sparse (the busy seconds' offsets and counts, 16
bytes a busy second) while it holds at most :data:`SPARSE_MAX` busy seconds, then dense
(the counts of its every second, int64). All the series of a process share one budget of
blocks in memory, :data:`HOT_BYTES`; the least recently used block beyond it is spilled:
its busy seconds (or, when smaller, every second's count) in the smallest integer type
that holds them, appended to one temporary file (which the operating system deletes when
the process ends), and read back when needed. A log read in time order touches one or two
blocks at a time; whatever the span (a year of one request a second, or ten years between
two lines), the memory is the budget and an index of the blocks (a hundred bytes a
block), never a slot, a pair or an object per second of the span.

Readers walk the busy seconds block by block, in order (:meth:`PerSecond.busy`): a
spilled block is read back for the walk without being made hot again.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import IO

import numpy as np
import numpy.typing as npt

from sizing.errors import UsageError

Ints = npt.NDArray[np.int64]
BITS = 16
BLOCK = 1 << BITS  # seconds a block covers (about 18 hours)
HOT_BYTES = 32 << 20  # the hot blocks of every series together (64 dense ones of 512 KiB)
_PENDING = 1 << 16  # one-at-a-time adds (the JSON path) buffered before they are added
_TYPES = (np.uint8, np.uint16, np.uint32)


class _Spill:
    """The process's hot blocks, least recently used first, with the bytes each holds,
    and the file spilled ones are written to."""

    def __init__(self) -> None:
        self.hot: OrderedDict[tuple[int, int], tuple[weakref.ref[PerSecond], int]] = OrderedDict()
        self.bytes = 0
        self.file: IO[bytes] | None = None
        self.end = 0

    def touch(self, owner: PerSecond, key: int, nbytes: int) -> None:
        """``owner``'s block ``key`` (now ``nbytes``) was used: it becomes the most recent;
        blocks beyond the budget are spilled, oldest first (never this one)."""
        at = (id(owner), key)
        old = self.hot.pop(at, None)
        self.bytes += nbytes - (old[1] if old else 0)
        self.hot[at] = (weakref.ref(owner), nbytes)
        while len(self.hot) > 1 and self.bytes > HOT_BYTES:
            (_, victim_key), (ref, n) = self.hot.popitem(last=False)
            self.bytes -= n
            victim = ref()
            if victim is not None:
                victim.spill(victim_key)

    def forget(self, owner: PerSecond, key: int) -> None:
        got = self.hot.pop((id(owner), key), None)
        if got:
            self.bytes -= got[1]

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

# A block is dense (the counts of its BLOCK seconds, int64) or sparse (its busy seconds'
# offsets, ascending, and their counts): sparse while it holds at most SPARSE_MAX seconds,
# so a log of one request an hour over years takes 16 bytes a busy second, not a block.
SPARSE_MAX = 8192  # 128 KiB sparse against 512 KiB dense; a walk of a sparse block is cheap
Block = Ints | tuple[Ints, Ints]


_OVERHEAD = 600  # bytes a block costs beyond its counts (arrays, tuple, the LRU's entry)


def _nbytes(block: Block) -> int:
    return _OVERHEAD + (block.nbytes if isinstance(block, np.ndarray) else block[0].nbytes * 2)


def _compact(values: Ints) -> tuple[bytes, str]:
    """The values in the smallest integer type that holds them."""
    top, low = (int(values.max()), int(values.min())) if len(values) else (0, 0)
    kind = next((t for t in _TYPES if top <= np.iinfo(t).max), np.int64) if low >= 0 else np.int64
    return values.astype(kind).tobytes(), np.dtype(kind).str


def _pack(block: Block) -> tuple[bytes, str, int]:
    """A block as stored: its counts in their smallest integer type, as the busy seconds'
    offsets and counts when that is smaller than every second's count (a sparse block, or
    a dense one with few busy seconds); the counts' type; and how many busy seconds (-1:
    every second's count). Not compressed: zlib cost more CPU than the reading."""
    offs, counts = _busy(block)
    data, kind = _compact(counts)
    if isinstance(block, np.ndarray) and (2 + np.dtype(kind).itemsize) * len(offs) > (
        np.dtype(kind).itemsize * BLOCK
    ):
        return _compact(block)[0], kind, -1
    return offs.astype(np.uint16).tobytes() + data, kind, len(offs)


def _unpack(raw: bytes, kind: str, sparse: int) -> Block:
    if sparse < 0:
        return np.frombuffer(raw, np.dtype(kind)).astype(np.int64)
    offs = np.frombuffer(raw[: 2 * sparse], np.uint16).astype(np.int64)
    return offs, np.frombuffer(raw[2 * sparse :], np.dtype(kind)).astype(np.int64)


def _added(block: Block | None, offs: Ints, counts: Ints) -> Block:
    """``block`` with ``counts`` added at ``offs`` (unsorted, repeats allowed)."""
    if isinstance(block, np.ndarray):
        np.add.at(block, offs, counts)
        return block
    if block is not None:
        offs, counts = np.concatenate([block[0], offs]), np.concatenate([block[1], counts])
    uniq, inv = np.unique(offs, return_inverse=True)
    if len(uniq) > SPARSE_MAX:
        dense = np.zeros(BLOCK, np.int64)
        np.add.at(dense, offs, counts)
        return dense
    summed = np.zeros(len(uniq), np.int64)
    np.add.at(summed, inv, counts)
    return uniq, summed


def _busy(block: Block) -> tuple[Ints, Ints]:
    """A block's busy seconds (offsets) and counts."""
    if isinstance(block, np.ndarray):
        at = np.flatnonzero(block)
        return at, block[at]
    keep = block[1] != 0  # a dropped second stays, at 0, until the block is rebuilt
    return block[0][keep], block[1][keep]


class PerSecond:
    """Requests (or new connections, handshakes...) per epoch second."""

    __slots__ = ("_hot", "_cold", "_buf", "_total", "__weakref__")

    def __init__(self) -> None:
        self._hot: dict[int, Block] = {}  # block key -> its counts, in memory
        self._cold: dict[int, tuple[int, int, str, int]] = {}  # key -> where it was spilled
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

    def _take(self, key: int) -> Block | None:
        """Block ``key`` out of the store (read back when spilled; None when new)."""
        block = self._hot.pop(key, None)
        if block is None and key in self._cold:
            at, n, kind, sparse = self._cold.pop(key)
            block = _unpack(_SPILL.read(at, n), kind, sparse)  # a new array (astype)
        return block

    def _add_block(self, key: int, offs: Ints, counts: Ints) -> None:
        block = _added(self._take(key), offs, counts)
        self._hot[key] = block
        _SPILL.touch(self, key, _nbytes(block))

    def spill(self, key: int) -> None:
        """Write block ``key`` to the spill file and free its memory."""
        block = self._hot.pop(key, None)
        if block is not None:
            data, kind, sparse = _pack(block)
            self._cold[key] = (_SPILL.write(data), len(data), kind, sparse)

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
            self._add_block(lo, secs & (BLOCK - 1), counts)
            return
        order = np.argsort(keys, kind="stable")
        keys, secs, counts = keys[order], secs[order], counts[order]
        cuts = np.flatnonzero(np.diff(keys)) + 1
        for a, b in zip(np.r_[0, cuts].tolist(), np.r_[cuts, len(keys)].tolist(), strict=True):
            self._add_block(int(keys[a]), secs[a:b] & (BLOCK - 1), counts[a:b])

    def merge(self, other: PerSecond) -> None:
        """Add ``other``'s counts (``other`` is left as it was). Into an empty series,
        ``other``'s spilled blocks are shared, not copied (a spilled block is never
        written again: changing one writes it anew)."""
        other._flush()
        if not self._hot and not self._cold and not self._buf:
            self._cold = dict(other._cold)
            self._total = other._total
            for key, block in list(other._hot.items()):  # touching may spill its blocks
                self._hot[key] = (
                    block.copy() if isinstance(block, np.ndarray) else (block[0], block[1].copy())
                )
                _SPILL.touch(self, key, _nbytes(block))
            return
        for secs, counts in other.busy():
            self.add_many(secs, counts)

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
                offs, counts = _busy(self._peek(key))
                gone = np.isin(offs, at)
                if gone.any():
                    self._add_block(key, offs[gone], -counts[gone])
                    self._total -= int(counts[gone].sum())

    # -- reading ------------------------------------------------------------------

    def _peek(self, key: int) -> Block:
        """Block ``key`` for reading: a spilled one is read back, not made hot."""
        block = self._hot.get(key)
        if block is None:
            at, n, kind, sparse = self._cold[key]
            block = _unpack(_SPILL.read(at, n), kind, sparse)
        return block

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
        their counts (one block at a time: bounded whatever the span)."""
        for key in self.keys(lo, hi):
            offs, counts = _busy(self._peek(key))
            secs = offs + (key << BITS)
            if lo is not None or hi is not None:
                keep = (secs >= (-(1 << 62) if lo is None else lo)) & (
                    secs <= ((1 << 62) if hi is None else hi)
                )
                secs, counts = secs[keep], counts[keep]
            if len(secs):
                yield secs, counts

    def batches(
        self, lo: int | None = None, hi: int | None = None, size: int = BLOCK
    ) -> Iterator[tuple[Ints, Ints]]:
        """:meth:`busy`'s seconds and counts gathered into batches of at least ``size``
        seconds (the last may hold fewer), in time order: a sparse series' blocks of one
        or two seconds each are read a batch at a time, not one numpy call each."""
        parts: list[tuple[Ints, Ints]] = []
        held = 0
        for secs, counts in self.busy(lo, hi):
            parts.append((secs, counts))
            held += len(secs)
            if held >= size:
                yield np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
                parts, held = [], 0
        if parts:
            yield np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

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
        got = int(self.dense(sec, sec)[0])
        return got if got else default

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
        for secs, counts in self.busy(lo, hi):
            out[secs - lo] = counts
        return out


def aligned(series: list[PerSecond], lo: int, hi: int) -> Iterator[tuple[int, list[Ints]]]:
    """For each block any of ``series`` has over [lo, hi], in order: the first second of
    its part inside [lo, hi], and each series' counts over that part (zeros where a series
    has none). Bounded: one block of each at a time."""
    keys = sorted(set().union(*(s.keys(lo, hi) for s in series)))
    for key in keys:
        a, b = max(lo, key << BITS), min(hi, (key << BITS) + BLOCK - 1)
        yield a, [s.dense(a, b) for s in series]
