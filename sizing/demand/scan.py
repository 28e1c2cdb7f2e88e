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
from types import ModuleType

import numpy as np
import numpy.typing as npt

from sizing.demand import fastscan
from sizing.demand.clock import seconds_ms
from sizing.demand.formats import DEFAULT_NAME, STOCK, LogFormat, compile_format
from sizing.demand.reader import LONG_LINE, TOO_LONG, ReadState, chunks, looks_binary
from sizing.demand.tally import Skipped, Tally
from sizing.demand.times import Cache, seconds
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
        self.cache: Cache = {}


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
        native = fastscan.native() if fmt.program is not None else None
        if native is not None:  # the lines in the format: all but those returned as not
            found = native.scan(chunk, fmt.program, fmt.time_field == "msec")
            got = found[0] - len(found[8])
        else:
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
    native = fastscan.native() if fmt.program is not None else None
    first = True
    for chunk in chunks(path, scan.read):
        if native is not None:  # the compiled reader: the same counts, from columns
            n = _fast_chunk(scan, fmt, keys, native, chunk, first and strict_head)
        else:
            n = _regex_chunk(scan, fmt, keys, chunk, first and strict_head)
        first = False
        scan.lines += n
    return scan


def _fast_chunk(
    scan: FileScan, fmt: LogFormat, keys: _Keys, native: ModuleType, chunk: bytes, head: bool
) -> int:
    cols = fastscan.read_chunk(native, chunk, fmt, scan.offsets, scan.lines)
    skips = _bad_lines(scan, fmt, cols.bad, cols.rows, head, chunk) if cols.bad else []
    bad_rows = fastscan.count(scan.tally, cols, fmt, f"{scan.path}:", scan.lines)
    _skip(scan, fmt, keys, dict(cols.bad), skips, len(bad_rows), lambda: bad_rows)
    return cols.rows


def _regex_chunk(scan: FileScan, fmt: LogFormat, keys: _Keys, chunk: bytes, head: bool) -> int:
    # one match per line, in order: a line not in the format comes as its text
    assert fmt.scanner is not None
    rows = fmt.scanner.findall(chunk)
    if chunk.endswith(b"\n"):
        rows.pop()  # the empty match after the chunk's last newline: not a line
    n = len(rows)  # one match per line: the lines, counted without a pass of their own
    keyed = list(map(keys.getter, rows))
    lines = _Lines(scan.path, scan.lines, keyed)
    distinct = Counter(keyed)
    skips: list[tuple[int, str]] = []
    bad: list[tuple[int, bytes]] = []
    if distinct.pop(keys.bad_key, 0):
        bad = [(i, r[keys.text_at]) for i, r in enumerate(rows) if not r[keys.time_at]]
        skips = _bad_lines(scan, fmt, bad, n, head, chunk)
    bad_time = _count(scan, keys, rows, distinct, lines)
    rows_of = lines.rows_of
    _skip(scan, fmt, keys, dict(bad), skips, bad_time.total(), lambda: rows_of(bad_time))
    return n


def _bad_lines(
    scan: FileScan,
    fmt: LogFormat,
    bad: list[tuple[int, bytes]],
    n: int,
    head: bool,
    chunk: bytes,
) -> list[tuple[int, str]]:
    """The chunk's lines that are not in the format (row, text), as (row, reason); the
    file is refused when its first chunk is mostly such lines, naming the first by
    file:line and the field it fails at."""
    good = n - len(bad)
    if head and good * 2 < n:  # refused at its first line that fails, if one does
        for i, line in bad:
            reason = _reason(line)
            if reason == BINARY:
                where = f"{scan.path}:{scan.lines + i + 1}"
                raise UsageError(f"{scan.path}: binary data, not an access log ({where})")
            if reason == NOT_IN_FORMAT:
                label = fmt.name or "the given format"
                raise _NotInFormat(
                    f"{scan.path}: not in {label} ({good:,} of {n:,} first lines match);"
                    f" first line that does not: {scan.path}:{scan.lines + i + 1}, at"
                    f" {fmt.failing_field(line)}",
                    chunk,
                )
    return [(i, _reason(line)) for i, line in bad]


def _reason(line: bytes) -> str:
    """Why a line not in the format is skipped."""
    if not line.strip():
        return "empty line"
    if line == LONG_LINE:
        return TOO_LONG
    return BINARY if looks_binary(line) else NOT_IN_FORMAT


def _skip(
    scan: FileScan,
    fmt: LogFormat,
    keys: _Keys,
    texts: dict[int, bytes],
    skips: list[tuple[int, str]],
    bad_time: int,
    bad_time_rows: Callable[[], list[int]],
) -> None:
    """Count the chunk's skipped lines; the first few of the file, in line order, are
    sampled by file:line, reason and the field that failed (never their text)."""
    skipped = scan.skipped
    if bad_time and skipped.want_sample:
        skips = skips + [(i, BAD_TIME) for i in bad_time_rows()]
    elif bad_time:
        skipped.add(BAD_TIME, "", f"${keys.time}", bad_time)
    skips = sorted(skips)
    k = 0
    while k < len(skips) and skipped.want_sample:
        i, reason = skips[k]
        at = ""
        if reason == NOT_IN_FORMAT:
            at = fmt.failing_field(texts[i])
        elif reason == BAD_TIME:
            at = f"${keys.time}"
        skipped.add(reason, f"{scan.path}:{scan.lines + i + 1}", at)
        k += 1
    # the rest counted by reason at once: a chunk of short bad lines is tens of thousands
    for reason, n in Counter(reason for _, reason in skips[k:]).items():
        skipped.add(reason, "", "", n)


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

    rt_col = cols[keys.ntime - 1] if keys.minus_rt else None
    secs = seconds(scan.offsets, keys.time, cols, rt_col, keys.cache, line_at)
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


def _count_sizes(tally: Tally, sizes: list[bytes]) -> None:
    """The size histogram and bytes sent; ``-`` (Apache's empty body) is 0 bytes."""
    arr = np.array(sizes, dtype="S")
    long = 0
    if arr.dtype.itemsize > 18:  # past int64: count such sizes as the largest bucket
        over = np.char.str_len(arr) > 18
        long = int(over.sum())
        arr = arr[~over]
    arr[arr == b"-"] = b"0"
    tally.add_sizes(arr.astype(np.int64), long)
