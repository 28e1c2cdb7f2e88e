"""One log file through its format into a :class:`Tally`, chunk by chunk.

A chunk of whole lines is matched at once (``findall`` over the chunk: the regex engine
walks the bytes in C), one match per line: the format's fields, or the line's text when
it is not in the format (counted and sampled by file:line and reason, never by its text).
The rows are counted by distinct key (``Counter``), and the keys turned into seconds,
status classes and sizes as arrays (numpy): Python code runs per chunk and per distinct
request time or connection count, not per line or per second.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sizing.demand.clock import LATEST, MONTHS, in_range, iso_seconds, local_seconds, seconds_ms
from sizing.demand.formats import DEFAULT_NAME, STOCK, LogFormat, compile_format
from sizing.demand.reader import LONG_LINE, TOO_LONG, ReadState, chunks, looks_binary
from sizing.demand.tally import SIZE_EDGES, Skipped, Tally
from sizing.errors import UsageError

NOT_IN_FORMAT = "not in the given format"
BINARY = "binary data"
BAD_TIME = "time not readable"
NL = b"\n"


@dataclass
class FileScan:
    """One file read: its lines, what was skipped and why, and what reading it noted."""

    path: Path
    read: ReadState
    lines: int = 0
    skipped: Skipped = field(default_factory=Skipped)
    notes: list[str] = field(default_factory=list)
    offsets: dict[str, int] = field(default_factory=dict)  # UTC offset -> first line
    tally: Tally = field(default_factory=Tally)
    variables: frozenset[str] = frozenset()  # what the file logs


class _Keys:
    """How a chunk's captured groups become (second, class, first request, reused)."""

    def __init__(self, fmt: LogFormat) -> None:
        g = {name: i for i, name in enumerate(fmt.groups)}
        self.time = fmt.time_field
        self.exact = self.time == "msec" and "request_time" in g
        if self.time == "msec":
            tkeys = ["msec_s", "msec_ms"] + (["request_time"] if self.exact else [])
        else:
            tkeys = [self.time]
        self.extras = [x for x in ("status", "first", "reused") if x in g]
        # the empty group after the format's keeps the keys tuples; the one after it holds
        # a bad line's text (fmt.scanner)
        self.getter = itemgetter(*[g[k] for k in tkeys + self.extras], len(fmt.groups))
        self.bad_key = (b"",) * (len(tkeys) + len(self.extras) + 1)
        self.time_at = g[tkeys[0]]
        self.text_at = len(fmt.groups) + 1
        self.ntime = len(tkeys)
        self.size_at = g.get("bytes")
        self.rt_at = g.get("request_time")
        self.conn_at = g.get("conn")
        self.cache: dict[tuple[bytes, ...], int | None] = {}


def scan_file(path: Path, fmt: LogFormat, *, strict_head: bool = True) -> FileScan:
    """Read ``path`` in ``fmt``; refuse it (UsageError) when its first chunk is binary or
    mostly not in the format, naming the first line that does not match. When ``fmt`` is
    the default (none was given) and does not match, the stock formats (NGINX's main,
    Apache's combined and common) are tried on the first chunk, and the file is read in
    the one its lines are in, with a note saying which."""
    try:
        return _scan(path, fmt, strict_head)
    except _NotInFormat as exc:
        if fmt.name != DEFAULT_NAME:
            raise UsageError(str(exc)) from None
        stock = _recognise(exc.chunk)
        if stock is None:
            raise UsageError(
                f"{exc}; nor in NGINX's main format, nor in Apache's common or combined:"
                " give the log_format the file was written with, as --log-format '...'"
                " (its quoted parts joined) or --nginx-conf /etc/nginx/nginx.conf"
                " --log-name NAME"
            ) from None
    scan = _scan(path, stock, strict_head)
    scan.notes.append(f"{path}: read in {stock.name} (not the combined format)")
    return scan


class _NotInFormat(UsageError):
    """The first chunk of a file is mostly not in the format (and not binary)."""

    def __init__(self, message: str, chunk: bytes) -> None:
        super().__init__(message)
        self.chunk = chunk


def _recognise(chunk: bytes) -> LogFormat | None:
    """The stock format most of the chunk's lines are in, if one is."""
    n = chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
    best, most = None, 0
    for name, text, escape in STOCK:
        fmt = compile_format(text, escape=escape, name=name)
        got = len(fmt.pattern.findall(chunk))
        if got > most:
            best, most = fmt, got
    return best if most * 2 >= n else None


