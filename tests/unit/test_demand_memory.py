"""The per-second store's memory is a fixed budget, whatever the span (issue 58).

:class:`PerSecond` keeps a few blocks of seconds hot and spills the rest, compressed, to a
temporary file: the counts are checked against a plain Counter with a budget so small that
nearly every block is spilled and read back; the figures read block by block (rates,
outliers) against the array computations they replace; and the peak RSS of a process
reading one request a second is measured for a span ten times longer."""

from __future__ import annotations

import math
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sizing.demand.persecond as ps
from sizing.demand import derive

BLOCK = ps.BLOCK


@contextmanager
def budget(nbytes: int) -> Iterator[None]:
    """Hot blocks up to ``nbytes`` (1: every block but the one in use is spilled)."""
    old = ps.HOT_BYTES
    ps.HOT_BYTES = nbytes
    try:
        yield
    finally:
        ps.HOT_BYTES = old


# seconds over a few blocks, near the edges of blocks, below 0 and far away
_sec = st.one_of(
    st.integers(-3 * BLOCK, 6 * BLOCK),
    st.sampled_from([0, BLOCK - 1, BLOCK, 2 * BLOCK - 1, -1, 10**9, 10**11]),
)


@settings(max_examples=80, deadline=None)
@given(
    batches=st.lists(st.lists(st.tuples(_sec, st.integers(1, 300)), max_size=30), max_size=10),
    hot=st.sampled_from([1, 20_000, 1 << 30]),
    dropped=st.lists(_sec, max_size=5),
)
def test_counts_equal_a_counter_when_blocks_are_spilled_and_read_back(
    batches: list[list[tuple[int, int]]], hot: int, dropped: list[int]
) -> None:
    with budget(hot):
        want: Counter[int] = Counter()
        got, other = ps.PerSecond(), ps.PerSecond()
        for i, batch in enumerate(batches):
            for s, n in batch:
                want[s] += n
            target = other if i % 2 else got
            if batch:
                target.add_many(
                    np.array([s for s, _ in batch], np.int64),
                    np.array([n for _, n in batch], np.int64),
                )
        before = dict(other.items())
        got.merge(other)
        assert dict(other.items()) == before  # merging reads, never changes, the other
        got.drop(np.array(dropped, np.int64))
        for s in dropped:
            want.pop(s, None)
        assert dict(got.items()) == dict(want)
        assert got.total() == sum(want.values())
        assert list(got.secs) == sorted(want)
        if want:
            lo, hi = min(want), max(want)
            assert (got.first(), got.last()) == (lo, hi)
            a, b = max(lo, hi - 3 * BLOCK), hi
            assert got.dense(a, b).tolist() == [want.get(s, 0) for s in range(a, b + 1)]


def _reference_rate(dense: npt.NDArray[np.int64]) -> tuple[int, int, int, int]:
    """Peak, its offset, p99 and p99.9 by nearest rank over every second (numpy)."""
    ordered = np.sort(dense)
    n = len(ordered)
    p99 = int(ordered[max(1, math.ceil(0.99 * n)) - 1])
    p999 = int(ordered[max(1, math.ceil(0.999 * n)) - 1])
    assert p99 == int(np.percentile(dense, 99, method="inverted_cdf"))
    return int(ordered[-1]), int(np.argmax(dense)), p99, p999


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 3 * BLOCK), st.integers(1, 40)), min_size=1),
    hot=st.sampled_from([1, 1 << 30]),
)
def test_rates_read_block_by_block_equal_the_whole_array(
    rows: list[tuple[int, int]], hot: int
) -> None:
    t0 = 1_764_300_000 - 1_764_300_000 % BLOCK + 77  # blocks cut inside the span
    with budget(hot):
        series = ps.PerSecond()
        for s, n in rows:
            series.add(t0 + s, n)
        start, end = series.first(), series.last()
        dense = series.dense(start, end)
        r = derive.rate(series, start, end)
    peak, at, p99, p999 = _reference_rate(dense)
    assert (r.peak, r.p99, r.p999) == (peak, p99, p999)
    assert r.peak_at == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + at))
    assert r.average == pytest.approx(int(dense.sum()) / len(dense))


def _reference_outliers(busy: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]) -> list[int]:
    """The outlier rule on whole arrays (as derive.outliers computed it before the store
    was cut into blocks)."""
    if len(busy) < 2:
        return []
    gaps = np.diff(busy)
    cut = max(derive.OUTLIER_GAP, derive.OUTLIER_SPACING * int(np.sort(gaps)[len(gaps) // 2]))
    breaks = np.flatnonzero(gaps > cut) + 1
    if not len(breaks):
        return []
    starts = np.r_[0, breaks]
    weight = np.add.reduceat(counts, starts)
    group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(busy)]))
    seconds = np.diff(np.r_[starts, len(busy)])
    small = (weight < derive.OUTLIER_SHARE * int(counts.sum())) | (
        seconds <= derive.OUTLIER_SECONDS
    )
    small[int(np.argmax(weight))] = False
    return [int(x) for x in busy[small[group]]]


DAY = 86_400


