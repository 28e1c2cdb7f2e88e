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
from collections.abc import Callable, Container
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
        # the logged time is when the response ended: $request_time, when logged, takes
        # each request back to the second it arrived (docs/demand.md, "arrival second")
        self.minus_rt = "request_time" in g
        tkeys = ["msec_s", "msec_ms"] if self.time == "msec" else [self.time]
        tkeys += ["request_time"] if self.minus_rt else []
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


class _Lines:
    """Where a chunk's rows are in the file: row ``i`` is line ``base + i + 1`` (one row
    per line, counted as the chunk streams by, gzip'd or not), and the rows' keys, to find
    the first line that holds a key (never by searching the chunk for text: the same text
    can be on several lines, or inside another field)."""

    def __init__(self, path: Path, base: int, keyed: list[tuple[bytes, ...]]) -> None:
        self.path, self.base, self.keyed = path, base, keyed

    def where(self, row: int) -> str:
        return f"{self.path}:{self.base + row + 1}"

    def line_of(self, key: tuple[bytes, ...]) -> int:
        """The line number of the first row with ``key`` (it is one of the chunk's)."""
        return self.base + self.keyed.index(key) + 1

    def rows_of(self, wanted: Container[tuple[bytes, ...]]) -> list[int]:
        return [i for i, k in enumerate(self.keyed) if k in wanted]


def _scan(path: Path, fmt: LogFormat, strict_head: bool) -> FileScan:
    scan = FileScan(path, ReadState(path), variables=fmt.variables)
    keys = _Keys(fmt)
    assert fmt.scanner is not None
    first = True
    for chunk in chunks(path, scan.read):
        # one match per line, in order: a line not in the format comes as its text
        rows = fmt.scanner.findall(chunk)
        if chunk.endswith(b"\n"):
            rows.pop()  # the empty match after the chunk's last newline: not a line
        n = len(rows)  # one match per line: the lines, counted without a pass of their own
        keyed = list(map(keys.getter, rows))
        lines = _Lines(path, scan.lines, keyed)
        distinct = Counter(keyed)
        skips: list[tuple[int, str]] = []
        if distinct.pop(keys.bad_key, 0):
            skips = _bad_lines(scan, fmt, keys, rows, lines, first and strict_head, chunk)
        first = False
        bad_time = _count(scan, keys, rows, distinct, lines)
        _skip(scan, fmt, keys, rows, lines, skips, bad_time)
        scan.lines += n
    return scan


def _bad_lines(
    scan: FileScan,
    fmt: LogFormat,
    keys: _Keys,
    rows: list[tuple[bytes, ...]],
    lines: _Lines,
    head: bool,
    chunk: bytes,
) -> list[tuple[int, str]]:
    """The chunk's lines that are not in the format (their rows hold no time), as (row,
    reason); the file is refused when its first chunk is mostly such lines, naming the
    first by file:line and the field it fails at."""
    t, text = keys.time_at, keys.text_at
    out = []
    for i, r in enumerate(rows):
        if r[t]:
            continue
        line = r[text]
        reason = NOT_IN_FORMAT
        if not line.strip():
            reason = "empty line"
        elif line == LONG_LINE:
            reason = TOO_LONG
        elif looks_binary(line):
            reason = BINARY
        out.append((i, reason))
    failing = [(i, reason) for i, reason in out if reason in (BINARY, NOT_IN_FORMAT)]
    good = len(rows) - len(out)
    if head and failing and good * 2 < len(rows):
        i, reason = failing[0]
        if reason == BINARY:
            raise UsageError(f"{scan.path}: binary data, not an access log ({lines.where(i)})")
        label = fmt.name or "the given format"
        raise _NotInFormat(
            f"{scan.path}: not in {label} ({good:,} of {len(rows):,} first lines match);"
            f" first line that does not: {lines.where(i)}, at {fmt.failing_field(rows[i][text])}",
            chunk,
        )
    return out


def _skip(
    scan: FileScan,
    fmt: LogFormat,
    keys: _Keys,
    rows: list[tuple[bytes, ...]],
    lines: _Lines,
    skips: list[tuple[int, str]],
    bad_time: Counter[tuple[bytes, ...]],
) -> None:
    """Count the chunk's skipped lines; the first few of the file, in line order, are
    sampled by file:line, reason and the field that failed (never their text)."""
    skipped = scan.skipped
    if bad_time and skipped.want_sample:
        skips = skips + [(i, BAD_TIME) for i in lines.rows_of(bad_time)]
    elif bad_time:
        skipped.add(BAD_TIME, "", f"${keys.time}", bad_time.total())
    for i, reason in sorted(skips):
        at = ""
        if skipped.want_sample:
            if reason == NOT_IN_FORMAT:
                at = fmt.failing_field(rows[i][keys.text_at])
            elif reason == BAD_TIME:
                at = f"${keys.time}"
        skipped.add(reason, lines.where(i) if skipped.want_sample else "", at)


def _count(
    scan: FileScan,
    keys: _Keys,
    rows: list[tuple[bytes, ...]],
    distinct: Counter[tuple[bytes, ...]],
    lines: _Lines,
) -> Counter[tuple[bytes, ...]]:
    """Count a chunk's matched rows; the keys skipped for an unreadable time, with their
    counts. The rows are first counted by distinct key (C), then the keys are turned into
    seconds and status classes as arrays (numpy): Python code runs per chunk and per
    distinct size, request time and connection count, not per line or per second."""
    tally = scan.tally
    bad: Counter[tuple[bytes, ...]] = Counter()
    if distinct:
        bad = _count_keys(scan, keys, distinct, lines)
        if bad:  # a line skipped for its time feeds no size, request time or connection
            rows = [r for r, k in zip(rows, lines.keyed, strict=True) if k not in bad]
    if keys.size_at is not None and rows:
        _count_sizes(tally, list(filter(None, map(itemgetter(keys.size_at), rows))))
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
    return bad