def _scan(path: Path, fmt: LogFormat, strict_head: bool) -> FileScan:
    scan = FileScan(path, ReadState(path), variables=fmt.variables)
    keys = _Keys(fmt)
    assert fmt.scanner is not None
    first = True
    for chunk in chunks(path, scan.read):
        # one match per line, in order: a line not in the format comes as its text
        rows = fmt.scanner.findall(chunk)
        n = chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
        if len(rows) == n + 1:
            rows.pop()  # the empty match after the chunk's last newline: not a line
        distinct = Counter(map(keys.getter, rows))
        bad = distinct.pop(keys.bad_key, 0)
        if bad:
            _bad_lines(scan, fmt, keys, rows, first and strict_head, chunk)
        first = False
        _count(scan, keys, rows, distinct, chunk)
        scan.lines += n
    return scan


def _bad_lines(
    scan: FileScan,
    fmt: LogFormat,
    keys: _Keys,
    rows: list[tuple[bytes, ...]],
    head: bool,
    chunk: bytes,
) -> None:
    """Count and sample the chunk's lines that are not in the format (their rows hold no
    time), by file:line and reason; refuse the file when its first chunk is mostly such
    lines."""
    base = scan.lines
    t, text = keys.time_at, keys.text_at
    bad = [i for i, r in enumerate(rows) if not r[t]]
    first_bad = None
    for i in bad:
        line = rows[i][text]
        where = f"{scan.path}:{base + i + 1}"
        if not line.strip():
            scan.skipped.add("empty line", where)
            continue
        if line == LONG_LINE:
            scan.skipped.add(TOO_LONG, where)
            continue
        reason = BINARY if looks_binary(line) else NOT_IN_FORMAT
        at = ""
        if reason == NOT_IN_FORMAT and (scan.skipped.want_sample or first_bad is None):
            at = fmt.failing_field(line)
        first_bad = first_bad or (where, reason, at)
        scan.skipped.add(reason, where, at)
    good = len(rows) - len(bad)
    if head and first_bad and good * 2 < len(rows):
        where, reason, at = first_bad
        if reason == BINARY:
            raise UsageError(f"{scan.path}: binary data, not an access log ({where})")
        label = fmt.name or "the given format"
        raise _NotInFormat(
            f"{scan.path}: not in {label} ({good:,} of {len(rows):,} first lines match);"
            f" first line that does not: {where}, at {at}",
            chunk,
        )


def _count(
    scan: FileScan,
    keys: _Keys,
    rows: list[tuple[bytes, ...]],
    distinct: Counter[tuple[bytes, ...]],
    chunk: bytes,
) -> None:
    """Count a chunk's matched rows. The rows are first counted by distinct key (C), then
    the keys are turned into seconds and status classes as arrays (numpy): Python code
    runs per chunk and per distinct size, request time and connection count, not per
    line or per second."""
    tally = scan.tally
    if distinct:
        bad = _count_keys(scan, keys, distinct, chunk)
        if bad:  # a line skipped for its time feeds no size, request time or connection
            rows = [r for r in rows if keys.getter(r) not in bad]
    if keys.size_at is not None and rows:
        _count_sizes(tally, [x for r in rows if (x := r[keys.size_at])])
    if keys.rt_at is not None:
        for rt, n in Counter(map(itemgetter(keys.rt_at), rows)).items():
            ms = seconds_ms(rt)
            if ms is not None:
                tally.request_ms[ms] += n
    if keys.conn_at is not None:
        for conn, n in Counter(map(itemgetter(keys.conn_at), rows)).items():
            if conn and len(conn) <= 9:
                tally.add_conn(int(conn), n)
            elif conn:
                tally.add_conn(1 << 30, n)


