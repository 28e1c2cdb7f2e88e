"""Property tests of the log reader (issue 58): log lines of every supported format built
by hypothesis, one field of one line mutated, and the files read as ``sizing demand``
reads them. Whatever the bytes: no exception but UsageError; every line counted once
(read, an outlier, or skipped with a reason); and what is read equals an independent
count of the lines as written (requests, per status class, bytes sent, the busiest
second). The real public fixtures (tests/data/logs, see SOURCE.md) read with their known
totals."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.demand.formats import COMBINED, DEFAULT_NAME, compile_format
from sizing.demand.logs import read_logs
from sizing.errors import UsageError

T0 = 1_764_300_000
DATA = Path(__file__).resolve().parent.parent / "data" / "logs"
RICH = (
    '$remote_addr [$time_local] "$request" $status $bytes_sent $msec $request_time'
    " $connection_requests $ssl_session_reused"
)
SETTINGS = settings(
    max_examples=60,
    deadline=3000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

_text = st.text(
    st.characters(codec="ascii", exclude_characters='"\n\r\\', min_codepoint=32), max_size=30
)
record = st.fixed_dictionaries(
    {
        "sec": st.integers(0, 600),
        "ms": st.integers(0, 999),
        "rt": st.integers(0, 5000),
        "status": st.integers(100, 599),
        "size": st.one_of(st.integers(0, 10**9), st.just(-1)),  # -1: Apache's "-"
        "client": st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3}){3}|[a-z0-9.-]{1,20}", fullmatch=True),
        "path": _text.map(lambda s: "/" + s.replace(" ", "%20")),
        "agent": _text,
        "conn": st.integers(1, 2000),
        "reused": st.sampled_from([".", "r", "-", ""]),
    }
)


def _stamp(r: dict[str, int | str]) -> str:
    return time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(T0 + int(r["sec"])))


def _size(r: dict[str, int | str], dash: bool) -> str:
    return "-" if dash and r["size"] == -1 else str(max(0, int(r["size"])))


def render(kind: str, r: dict[str, int | str]) -> str:
    """One line of ``kind`` for the record."""
    req = f"GET {r['path']} HTTP/1.1"
    head = f'{r["client"]} - - [{_stamp(r)}] "{req}" {r["status"]}'
    if kind == "combined":
        return f'{head} {_size(r, False)} "-" "{r["agent"]}"'
    if kind == "main":
        return f'{head} {_size(r, False)} "-" "{r["agent"]}" "-"'
    if kind == "apache common":
        return f"{head} {_size(r, True)}"
    if kind == "apache combined":
        return f'{head} {_size(r, True)} "http://x.invalid/" "{r["agent"]}"'
    msec = f"{T0 + int(r['sec']) + int(r['rt']) // 1000}.{(int(r['ms']) + int(r['rt'])) % 1000:03d}"
    if kind == "json":
        return json.dumps(
            {
                "time_local": _stamp(r),
                "remote_addr": r["client"],
                "request": req,
                "status": str(r["status"]),
                "bytes_sent": _size(r, False),
                "connection_requests": str(r["conn"]),
                "ssl_session_reused": r["reused"],
            }
        )
    assert kind == "rich"
    return (
        f'{r["client"]} [{_stamp(r)}] "{req}" {r["status"]} {_size(r, False)} {msec}'
        f" {int(r['rt']) / 1000:.3f} {r['conn']} {r['reused']}"
    )


KINDS = ("combined", "main", "apache common", "apache combined", "json", "rich")


def read(path: Path, kind: str):  # type: ignore[no-untyped-def]
    if kind == "rich":
        return read_logs([path], compile_format(RICH), given=True)
    return read_logs([path], compile_format(COMBINED, name=DEFAULT_NAME), given=False)


def arrival(kind: str, r: dict[str, int | str]) -> int:
    """The second the reader should count the record in, independently."""
    if kind != "rich":
        return T0 + int(r["sec"])
    end_ms = (T0 + int(r["sec"]) + int(r["rt"]) // 1000) * 1000
    end_ms += (int(r["ms"]) + int(r["rt"])) % 1000
    return (end_ms - int(r["rt"])) // 1000


@SETTINGS
@given(kind=st.sampled_from(KINDS), rows=st.lists(record, min_size=1, max_size=60))
def test_every_format_reads_what_an_independent_count_says(
    tmp_path_factory, kind: str, rows: list[dict[str, int | str]]
) -> None:
    path = tmp_path_factory.mktemp("p") / "access.log"
    path.write_text("".join(render(kind, r) + "\n" for r in rows))
    d = read(path, kind)
    assert d.totals is not None
    assert d.lines == len(rows) and d.skipped == 0
    assert d.totals.requests + d.totals.outliers == len(rows)
    per = Counter(arrival(kind, r) for r in rows)
    if not d.totals.outliers:
        assert d.requests.peak == max(per.values())
        classes = Counter(f"{int(r['status']) // 100}xx" for r in rows)
        assert d.totals.classes == dict(classes)
        assert d.totals.bytes_sent == sum(max(0, int(r["size"])) for r in rows)


_MUTATIONS = st.sampled_from(
    ["cut", "byte", "quote", "nul", "digits", "empty", "long", "newline", "huge time"]
)


def mutate(line: str, how: str, at: int, byte: int) -> str:
    at = at % (len(line) + 1)
    return {
        "cut": line[:at],
        "byte": line[:at] + chr(byte) + line[at + 1 :],
        "quote": line[:at] + '"' + line[at:],
        "nul": line[:at] + "\x00" + line[at:],
        "digits": line[:at] + "9" * 5000 + line[at:],
        "empty": "",
        "long": line[:at] + "x" * 70_000 + line[at:],
        "newline": line[:at] + "\n" + line[at:],
        "huge time": line.replace("2025", "99999", 1).replace(str(T0)[:6], "9" * 20, 1),
    }[how]


@SETTINGS
@given(
    kind=st.sampled_from(KINDS),
    rows=st.lists(record, min_size=2, max_size=40),
    which=st.integers(0, 10**6),
    how=_MUTATIONS,
    at=st.integers(0, 10**6),
    byte=st.integers(0, 255),
)
def test_one_mutated_field_never_crashes_and_every_line_is_counted_once(
    tmp_path_factory,
    kind: str,
    rows: list[dict[str, int | str]],
    which: int,
    how: str,
    at: int,
    byte: int,
) -> None:
    lines = [render(kind, r) for r in rows]
    i = which % len(lines)
    lines[i] = mutate(lines[i], how, at, byte)
    path = tmp_path_factory.mktemp("m") / "access.log"
    path.write_bytes("".join(x + "\n" for x in lines).encode("utf-8", "surrogateescape"))
    t = time.process_time()
    try:
        d = read(path, kind)
    except UsageError:
        return  # refused in one line: the first chunk is mostly not in the format
    assert time.process_time() - t < 2
    assert d.totals is not None
    # each line read once: counted, an outlier, or skipped with a reason
    assert d.totals.requests + d.totals.outliers + d.skipped == d.lines
    assert d.lines == sum(x.count("\n") + 1 for x in lines)
    assert sum(sum(s.skipped.values()) for s in d.sources) == d.skipped


def test_real_public_logs_read_with_their_known_totals() -> None:
    elastic = read_logs(
        [DATA / "elastic_apache_logs.gz"], compile_format(COMBINED, name=DEFAULT_NAME), given=False
    )
    assert elastic.lines == 10_000 and elastic.skipped == 1  # line 8,899 is cut short
    assert elastic.totals is not None and elastic.totals.requests == 9_999
    assert elastic.totals.classes == {"2xx": 9_170, "3xx": 609, "4xx": 217, "5xx": 3}
    assert elastic.requests.start == "2015-05-17T10:05:00Z"
    nasa = read_logs(
        [DATA / "nasa_access_log_aug95_head.gz"],
        compile_format(COMBINED, name=DEFAULT_NAME),
        given=False,
    )
    assert any("read in Apache's common format" in n for n in nasa.notes)
    assert nasa.lines == 1_930 and nasa.totals is not None
    assert nasa.totals.requests == 1_841 and nasa.skipped == 89  # the copy's split lines
    assert nasa.totals.classes == {"2xx": 1_680, "3xx": 156, "4xx": 5}
    # -0400 read with its offset: 01/Aug/1995:00:00:01 -0400 is 04:00:01 UTC
    assert nasa.requests.start == "1995-08-01T04:00:01Z"


@settings(max_examples=80, deadline=2000)
@given(
    batches=st.lists(
        st.lists(st.tuples(st.integers(-5, 300), st.integers(1, 50)), max_size=40), max_size=12
    ),
    pending=st.sampled_from([1, 3, 1 << 18]),
)
def test_per_second_counts_equal_a_counter_whatever_the_batching(
    batches: list[list[tuple[int, int]]], pending: int
) -> None:
    import numpy as np

    import sizing.demand.persecond as ps

    old, ps._PENDING = ps._PENDING, pending  # compact often, or never until read
    try:
        want: Counter[int] = Counter()
        got, other = ps.PerSecond(), ps.PerSecond()
        for i, batch in enumerate(batches):
            for s, n in batch:
                want[s] += n
            if i % 3 == 2:  # one at a time, as the JSON path adds
                for s, n in batch:
                    got.add(s, n)
            elif batch:
                target = other if i % 3 == 1 else got
                secs = np.array([s for s, _ in batch], np.int64)
                target.add_many(secs, np.array([n for _, n in batch], np.int64))
        shared = ps.PerSecond()
        shared.merge(other)  # shares other's arrays: merging more must not change other's
        before = dict(other.items())
        got.merge(other)
        shared.merge(got)
        assert dict(other.items()) == before
        assert dict(got.items()) == dict(want)
        assert list(got.secs) == sorted(want)
        assert got.total() == sum(want.values())
        if want:
            lo, hi = min(want), max(want)
            assert got.dense(lo, hi).tolist() == [want.get(s, 0) for s in range(lo, hi + 1)]
    finally:
        ps._PENDING = old
