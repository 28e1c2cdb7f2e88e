"""One log file through its format into a :class:`Tally`, chunk by chunk.

A chunk of whole lines is matched at once (``findall`` over the chunk: the regex engine
walks the bytes in C) and counted by distinct key (``Counter`` over the captured
fields): Python code runs once per distinct second, status class, size and request time
of a chunk, not once per line. When a chunk has fewer matches than lines, its lines are
matched one by one to count and sample the ones that do not parse, with file:line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path

from sizing.demand.clock import iso_seconds, local_seconds, seconds_ms
from sizing.demand.formats import LogFormat
from sizing.demand.reader import ReadState, chunks, looks_binary
from sizing.demand.tally import Skipped, Tally, size_bucket
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
        self.cache: dict[tuple[bytes, ...], int] = {}


def scan_file(path: Path, fmt: LogFormat, *, strict_head: bool = True) -> FileScan:
    """Read ``path`` in ``fmt``; refuse it (UsageError) when its first chunk is binary or
    mostly not in the format, naming the first line that does not match."""
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
        raise UsageError(
            f"{scan.path}: not in {label} ({good} of {len(lines)} first lines match);"
            f" first line that does not: {where}, at {at}"
        )


def _count(scan: FileScan, keys: _Keys, rows: list[tuple[bytes, ...]], chunk: bytes) -> None:
    tally = scan.tally
    to_sec = _to_second(scan, keys, chunk)
    nt = keys.ntime
    extras = keys.extras
    for key, n in Counter(map(keys.getter, rows)).items():
        sec = to_sec(key[:nt])
        if sec is None:
            scan.skipped.add(BAD_TIME, _line_of(scan, chunk, key[0]), f"${keys.time}", n)
            continue
        got = dict(zip(extras, key[nt:], strict=False))
        tally.add(sec, n, got.get("status"), got.get("first") == b"1", got.get("reused"))
    if keys.size_at is not None:
        for size, n in Counter(map(itemgetter(keys.size_at), rows)).items():
            tally.sizes[size_bucket(int(size))] += n
    if keys.rt_at is not None:
        for rt, n in Counter(map(itemgetter(keys.rt_at), rows)).items():
            tally.request_ms[seconds_ms(rt)] += n


def _to_second(
    scan: FileScan, keys: _Keys, chunk: bytes
) -> Callable[[tuple[bytes, ...]], int | None]:
    cache = keys.cache
    if keys.time == "msec":

        def msec(t: tuple[bytes, ...]) -> int | None:
            ms = int(t[0]) * 1000 + int((t[1] + b"00")[:3])
            if keys.exact:
                ms -= seconds_ms(t[2])
            return ms // 1000

        return msec
    parse = local_seconds if keys.time == "time_local" else iso_seconds

    def logged(t: tuple[bytes, ...]) -> int | None:
        sec = cache.get(t)
        if sec is None:
            try:
                sec, off = parse(t[0])
            except (ValueError, KeyError, UnicodeDecodeError):
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