def _count_keys(
    scan: FileScan, keys: _Keys, distinct: Counter[tuple[bytes, ...]], chunk: bytes
) -> set[tuple[bytes, ...]]:
    """Count the chunk's distinct keys; the keys skipped for an unreadable time."""
    tally = scan.tally
    found = list(distinct)
    n = np.fromiter(distinct.values(), np.int64, len(found))
    cols = list(zip(*found, strict=True))
    secs = _seconds(scan, keys, cols, chunk)
    ok = secs >= 0
    bad: set[tuple[bytes, ...]] = set()
    if not ok.all():
        for i in np.flatnonzero(~ok).tolist():
            where = _line_of(scan, chunk, found[i][0]) if scan.skipped.want_sample else ""
            scan.skipped.add(BAD_TIME, where, f"${keys.time}", int(n[i]))
            bad.add(found[i])
    idx = np.flatnonzero(ok)
    secs, n = secs[idx], n[idx]
    if not len(secs):
        return bad
    extra = {name: cols[keys.ntime + j] for j, name in enumerate(keys.extras)}
    status = _first_bytes(extra["status"])[idx] if "status" in extra else None
    first = _first_bytes(extra["first"])[idx] == ord("1") if "first" in extra else None
    reused = _first_bytes(extra["reused"])[idx] if "reused" in extra else None
    tally.add_rows(secs, n, status, first, reused)
    # where the span's ends were read (an outlier is named by its line): the chunk's
    # earliest and latest, when they move the span by more than a day
    lo, hi = int(secs.argmin()), int(secs.argmax())
    for moved, i in zip(tally.moves_span(int(secs[lo]), int(secs[hi])), (lo, hi), strict=True):
        if moved:
            tally.add_edge(int(secs[i]), _line_of(scan, chunk, found[int(idx[i])][0]))
    return bad


def _first_bytes(col: tuple[bytes, ...]) -> npt.NDArray[np.uint8]:
    """Each value's first byte (0 for an empty one)."""
    return np.array(col, dtype="S1").view(np.uint8)


_POW = np.array([1000, 100, 10, 1], np.int64)


def _count_sizes(tally: Tally, sizes: list[bytes]) -> None:
    """The size histogram and bytes sent; ``-`` (Apache's empty body) is 0 bytes."""
    arr = np.array(sizes, dtype="S")
    if arr.dtype.itemsize > 18:  # past int64: count such sizes as the largest bucket
        long = np.char.str_len(arr) > 18
        tally.sizes[-1] += int(long.sum())
        arr = arr[~long]
    arr[arr == b"-"] = b"0"
    values = arr.astype(np.int64)
    buckets = np.searchsorted(np.array(SIZE_EDGES, np.int64), values, side="left")
    for i, c in enumerate(np.bincount(buckets, minlength=len(tally.sizes)).tolist()):
        tally.sizes[i] += c
    tally.bytes_sent += int(values.sum())


def _seconds(
    scan: FileScan, keys: _Keys, cols: list[tuple[bytes, ...]], chunk: bytes
) -> npt.NDArray[np.int64]:
    """The second of each key (-1 where its time is not readable)."""
    if keys.time == "time_local":
        return _local_seconds(scan, cols[0], chunk)
    if keys.time == "msec":
        whole = np.array(cols[0], dtype="S")
        bad = np.char.str_len(whole) > 12
        whole[bad] = b"0"
        frac = np.array(cols[1], dtype="S3")
        ms = whole.astype(np.int64) * 1000 + frac.astype(np.int64) * _POW[np.char.str_len(frac)]
        if keys.exact:
            known = {v: seconds_ms(v) for v in set(cols[2])}
            rt = np.fromiter((-1 if (x := known[v]) is None else x for v in cols[2]), np.int64)
            bad |= rt < 0
            ms -= np.maximum(rt, 0)
        secs = ms // 1000
        bad |= (secs < 0) | (secs > LATEST)
        secs[bad] = -1
        return secs
    to_sec = _to_second(scan, keys, chunk)
    return np.fromiter(
        (-1 if (x := to_sec((t,))) is None else x for t in cols[0]), np.int64, len(cols[0])
    )


_MONTHS = np.array(
    sorted((ord(m[0]) << 16) | (ord(m[1]) << 8) | ord(m[2]) for m in MONTHS), np.int64
)
_MONTH_OF = {(ord(m[0]) << 16) | (ord(m[1]) << 8) | ord(m[2]): i + 1 for i, m in enumerate(MONTHS)}
_MONTH_NO = np.array([_MONTH_OF[int(k)] for k in _MONTHS], np.int64)
_DIGITS = [0, 1, 7, 8, 9, 10, 12, 13, 15, 16, 18, 19, 22, 23, 24, 25]
_SEPS = {2: b"/", 6: b"/", 11: b":", 14: b":", 17: b":", 20: b" "}


