"""The oha driver: argv builder and parser, on reports captured from oha 1.16.0
(``tests/data/oha``: the JSON report and ``latency_hist.py``'s histogram of one run)."""

from __future__ import annotations

import json
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from sizing.errors import UsageError
from sizing.load import oha
from sizing.load.latency import HIST_GROWTH, merge_latency
from sizing.load.result import LoadResult
from sizing.paths import ROOT


def _golden(data_dir: Path, name: str) -> LoadResult:
    d = data_dir / "oha"
    return oha.parse((d / f"{name}.json").read_text(), (d / f"{name}.hist.json").read_text())


def test_steady_report_in_milliseconds(data_dir: Path) -> None:
    r = _golden(data_dir, "steady_2000rps_2s")
    want = json.loads((data_dir / "oha" / "steady_2000rps_2s.expected.json").read_text())
    assert r.requests == want["requests"] and r.failed == want["failed"]
    assert r.status_codes == {"200": want["status_200"]}
    for p in (50, 90, 95, 99):
        assert r.latency_percentiles_ms[float(p)] == pytest.approx(want[f"p{p}_ms"])
    assert r.latency_mean_ms == pytest.approx(want["mean_ms"])
    assert r.latency_max_ms == pytest.approx(want["max_ms"])
    assert r.rate == pytest.approx(want["achieved_rate"])
    assert r.duration_s == pytest.approx(want["duration_s"])
    assert r.lag(2000) < 0.01 and r.lag(4000) == pytest.approx(1 - r.rate / 4000)
    assert r.histogram is not None and r.histogram.count == want["hist_count"]
    # the histogram's percentiles are oha's own to the 1% bucket
    for p in (50.0, 95.0, 99.0):
        exact = r.latency_percentiles_ms[p]
        assert exact * 0.999 <= r.histogram.percentile(p) <= exact * HIST_GROWTH * 1.001, p
    assert r.histogram.mean_ms == pytest.approx(r.latency_mean_ms, rel=1e-6)


def test_the_argv_is_what_the_golden_was_captured_with(data_dir: Path) -> None:
    want = json.loads((data_dir / "oha" / "steady_2000rps_2s.expected.json").read_text())
    spec = oha.OhaSpec(
        url="http://127.0.0.1:18977/",
        rate=2000,
        duration_s=2.0,
        timeout_s=5.0,
        db_file="/tmp/i14g/steady.db",
    )
    assert oha.argv(spec) == shlex.split(want["argv"])
    pinned = oha.argv(
        oha.OhaSpec(
            url="https://h:8443/1k",
            rate=10,
            duration_s=1,
            cpus=(2, 3),
            headers=("Authorization: Bearer x",),
            keepalive=False,
        )
    )
    assert pinned[:4] == ["taskset", "-c", "2-3", "oha"]
    assert pinned[pinned.index("--worker-threads") + 1] == "2"
    assert "--insecure" in pinned and "--disable-keepalive" in pinned
    assert pinned[pinned.index("-H") + 1] == "Authorization: Bearer x"
    assert "--db-url" not in pinned
    with pytest.raises(UsageError, match="no db_file"):
        oha.hist_argv(oha.OhaSpec(url="http://h/", rate=1, duration_s=1), "x.py")


def test_transport_errors_count_as_failed(data_dir: Path) -> None:
    r = _golden(data_dir, "refused_100rps_1s")
    assert r.status_codes == {} and r.requests == 100 and r.failed == 100
    assert r.errors == {"Connection refused (os error 111)": 100}
    assert r.latency_percentiles_ms[95.0] == 0.0 and r.histogram is not None
    assert r.histogram.count == 0 and r.latency_report().count == 0


def test_one_client_merges_to_its_histogram(data_dir: Path) -> None:
    r = _golden(data_dir, "steady_2000rps_2s")
    merged = merge_latency([r.latency_report()], percentiles=(50.0, 95.0, 99.0))
    assert merged is not None and merged.histogram is not None
    assert merged.count == r.requests
    assert merged.percentiles_ms[95.0] == pytest.approx(
        r.latency_percentiles_ms[95.0], rel=HIST_GROWTH - 1 + 1e-3
    )
    twice = merge_latency([r.latency_report(), r.latency_report()], percentiles=(95.0,))
    assert twice is not None and twice.count == 2 * r.requests
    assert twice.percentiles_ms[95.0] == merged.percentiles_ms[95.0]


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("", "empty"),
        ("error: connection refused", "not JSON"),
        ('{"summary": {}}', "latencyPercentiles"),
        (
            '{"summary": {"total": 1}, "latencyPercentiles": {}, "statusCodeDistribution": '
            '{"200": 3}}',
            "requestsPerSec",
        ),
        (
            '{"summary": {"total": 1, "requestsPerSec": 3, "fastest": 0.1, "average": 0.1, '
            '"slowest": 0.1}, "latencyPercentiles": {"p50": 0.1}, '
            '"statusCodeDistribution": {"200": 3}}',
            "p90",
        ),
        (
            '{"summary": {"total": 1, "requestsPerSec": 0}, "latencyPercentiles": {}, '
            '"statusCodeDistribution": {}}',
            "no request",
        ),
    ],
)
def test_missing_figures_raise(text: str, missing: str) -> None:
    with pytest.raises(oha.OhaParseError, match=missing):
        oha.parse(text)


def test_bad_histogram_raises(data_dir: Path) -> None:
    text = (data_dir / "oha" / "steady_2000rps_2s.json").read_text()
    with pytest.raises(oha.OhaParseError, match="histogram"):
        oha.parse(text, '{"count": 2, "buckets": {"1": 1}}')


def test_latency_hist_script_buckets_the_newest_run(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    con = sqlite3.connect(db)
    con.execute(
        "CREATE TABLE oha (url TEXT, start REAL, start_latency_correction REAL, "
        "end REAL, duration REAL, status INTEGER, len_bytes INTEGER, run INTEGER)"
    )
    rows = [
        ("u", 0, 0, 0, d, 200, 3, run) for run, d in ((1, 9.0), (2, 0.001), (2, 0.002), (2, 0.0005))
    ]
    con.executemany("INSERT INTO oha VALUES (?,?,?,?,?,?,?,?)", rows)
    con.commit()
    con.close()
    out = subprocess.run(
        [sys.executable, str(ROOT / "playbooks" / "files" / "latency_hist.py"), str(db)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    h = oha.parse_histogram(out)
    assert h.count == 3 and h.max_ms == pytest.approx(2.0) and h.min_ms == pytest.approx(0.5)
    assert h.percentile(50.0) == pytest.approx(1.0, rel=0.011)
    assert not db.exists()  # removed once read
