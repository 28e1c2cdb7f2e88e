"""One log file through its format into a :class:`Tally`, chunk by chunk.

A chunk of whole lines is matched at once (``findall`` over the chunk: the regex engine
walks the bytes in C) and counted by distinct key (``Counter`` over the captured
fields): Python code runs once per distinct second, status class, size and request time
of a chunk, not once per line. When a chunk has fewer matches than lines, its lines are
matched one by one to count and sample the ones that do not parse, with file:line.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path

from sizing.demand.clock import in_range, iso_seconds, local_seconds, msec_ms, seconds_ms
from sizing.demand.formats import DEFAULT_NAME, STOCK, LogFormat, compile_format
from sizing.demand.reader import LONG_LINE, TOO_LONG, ReadState, chunks, looks_binary
from sizing.demand.tally import EDGES_KEPT, Skipped, Tally, size_bucket
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
        self.getter = itemgetter(*[g[k] for k in tkeys + self.extras], -1)
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
    first = True
    for chunk in chunks(path, scan.read):
        rows = fmt.pattern.findall(chunk)
        n = chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
        if len(rows) != n:
            _bad_lines(scan, fmt, chunk, first and strict_head, len(rows))
        first = False
        _count(scan, keys, rows, chunk)
        scan.lines += n
    return scan


def _bad_lines(scan: FileScan, fmt: LogFormat, chunk: bytes, head: bool, good: int) -> None:
    match = fmt.pattern.match
    base = scan.lines
    lines = chunk.split(b"\n")
    if chunk.endswith(b"\n"):
        lines.pop()
    first_bad = None
    for i, line in enumerate(lines):
        if match(line):
            continue
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
    if head and first_bad and good * 2 < len(lines):
        where, reason, at = first_bad
        if reason == BINARY:
            raise UsageError(f"{scan.path}: binary data, not an access log ({where})")
        label = fmt.name or "the given format"
        raise _NotInFormat(
            f"{scan.path}: not in {label} ({good:,} of {len(lines):,} first lines match);"
            f" first line that does not: {where}, at {at}",
            chunk,
        )


def _count(scan: FileScan, keys: _Keys, rows: list[tuple[bytes, ...]], chunk: bytes) -> None:
    tally = scan.tally
    to_sec = _to_second(scan, keys, chunk)
    nt = keys.ntime
    extras = keys.extras
    seen: dict[int, bytes] = {}
    for key, n in Counter(map(keys.getter, rows)).items():
        sec = to_sec(key[:nt])
        if sec is None:
            scan.skipped.add(BAD_TIME, _line_of(scan, chunk, key[0]), f"${keys.time}", n)
            continue
        seen.setdefault(sec, key[0])
        got = dict(zip(extras, key[nt:], strict=False))
        tally.add(sec, n, got.get("status"), got.get("first") == b"1", got.get("reused"))
    # where the earliest and latest seconds were read: an outlier is named by its line
    for sec in set(heapq.nsmallest(EDGES_KEPT, seen) + heapq.nlargest(EDGES_KEPT, seen)):
        if tally.is_edge(sec):
            tally.add_edge(sec, _line_of(scan, chunk, seen[sec]))
    if keys.size_at is not None:
        for size, n in Counter(map(itemgetter(keys.size_at), rows)).items():
            b = 0 if size == b"-" else int(size)
            tally.sizes[size_bucket(b)] += n
            tally.bytes_sent += b * n
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


def _to_second(
    scan: FileScan, keys: _Keys, chunk: bytes
) -> Callable[[tuple[bytes, ...]], int | None]:
    cache = keys.cache
    if keys.time == "msec":

        def msec(t: tuple[bytes, ...]) -> int | None:
            ms = msec_ms(t[0], t[1])
            if ms is not None and keys.exact:
                rt = seconds_ms(t[2])
                ms = None if rt is None else ms - rt
            return None if ms is None or not in_range(ms // 1000) else ms // 1000

        return msec
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
