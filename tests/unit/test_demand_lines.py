"""Where a note points, and which second a request is counted in (issue 58).

Every skipped line, outlier and UTC-offset change is named by the file:line it is on,
counted as the file streams by (plain or gzip'd, across chunk boundaries), never found by
searching for its text: the logs generated here repeat the same texts on many lines, and
put a bad line's time inside another line's URL. A request is counted in the second it
arrived: the logged time (when the response ended) less ``$request_time``."""

from __future__ import annotations

import functools
import gzip
import json
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sizing.demand.reader as reader
import sizing.demand.scan as scan
from sizing.demand.formats import COMBINED, DEFAULT_NAME, compile_format
from sizing.demand.logs import read_logs

T0 = 1_764_300_000
DAY = 86_400


def stamp(sec: int, off: str = "+0000") -> str:
    shift = (1 if off[0] == "+" else -1) * (int(off[1:3]) * 3600 + int(off[3:]) * 60)
    return time.strftime(f"%d/%b/%Y:%H:%M:%S {off}", time.gmtime(sec + shift))


BAD_STAMP = "32/Nov/2025:10:00:00 +0000"  # in the format, but no time


def good(sec: int, path: str = "/", off: str = "+0000") -> str:
    return f'10.0.0.1 - - [{stamp(sec, off)}] "GET {path} HTTP/1.1" 200 512 "-" "curl/8"'


# what a bad line is, and the reason it is skipped for
BAD = {
    "not in the given format": 'garbage "with a quote',
    "time not readable": f'10.0.0.1 - - [{BAD_STAMP}] "GET / HTTP/1.1" 200 512 "-" "curl/8"',
    "empty line": "",
    "binary data": "\x00\x01 binary",
    "line too long": "x" * 70_000,
}
# a good line whose URL holds the bad texts: a search by text would find it first
DECOY = good(T0, "/?t= " + BAD_STAMP + " garbage")

_SAMPLE = re.compile(r"^(?P<file>.*):(?P<line>[0-9]+): (?P<reason>[^(]*?)(?: \(at .*\))?$")


def _read(path: Path):  # type: ignore[no-untyped-def]
    return read_logs([path], compile_format(COMBINED, name=DEFAULT_NAME), given=False)


def _write(path: Path, lines: list[str], gz: bool) -> None:
    data = "".join(x + "\n" for x in lines).encode("latin-1")
    path.write_bytes(gzip.compress(data) if gz else data)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    n=st.integers(30, 400),
    bad=st.lists(
        st.tuples(st.integers(0, 10**6), st.sampled_from(sorted(BAD))), min_size=1, max_size=5
    ),
    gz=st.booleans(),
    chunk=st.sampled_from([None, 512, 4096]),
)
def test_skipped_lines_are_named_by_their_true_line_numbers(
    tmp_path_factory: pytest.TempPathFactory,
    n: int,
    bad: list[tuple[int, str]],
    gz: bool,
    chunk: int | None,
) -> None:
    # good lines repeat one of three texts; the decoy's URL holds the bad lines' texts
    lines = [DECOY] + [good(T0 + i % 3) for i in range(n)]
    expected: dict[int, str] = {}
    for at, reason in bad:
        pos = 10 + at % (len(lines) - 10)  # after the decoy and a first chunk of good lines
        lines.insert(pos, BAD[reason])
        expected = {(k + 1 if k > pos else k): r for k, r in expected.items()}
        expected[pos + 1] = reason  # line numbers count from 1
    path = tmp_path_factory.mktemp("lines") / ("access.log.gz" if gz else "access.log")
    _write(path, lines, gz)
    with pytest.MonkeyPatch.context() as mp:
        if chunk:  # small chunks: line numbers carried across many chunk boundaries
            mp.setattr(scan, "chunks", functools.partial(reader.chunks, size=chunk))
        d = _read(path)
    got = [_SAMPLE.match(s) for s in d.skipped_samples]
    assert all(m is not None and m["file"] == str(path) for m in got), d.skipped_samples
    assert [(int(m["line"]), m["reason"]) for m in got if m] == sorted(expected.items())
    assert d.skipped == len(expected) and d.lines == len(lines)