@settings(max_examples=80, deadline=None)
@given(
    groups=st.lists(
        st.tuples(
            st.integers(0, 4000 * DAY),  # where a group of traffic starts
            st.lists(st.tuples(st.integers(0, 3 * DAY), st.integers(1, 50)), min_size=1),
        ),
        min_size=1,
        max_size=5,
    ),
    hot=st.sampled_from([1, 1 << 30]),
)
def test_outliers_found_block_by_block_equal_the_rule_on_whole_arrays(
    groups: list[tuple[int, list[tuple[int, int]]]], hot: int
) -> None:
    with budget(hot):
        series = ps.PerSecond()
        for at, rows in groups:
            for s, n in rows:
                series.add(at + s, n)
        want = _reference_outliers(series.secs, series.counts)
        assert derive.outliers(series).tolist() == want


# -- measured -------------------------------------------------------------------------

_MEASURE = """
import sys
import sizing.demand.persecond as ps
ps.HOT_BYTES = int(sys.argv[2])
from sizing.demand.formats import COMBINED, DEFAULT_NAME, compile_format
from sizing.demand.logs import read_logs
d = read_logs([__import__("pathlib").Path(sys.argv[1])],
              compile_format(COMBINED, name=DEFAULT_NAME), given=False)
hwm = next(x for x in open("/proc/self/status") if x.startswith("VmHWM")).split()[1]
print(d.requests.seconds, d.requests.peak, d.totals.requests, int(hwm) // 1024)
"""


def _one_a_second(path: Path, seconds: int) -> None:
    """One request a second from a midnight on, four status classes in turn."""
    t0 = 1_764_288_000  # 2025-11-28T00:00:00Z
    with path.open("w") as f:
        for start in range(0, seconds, DAY):
            day = time.strftime("%d/%b/%Y", time.gmtime(t0 + start))
            f.write(
                "".join(
                    f"10.0.0.{s % 250} - - [{day}:{s // 3600 % 24:02d}:{s // 60 % 60:02d}:"
                    f'{s % 60:02d} +0000] "GET / HTTP/1.1" {200 + 100 * (s % 4)} 512 "-" "c"\n'
                    for s in range(start, min(seconds, start + DAY))
                )
            )


def _measure(path: Path, hot_bytes: int) -> tuple[int, int, int, int]:
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path), str(hot_bytes)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    a, b, c, d = (int(x) for x in done.stdout.split())
    return a, b, c, d


def test_memory_does_not_grow_with_the_busy_seconds_past_the_budget(tmp_path: Path) -> None:
    # one request a second (four status classes: five series) over 100,000 s and over
    # 1,000,000 s, read with a 2 MiB budget: ten times the busy seconds and the span, the
    # same memory (a pair of int64 per busy second and series, as before, added 30 MiB
    # and as much again while the arrays were merged)
    small, large = tmp_path / "small.log", tmp_path / "large.log"
    _one_a_second(small, 100_000)
    _one_a_second(large, 1_000_000)
    s_secs, s_peak, s_n, s_rss = _measure(small, 2 << 20)
    l_secs, l_peak, l_n, l_rss = _measure(large, 2 << 20)
    assert (s_secs, s_peak, s_n) == (100_000, 1, 100_000)
    assert (l_secs, l_peak, l_n) == (1_000_000, 1, 1_000_000)
    assert l_rss - s_rss < 8, (s_rss, l_rss)


_COUNTERS = """
import sys
from pathlib import Path
from sizing.demand.counted import read_counters
d = read_counters([Path(sys.argv[1])])
hwm = next(x for x in open("/proc/self/status") if x.startswith("VmHWM")).split()[1]
print(d.lines, int(d.requests.peak), int(hwm) // 1024)
"""


def _prometheus(path: Path, samples: int) -> None:
    """A scrape a second of nginx-prometheus-exporter's two counters, 80 bytes a sample;
    one second carries 1,000 requests, every other 100 + (i % 7)."""
    t0, req, acc = 1_764_288_000, 0, 0
    with path.open("w") as f:
        for start in range(0, samples, 10_000):
            rows = []
            for i in range(start, min(samples, start + 10_000)):
                req += 1000 if i == samples // 2 else 100 + i % 7
                acc += 10
                rows.append(
                    f"{t0 + i}\nnginx_http_requests_total {req}\nnginx_connections_accepted {acc}\n"
                )
            f.write("".join(rows))


def test_counters_memory_grows_by_a_few_columns_a_sample(tmp_path: Path) -> None:
    # 50,000 and 500,000 samples: the samples are kept as columns (their time, line and
    # each counter's value: 8 bytes each) and the rates as two arrays, about 100 bytes a
    # sample in all; the text split into lines and an object a sample took 800 (a million
    # samples peaked at 808 MiB)
    small, large = tmp_path / "small.prom", tmp_path / "large.prom"
    _prometheus(small, 50_000)
    _prometheus(large, 500_000)
    got = []
    for path in (small, large):
        done = subprocess.run(
            [sys.executable, "-c", _COUNTERS, str(path)],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        got.append([int(x) for x in done.stdout.split()])
    (s_n, s_peak, s_rss), (l_n, l_peak, l_rss) = got
    assert (s_n, s_peak, l_n, l_peak) == (50_000, 1000, 500_000, 1000)
    grown = (l_rss - s_rss) * (1 << 20) / (l_n - s_n)
    assert grown < 200, f"{grown:.0f} bytes a sample ({s_rss} MiB, then {l_rss} MiB)"
