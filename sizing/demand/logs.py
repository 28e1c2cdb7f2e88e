"""``sizing demand FILE...`` on access logs: every file scanned, the servers' tallies
summed per second, and the demand derived with what was skipped, noted and missing."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

import sizing.demand.derive as derive
from sizing.demand.formats import LogFormat
from sizing.demand.inputs import distinct_files
from sizing.demand.jsonlog import scan_json
from sizing.demand.mix import mix_of_tally
from sizing.demand.model import Missing, SourceFile, TrafficDemand, iso
from sizing.demand.persecond import PerSecond, aligned
from sizing.demand.reader import ReadState, chunks
from sizing.demand.scan import FileScan, scan_file
from sizing.demand.servers import clock_notes, server_of
from sizing.demand.tally import CLASSES, Tally
from sizing.errors import UsageError
from sizing.workload import Assumed, Role


def _is_json(path: Path) -> bool:
    for chunk in chunks(path, ReadState(path), size=4096):
        return chunk.lstrip()[:1] == b"{"
    return False


def read_logs(
    paths: list[Path],
    fmt: LogFormat,
    *,
    given: bool,
    role: Role | None = None,
    role_source: str = "",
    assumed: tuple[Assumed, ...] = (),
) -> TrafficDemand:
    """The demand of these logs in ``fmt`` (JSON lines are read by their keys when no
    format was given). Each file is counted once: a path given twice, and a file whose lines
    are another's (its gzip'd copy, a copy), are left out with a note."""
    files, notes = distinct_files(paths)
    scans: list[FileScan] = []
    by_content: dict[str, Path] = {}
    for path in files:
        if path.stat().st_size == 0:
            notes.append(f"{path}: empty file, nothing read")
            continue
        scan = scan_json(path) if not given and _is_json(path) else scan_file(path, fmt)
        twin = by_content.get(scan.read.content_sha256)
        if twin is not None and scan.lines:
            notes.append(
                f"{path}: the same lines as {twin} (a copy, or its gzip'd copy): counted once"
            )
            continue
        by_content[scan.read.content_sha256] = path
        scans.append(scan)
    total = Tally()
    servers: dict[str, PerSecond] = {}
    for scan in scans:
        total.merge(scan.tally)
        servers.setdefault(server_of(scan.path), PerSecond()).merge(scan.tally.requests)
        notes.extend(_file_notes(scan))
    if not total.requests:
        raise UsageError("no request read: " + ("; ".join(notes) or ", ".join(map(str, paths))))
    notes.extend(clock_notes(servers))
    notes.extend(twin_notes(servers))
    notes.extend(rotation_notes(scans))
    demand = _demand(scans, total, notes)
    t = demand.totals
    unclassed = 0 if t is None or not t.classes else t.requests - sum(t.classes.values())
    if unclassed > 0:  # a status that is no HTTP class (0, 999, x): counted, in no class
        demand.notes.append(
            f"{unclassed:,} request(s) with a status outside 1xx-5xx (0, 600 or above, or"
            " not a number): counted as requests, in no status class"
        )
    have = frozenset.intersection(*(s.variables for s in scans if s.tally.requests))
    mix = mix_of_tally(total, have, role=role, role_source=role_source, assumed=assumed)
    return replace(demand, workload=mix)


def twin_notes(servers: dict[str, PerSecond]) -> list[str]:
    """One line per pair of servers whose traffic is the same, second by second, over an
    overlap of a minute or more: likely one log given twice under two names (summed, the
    fleet would be sized for twice the traffic)."""
    notes = []
    names = [n for n in sorted(servers) if servers[n]]
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            sa, sb = servers[a], servers[b]
            lo, hi = max(sa.first(), sb.first()), min(sa.last(), sb.last())
            if hi - lo < 60:
                continue
            if _same(sa, sb, lo, hi):
                notes.append(
                    f"{a} and {b} carry the same requests in every second of their overlap"
                    " (likely the same log under two names): both are summed; if they are"
                    " copies, give one"
                )
    return notes


def rotation_notes(scans: list[FileScan]) -> list[str]:
    """One line per pair of one server's files (a log and its rotations) where one holds
    the other's requests, second by second, over an overlap of a minute or more: a log
    beside a copy of most of its lines (``access.log`` and an ``access.log.1.gz`` made from
    it a little earlier, or from its first lines when they are not in time order) is
    summed as two rotations, the overlap twice. Rotations follow each other in time; the
    overlap's first and last seconds are left out of the comparison (a copy made
    mid-second holds part of its last one)."""
    by_server: dict[str, list[FileScan]] = {}
    for scan in scans:
        if scan.tally.requests:
            by_server.setdefault(server_of(scan.path), []).append(scan)
    notes = []
    for group in by_server.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                sa, sb = a.tally.requests, b.tally.requests
                lo, hi = max(sa.first(), sb.first()) + 1, min(sa.last(), sb.last()) - 1
                if hi - lo >= 60 and _holds(sa, sb, lo, hi):
                    notes.append(
                        f"{a.path} and {b.path} (files of one server): one has at least the"
                        f" other's requests in every second from {iso(lo)} to {iso(hi)}:"
                        " likely one holds the other's lines; both are summed, the overlap"
                        " twice: give the files without the copy"
                    )
    return notes


def _same(sa: PerSecond, sb: PerSecond, lo: int, hi: int) -> bool:
    """Whether two series carry the same counts in every second of [lo, hi], ten busy
    seconds or more (block by block: bounded whatever the span)."""
    busy = 0
    for _, (a, b) in aligned([sa, sb], lo, hi):
        if not np.array_equal(a, b):
            return False
        busy += int(np.count_nonzero(a))
    return busy >= 10


def _holds(sa: PerSecond, sb: PerSecond, lo: int, hi: int) -> bool:
    """Whether one series has at least the other's count in every second of [lo, hi], the
    smaller busy in ten seconds or more: a copy of some of a log's lines, in any order.
    Two files that share out one server's requests (rotations) each have seconds the
    other has not, unless one is the other's copy (block by block: bounded)."""
    le = ge = True
    busy_a = busy_b = 0
    for _, (a, b) in aligned([sa, sb], lo, hi):
        le = le and bool(np.all(a <= b))
        ge = ge and bool(np.all(a >= b))
        if not (le or ge):
            return False
        busy_a += int(np.count_nonzero(a))
        busy_b += int(np.count_nonzero(b))
    return (le and busy_a >= 10) or (ge and busy_b >= 10)