def _local_seconds(scan: FileScan, col: tuple[bytes, ...], chunk: bytes) -> npt.NDArray[np.int64]:
    """``$time_local`` (``28/Nov/2026:05:01:04 +0100``) to epoch seconds, as arrays; a
    value of another length goes through :func:`local_seconds` one at a time."""
    raw = np.array(col, dtype="S")
    secs = np.full(len(col), -1, np.int64)
    if raw.dtype.itemsize != 26:
        raw = np.array(col, dtype="S26")
    fixed = np.char.str_len(np.array(col, dtype="S27")) == 26
    m = raw.view(np.uint8).reshape(-1, 26).astype(np.int64)
    d = m[:, _DIGITS] - 48
    ok = fixed & ((d >= 0) & (d <= 9)).all(axis=1)
    for pos, sep in _SEPS.items():
        ok &= m[:, pos] == sep[0]
    ok &= (m[:, 21] == ord("+")) | (m[:, 21] == ord("-"))
    key = (m[:, 3] << 16) | (m[:, 4] << 8) | m[:, 5]
    at = np.minimum(np.searchsorted(_MONTHS, key), len(_MONTHS) - 1)
    ok &= _MONTHS[at] == key
    mon = _MONTH_NO[at]
    day, year = d[:, 0] * 10 + d[:, 1], d[:, 2] * 1000 + d[:, 3] * 100 + d[:, 4] * 10 + d[:, 5]
    hh, mm, ss = d[:, 6] * 10 + d[:, 7], d[:, 8] * 10 + d[:, 9], d[:, 10] * 10 + d[:, 11]
    oh, om = d[:, 12] * 10 + d[:, 13], d[:, 14] * 10 + d[:, 15]
    ok &= (day >= 1) & (day <= 31) & (hh < 24) & (mm < 60) & (ss <= 60) & (om < 60)
    # days from 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil)
    y = year - (mon <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (mon + np.where(mon > 2, -3, 9)) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    sign = np.where(m[:, 21] == ord("+"), 1, -1)
    got = days * 86400 + hh * 3600 + mm * 60 + ss - sign * (oh * 3600 + om * 60)
    ok &= (got >= 0) & (got <= LATEST)
    secs[ok] = got[ok]
    if ok.any():
        packed = np.unique(m[ok, 21] * (1 << 32) + oh[ok] * 100 + om[ok])  # sign, hh, mm
        for p in packed.tolist():
            off = f"{chr(p >> 32)}{(p & 0xFFFFFFFF) // 100:02d}{(p & 0xFFFFFFFF) % 100:02d}"
            if off not in scan.offsets:
                first = next(
                    t
                    for t, good in zip(col, ok.tolist(), strict=True)
                    if good and t.endswith(off.encode())
                )
                scan.offsets[off] = int(_line_of(scan, chunk, first).rpartition(":")[2])
    for i in np.flatnonzero(~fixed).tolist():  # another length: read one at a time
        try:
            sec, off = local_seconds(col[i])
        except (ValueError, KeyError, UnicodeDecodeError, OverflowError):
            continue
        if in_range(sec):
            secs[i] = sec
            scan.offsets.setdefault(off, int(_line_of(scan, chunk, col[i]).rpartition(":")[2]))
    return secs


def _to_second(
    scan: FileScan, keys: _Keys, chunk: bytes
) -> Callable[[tuple[bytes, ...]], int | None]:
    cache = keys.cache
    parse = local_seconds if keys.time == "time_local" else iso_seconds

    def logged(t: tuple[bytes, ...]) -> int | None:
        sec = cache.get(t)
        if sec is None:
            try:
                sec, off = parse(t[0])
            except (ValueError, KeyError, UnicodeDecodeError, OverflowError):
                return None
            if not in_range(sec):
                return None
            if off not in scan.offsets:
                scan.offsets[off] = int(_line_of(scan, chunk, t[0]).rpartition(":")[2])
            if len(cache) > 100_000:
                cache.clear()
            cache[t] = sec
        return sec

    return logged


def _line_of(scan: FileScan, chunk: bytes, text: bytes) -> str:
    at = max(chunk.find(text), 0)
    return f"{scan.path}:{scan.lines + chunk.count(NL, 0, at) + 1}"