def _count_keys(
    scan: FileScan, keys: _Keys, distinct: Counter[tuple[bytes, ...]], lines: _Lines
) -> Counter[tuple[bytes, ...]]:
    """Count the chunk's distinct keys; the keys skipped for an unreadable time."""
    tally = scan.tally
    found = list(distinct)
    n = np.fromiter(distinct.values(), np.int64, len(found))
    cols = list(zip(*found, strict=True))

    def line_at(i: int) -> int:  # the first line of the i-th distinct key
        return lines.line_of(found[i])

    secs = _seconds(scan, keys, cols, line_at)
    ok = secs >= 0
    bad: Counter[tuple[bytes, ...]] = Counter()
    if not ok.all():
        for i in np.flatnonzero(~ok).tolist():
            bad[found[i]] = int(n[i])
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
            tally.add_edge(int(secs[i]), f"{scan.path}:{line_at(int(idx[i]))}")
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
    scan: FileScan, keys: _Keys, cols: list[tuple[bytes, ...]], line_at: Callable[[int], int]
) -> npt.NDArray[np.int64]:
    """The arrival second of each key (-1 where its time is not readable): the logged
    time, when the response ended, less ``$request_time`` when that is logged. ``$msec``
    is to the ms, so the arrival is too; ``$time_local`` and ``$time_iso8601`` name the
    second the response ended in, so the arrival is the most likely second: that second's
    middle less the request's time (a request of 0.6 s logged at 05:01:04 most likely
    arrived in 05:01:03)."""
    if keys.time == "msec":
        whole = np.array(cols[0], dtype="S")
        bad = np.char.str_len(whole) > 12
        whole[bad] = b"0"
        frac = np.array(cols[1], dtype="S3")
        ms = whole.astype(np.int64) * 1000 + frac.astype(np.int64) * _POW[np.char.str_len(frac)]
    else:
        if keys.time == "time_local":
            logged = _local_seconds(scan, cols[0], line_at)
        else:
            to_sec = _to_second(scan, keys, line_at)
            logged = np.fromiter(
                (-1 if (x := to_sec(i, t)) is None else x for i, t in enumerate(cols[0])),
                np.int64,
                len(cols[0]),
            )
        bad = logged < 0
        ms = logged * 1000 + 500
    if keys.minus_rt:
        col = cols[keys.ntime - 1]
        known = {v: seconds_ms(v) for v in set(col)}
        rt = np.fromiter((-1 if (x := known[v]) is None else x for v in col), np.int64, len(col))
        bad |= rt < 0
        ms -= np.maximum(rt, 0)
    secs = ms // 1000
    bad |= (secs < 0) | (secs > LATEST)
    secs[bad] = -1
    return secs


_MONTHS = np.array(
    sorted((ord(m[0]) << 16) | (ord(m[1]) << 8) | ord(m[2]) for m in MONTHS), np.int64
)
_MONTH_OF = {(ord(m[0]) << 16) | (ord(m[1]) << 8) | ord(m[2]): i + 1 for i, m in enumerate(MONTHS)}
_MONTH_NO = np.array([_MONTH_OF[int(k)] for k in _MONTHS], np.int64)
_DIGITS = [0, 1, 7, 8, 9, 10, 12, 13, 15, 16, 18, 19, 22, 23, 24, 25]
_SEPS = {2: b"/", 6: b"/", 11: b":", 14: b":", 17: b":", 20: b" "}


def _local_seconds(
    scan: FileScan, col: tuple[bytes, ...], line_at: Callable[[int], int]
) -> npt.NDArray[np.int64]:
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
            if off not in scan.offsets:  # its first line: the keys come in line order
                first = next(
                    i
                    for i, (t, good) in enumerate(zip(col, ok.tolist(), strict=True))
                    if good and t.endswith(off.encode())
                )
                scan.offsets[off] = line_at(first)
    for i in np.flatnonzero(~fixed).tolist():  # another length: read one at a time
        try:
            sec, off = local_seconds(col[i])
        except (ValueError, KeyError, UnicodeDecodeError, OverflowError):
            continue
        if in_range(sec):
            secs[i] = sec
            if off not in scan.offsets:
                scan.offsets[off] = line_at(i)
    return secs


def _to_second(
    scan: FileScan, keys: _Keys, line_at: Callable[[int], int]
) -> Callable[[int, bytes], int | None]:
    """The second of the i-th distinct key's ``$time_iso8601`` (None when not readable),
    cached by value."""
    cache = keys.cache
    parse = local_seconds if keys.time == "time_local" else iso_seconds

    def logged(i: int, value: bytes) -> int | None:
        t = (value,)
        sec = cache.get(t)
        if sec is None:
            try:
                sec, off = parse(t[0])
            except (ValueError, KeyError, UnicodeDecodeError, OverflowError):
                return None
            if not in_range(sec):
                return None
            if off not in scan.offsets:
                scan.offsets[off] = line_at(i)
            if len(cache) > 100_000:
                cache.clear()
            cache[t] = sec
        return sec

    return logged
