"""The compiled access-log reader (issue 58: at least 5 times GoAccess's speed on real
logs): ``sizing/demand/_fastscan.c``, built by ``scripts/build-fastscan`` (which
``scripts/setup`` runs), matches a chunk's lines against the format's program
(:attr:`LogFormat.program`) and returns columns: per line, its logged time in ms, its
``$request_time`` in ms, status, connection and TLS bytes, size and connection count, with
the lines not in the format by row and text. No Python object is made per line.

The regular expression of :mod:`sizing.demand.scan` stays the reference, and the fallback
when the module is not built or the format has no program: the figures, the skipped lines
(with their line numbers and reasons), the notes and every output are the same, and
``tests/unit/test_demand_fastscan.py`` holds the two to it on generated and mutated lines of
every supported format.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import numpy.typing as npt

from sizing.demand.formats import LogFormat
from sizing.demand.tally import Tally
from sizing.demand.times import arrival, local_ms

Ints = npt.NDArray[np.int64]
Bytes = npt.NDArray[np.uint8]
NOT_A_ROW = -3  # a line not in the format (its text is in Columns.bad)
ODD = -2  # a $time_local of another width: read by the reference, one at a time
ENABLED = True  # False: the regular expression reads every format (the tests compare)


def native() -> ModuleType | None:
    """The compiled module, or None when it is not built (or disabled)."""
    if not ENABLED:
        return None
    try:
        return importlib.import_module("sizing.demand._fastscan")
    except ImportError:
        return None


@dataclass
class Columns:
    """A chunk's lines as columns (row ``i`` is the chunk's ``i``-th line)."""

    rows: int
    secs: Ints  # the arrival second; -1 when the time is not readable; NOT_A_ROW
    rt: Ints  # $request_time in ms, -1 when not readable
    status: Bytes  # the status's first digit (ASCII)
    first: Bytes  # 1 for a connection's first request
    reused: Bytes  # $ssl_session_reused's byte (0 when empty)
    size: Ints  # bytes sent ("-" is 0), -2 past int64, NOT_A_ROW when not logged
    conn: Ints  # $connection_requests (1 << 30 past 9 digits), -1 when empty
    bad: list[tuple[int, bytes]]  # the lines not in the format: row, text


def read_chunk(
    mod: ModuleType, chunk: bytes, fmt: LogFormat, offsets: dict[str, int], base: int
) -> Columns:
    """The chunk's columns; the first line of each UTC offset goes into ``offsets`` (line
    ``base + row + 1``), as the reference records them."""
    assert fmt.program is not None
    msec = fmt.time_field == "msec"
    rows, ms_b, rt_b, st, fi, ru, size, conn, bad, odd, offs = mod.scan(chunk, fmt.program, msec)
    ms = np.frombuffer(ms_b, np.int64).copy()
    for off, row in offs:  # the fixed-width times first, then the others: as the reference
        offsets.setdefault(off.decode(), base + row + 1)
    for row, value in odd:
        ms[row] = local_ms(value, offsets, base + row + 1)
    rt = np.frombuffer(rt_b, np.int64)
    matched = ms != NOT_A_ROW
    secs = arrival(ms, ms < 0, rt if "request_time" in fmt.groups else None)
    secs[~matched] = NOT_A_ROW
    return Columns(
        rows,
        secs,
        rt,
        np.frombuffer(st, np.uint8),
        np.frombuffer(fi, np.uint8),
        np.frombuffer(ru, np.uint8),
        np.frombuffer(size, np.int64),
        np.frombuffer(conn, np.int64),
        bad,
    )


def count(tally: Tally, c: Columns, fmt: LogFormat, where: str, base: int) -> list[int]:
    """Count the chunk's rows into ``tally`` (as sizing.demand.scan counts its keys); the
    rows skipped for a time that is not readable."""
    idx = np.flatnonzero(c.secs >= 0)
    if len(idx):
        secs = c.secs[idx]
        has = [g in fmt.groups for g in ("status", "first", "reused")]
        # one key per (second, status, first, reused): each distinct one added once
        key = secs << 17
        if has[0]:
            key |= c.status[idx].astype(np.int64) << 9
        if has[2]:
            key |= c.reused[idx].astype(np.int64) << 1
        if has[1]:
            key |= c.first[idx].astype(np.int64)
        uniq, n = np.unique(key, return_counts=True)
        tally.add_rows(
            uniq >> 17,
            n.astype(np.int64),
            ((uniq >> 9) & 0xFF).astype(np.uint8) if has[0] else None,
            (uniq & 1).astype(np.bool_) if has[1] else None,
            ((uniq >> 1) & 0xFF).astype(np.uint8) if has[2] else None,
        )
        # where the span's ends were read: the chunk's earliest and latest lines
        lo, hi = int(secs.argmin()), int(secs.argmax())
        moved = tally.moves_span(int(secs[lo]), int(secs[hi]))
        for m, i in zip(moved, (lo, hi), strict=True):
            if m:
                tally.add_edge(int(secs[i]), f"{where}{base + int(idx[i]) + 1}")
        if "bytes" in fmt.groups:
            size = c.size[idx]
            long = size == -2
            tally.add_sizes(size[~long], int(long.sum()))
        if "request_time" in fmt.groups:
            rt = c.rt[idx]
            for ms, k in zip(*np.unique(rt[rt >= 0], return_counts=True), strict=True):
                tally.request_ms[int(ms)] += int(k)
        if "conn" in fmt.groups:
            conn = c.conn[idx]
            for v, k in zip(*np.unique(conn[conn >= 0], return_counts=True), strict=True):
                tally.add_conn(int(v), int(k))
    return np.flatnonzero(c.secs == -1).tolist()