@pytest.mark.parametrize("gz", [False, True])
def test_an_outlier_and_an_offset_change_are_named_by_their_lines(tmp_path: Path, gz: bool) -> None:
    stray = good(0)  # a host whose clock was not set
    lines = [good(T0, "/ " + stamp(0))]  # the stray's time, in a URL
    lines += [good(T0 + i // 4) for i in range(400)]  # the same texts, four times each
    lines.insert(150, stray)
    lines += [good(T0 + 100 + i, off="+0100") for i in range(50)]  # DST: the offset moves
    lines.insert(300, good(T0 + 60, "/ " + stamp(T0 + 100, "+0100")))
    path = tmp_path / ("a.log.gz" if gz else "a.log")
    _write(path, lines, gz)
    d = _read(path)
    assert any(f"{path}:151 (1970-01-01T00:00:00Z)" in x for x in d.notes), d.notes
    first_plus = 1 + next(i for i, x in enumerate(lines) if "+0100]" in x)
    assert any(f"from +0000 to +0100 at line {first_plus:,}" in x for x in d.notes), d.notes


# -- the arrival second ---------------------------------------------------------------

RT_LOCAL = '$remote_addr [$time_local] "$request" $status $request_time'
RT_MSEC = '$remote_addr $msec "$request" $status $request_time'


def _rt_line(fmt: str, end_ms: int, rt_ms: int) -> str:
    rt = f"{rt_ms // 1000}.{rt_ms % 1000:03d}"
    if fmt == RT_MSEC:
        return f'10.0.0.2 {end_ms // 1000}.{end_ms % 1000:03d} "GET / HTTP/1.1" 200 {rt}'
    return f'10.0.0.2 [{stamp(end_ms // 1000)}] "GET / HTTP/1.1" 200 {rt}'


def expected_arrival(fmt: str, end_ms: int, rt_ms: int) -> int:
    """The second the reader should count a request in: to the ms with ``$msec``; with a
    whole-second time, the middle of the logged second less the request's time."""
    if fmt == RT_MSEC:
        return (end_ms - rt_ms) // 1000
    return ((end_ms // 1000) * 1000 + 500 - rt_ms) // 1000


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    fmt=st.sampled_from([RT_LOCAL, RT_MSEC]),
    rows=st.lists(
        st.tuples(st.integers(0, 600_000), st.integers(0, 3_600_000)), min_size=1, max_size=80
    ),
)
def test_long_requests_count_in_the_second_they_arrived(
    tmp_path_factory: pytest.TempPathFactory, fmt: str, rows: list[tuple[int, int]]
) -> None:
    # (end, request time) in ms after T0: requests of up to an hour, logged when they end
    path = tmp_path_factory.mktemp("rt") / "rt.log"
    ends = [(T0 * 1000 + end, rt) for end, rt in rows]
    path.write_text("".join(_rt_line(fmt, e, rt) + "\n" for e, rt in ends))
    d = read_logs([path], compile_format(fmt), given=True)
    per = Counter(expected_arrival(fmt, e, rt) for e, rt in ends)
    assert d.totals is not None and d.totals.requests == len(rows) and not d.skipped
    assert d.requests.peak == max(per.values())
    assert d.requests.seconds == max(per) - min(per) + 1  # the span is the arrivals'
    assert d.requests.start == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(min(per)))
    assert "$request_time" in d.arrival and "arrived" in d.arrival


def test_a_burst_of_long_requests_peaks_when_it_arrived_not_when_it_ended(
    tmp_path: Path,
) -> None:
    # 300 requests arrive in one second and take 0 to 299 s: one second of 300 arrivals,
    # though no more than 2 were logged (ended) in any one second
    for fmt in (RT_LOCAL, RT_MSEC):
        path = tmp_path / "burst.log"
        start_ms = T0 * 1000 + 100
        path.write_text(
            "".join(_rt_line(fmt, start_ms + i * 1000, i * 1000) + "\n" for i in range(300))
        )
        d = read_logs([path], compile_format(fmt), given=True)
        assert d.requests.peak == 300 and d.requests.seconds == 1, fmt
        assert d.requests.peak_at == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(T0))


def test_a_counters_note_names_the_line_an_editor_would(tmp_path: Path) -> None:
    # a form feed, a file separator and NEL inside a comment are no line breaks
    from sizing.demand.counted import read_counters

    f = tmp_path / "prom.txt"
    f.write_text(
        "1764300000\nnginx_http_requests_total 100\n"
        "# comment\x0cwith\x1cbytes\x85inside\r\n"
        "1764300010\nnginx_http_requests_total NaN\n"
        "1764300020\nnginx_http_requests_total 300\n1764300030\nnginx_http_requests_total 400\n"
    )
    d = read_counters([f])
    assert any(f"{f}:5: a counter value that is not a finite number" in n for n in d.notes), d.notes


def test_json_lines_count_a_long_request_when_it_arrived(tmp_path: Path) -> None:
    # the same burst as JSON lines read by their keys: $time_local less $request_time
    path = tmp_path / "burst.json.log"
    path.write_text(
        "".join(
            json.dumps({"time_local": stamp(T0 + i), "request_time": f"{i}.000", "status": "200"})
            + "\n"
            for i in range(300)
        )
    )
    d = read_logs([path], compile_format(COMBINED, name=DEFAULT_NAME), given=False)
    assert d.requests.peak == 300 and d.requests.seconds == 1
    assert "$request_time" in d.arrival