def _file_notes(scan: FileScan) -> list[str]:
    notes = list(scan.notes)
    if scan.skipped.total and not scan.tally.requests:
        why = ", ".join(f"{n:,} {r}" for r, n in scan.skipped.counts.most_common())
        notes.append(f"{scan.path}: no line read ({why}; first at {scan.skipped.samples[0]})")
    if scan.read.damage:
        notes.append(
            f"{scan.path}: {scan.read.damage}; read up to the damage ({scan.lines:,} lines)"
        )
    if len(scan.offsets) > 1:
        (a, _), (b, line) = sorted(scan.offsets.items(), key=lambda kv: kv[1])[:2]
        notes.append(
            f"{scan.path}: the UTC offset changes from {a} to {b} at line {line:,} (a DST or"
            " timezone change): each time is read with its own offset, no second is lost"
        )
    return notes


def _arrival(have: frozenset[str]) -> tuple[str, list[Missing]]:
    missing = []
    field = next(v for v in ("msec", "time_iso8601", "time_local") if v in have)
    if {"msec", "request_time"} <= have:
        arrival = "$msec − $request_time: the second each request arrived (to the ms)"
    elif "request_time" in have:
        arrival = (
            f"${field} − $request_time: the second each request most likely arrived (1 s"
            " resolution: the logged second's middle less the request's time)"
        )
        missing.append(Missing("the arrival second to the millisecond", "$msec"))
    else:
        arrival = (
            f"${field}: the second each response was logged (1 s resolution; a request"
            " is counted in the second it ended, not the one it arrived)"
        )
        missing.append(Missing("the arrival second to the millisecond", "$msec $request_time"))
    if "connection_requests" not in have:
        missing.append(
            Missing("new connections/s and requests per connection", "$connection_requests")
        )
    if "ssl_session_reused" not in have:
        add = "$ssl_session_reused"
        if "connection_requests" not in have:
            add = "$connection_requests $ssl_session_reused"
        missing.append(Missing("full TLS handshakes/s and the resumption share", add))
    if not ({"bytes_sent", "body_bytes_sent"} & have):
        missing.append(Missing("the response-size mix", "$bytes_sent"))
    if "request_time" not in have:
        missing.append(Missing("the p50/p99 request time", "$request_time"))
    return arrival, missing


def _skipped_note(scans: list[FileScan], lines: int) -> str:
    skipped = sum(s.skipped.total for s in scans)
    samples = [x for s in scans for x in s.skipped.samples]
    reasons = Counter[str]()
    for s in scans:
        reasons.update(s.skipped.counts)
    why = ", ".join(f"{n:,} {r}" for r, n in reasons.most_common())
    return f"{skipped:,} of {lines:,} lines skipped ({why}); first at {samples[0]}"


def _demand(scans: list[FileScan], t: Tally, notes: list[str]) -> TrafficDemand:
    outlying = derive.drop_outliers(t)
    if outlying:
        notes.append(outlying)
    start, end = t.requests.first(), t.requests.last()
    have = frozenset.intersection(*(s.variables for s in scans if s.tally.requests))
    arrival, missing = _arrival(have)
    has_conn = "connection_requests" in have
    has_tls = has_conn and "ssl_session_reused" in have
    chart_start, chart = derive.busiest_hour(t.requests, start, end)
    skipped = sum(s.skipped.total for s in scans)
    lines = sum(s.lines for s in scans)
    if skipped:
        notes.insert(0, _skipped_note(scans, lines))
    return TrafficDemand(
        method=f"{len(scans)} access log" + ("s" if len(scans) > 1 else ""),
        arrival=arrival,
        resolution_s=0.001 if "(to the ms)" in arrival else 1.0,
        requests=derive.rate(t.requests, start, end),
        classes={c: derive.rate(t.classes[c], start, end) for c in CLASSES if t.classes[c]},
        new_connections=derive.rate(t.new_connections, start, end) if has_conn else None,
        full_handshakes=derive.rate(t.full_handshakes, start, end) if has_tls else None,
        resumption_share=derive.resumption_share(t) if has_tls else None,
        requests_per_connection=derive.per_connection(t) if has_conn else None,
        sizes=derive.sizes(t),
        request_time_ms=derive.request_time(t),
        chart_start=iso(chart_start),
        chart=chart,
        sources=[_source(s) for s in scans],
        lines=lines,
        skipped=skipped,
        skipped_samples=[x for s in scans for x in s.skipped.samples][:5],
        notes=notes,
        missing=missing,
        totals=derive.totals(t, t.outliers, bool({"bytes_sent", "body_bytes_sent"} & have)),
    )


def _source(scan: FileScan) -> SourceFile:
    return SourceFile(
        path=str(scan.path),
        sha256=scan.read.sha256,
        bytes=scan.path.stat().st_size,
        lines=scan.lines,
        skipped=dict(scan.skipped.counts),
        gzip=scan.read.gzip,
        damage=scan.read.damage,
        server=server_of(scan.path),
    )
