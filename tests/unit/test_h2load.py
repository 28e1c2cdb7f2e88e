"""The h2load driver (``sizing/load/h2load.py``): its argv, its parser of h2load's real
text reports (``tests/data/h2load``: h2load nghttp2/1.52.0 against nginx on loopback), its
latency histogram (the follow-up script run for real on a log), its version and its
capabilities as the registry offers them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sizing.errors import UsageError
from sizing.load.h2load import (
    H2LOAD,
    HIST_SCRIPT,
    H2loadParseError,
    H2loadSpec,
    argv,
    parse,
    parse_histogram,
)
from sizing.load.latency import Histogram, bucket_of
from sizing.load.tools import LoadRequest, client_installs, closed_loop_parse, tool
from sizing.loadproto import CommandOutput

DATA = Path(__file__).resolve().parents[1] / "data" / "h2load"
CLEAN = (DATA / "clean_4c_2s.txt").read_text()
HIST = (DATA / "clean_4c_2s.hist.json").read_text()


def _req(**kw: object) -> LoadRequest:
    base: dict[str, object] = {
        "url": "https://127.0.0.1:8443/128b",
        "duration_s": 2.0,
        "connections": 4,
        "tool_dir": "/opt/sizing",
        "cpus": (2, 3),
    }
    return LoadRequest(**{**base, **kw})  # type: ignore[arg-type]


def test_registered_closed_loop_http11_tls_installed_from_debian() -> None:
    assert tool("h2load") is H2LOAD
    caps = H2LOAD.capabilities
    assert not caps.open_loop and caps.tls and not caps.single_threaded
    assert not caps.full_handshakes
    assert client_installs(["h2load"]) == (["h2load", "wrk"], ["nghttp2-client", "wrk"])


def test_a_window_runs_h1_pinned_logs_every_request_then_buckets_and_reads_the_version() -> None:
    cmd = H2LOAD.command(_req())
    log = "/opt/sizing/h2load-requests.log"
    assert cmd.argv == [
        "taskset", "-c", "2-3", "h2load", "--h1", "-c", "4", "-t", "2", "-m", "1",
        "-D", "2000ms", f"--log-file={log}", "https://127.0.0.1:8443/128b",
    ]  # fmt: skip
    assert cmd.then == [["python3", "-c", HIST_SCRIPT, log], ["h2load", "--version"]]
    # the plan prints the argv without what only a window writes
    assert H2LOAD.summary(_req(window=False)) == [
        a for a in cmd.argv if not a.startswith("--log-file")
    ]


def test_what_h2load_cannot_do_is_refused() -> None:
    with pytest.raises(UsageError, match="cannot close each connection"):
        H2LOAD.command(_req(keepalive=False))
    with pytest.raises(UsageError, match="a client per thread"):
        argv(H2loadSpec(url="http://x/", clients=1, threads=2, duration_s=1))
    with pytest.raises(UsageError, match="single HTTP header"):
        argv(H2loadSpec(url="http://x/", clients=1, threads=1, duration_s=1, headers=("x",)))


def test_the_report_parses_as_wrk_s_figures() -> None:
    got = parse(CLEAN)
    assert (got.requests, got.duration_s, got.rps) == (30787, 2.01, 15393.5)
    assert got.bytes_read == 11257794 and got.transfer_bps == pytest.approx(11257794 / 2.01)
    assert (got.latency_mean_ms, got.latency_max_ms, got.latency_stdev_ms) == (
        0.256,
        12.33,
        0.326,
    )
    assert (got.threads, got.connections, got.error_ratio) == (1, 4, 0.0)
    out = CommandOutput(argv=["h2load"], rc=0, stdout=CLEAN)
    assert closed_loop_parse("h2load", out) == got


def test_errors_are_counted_and_a_run_of_nothing_is_an_error() -> None:
    nf = parse((DATA / "not_found_1s.txt").read_text())
    assert nf.requests > 0 and nf.non_2xx_3xx == nf.requests and nf.error_ratio == 1.0
    with pytest.raises(H2loadParseError, match="finished no request"):
        parse((DATA / "refused.txt").read_text())
    with pytest.raises(H2loadParseError, match=r"lacks .*'requests:' line.*empty"):
        parse("")


def test_the_latency_report_is_the_logs_histogram() -> None:
    out = CommandOutput(
        argv=["h2load"],
        rc=0,
        stdout=CLEAN,
        then=[
            CommandOutput(argv=["python3"], rc=0, stdout=HIST),
            CommandOutput(argv=["h2load"], rc=0, stdout=(DATA / "version.txt").read_text()),
        ],
    )
    rep = H2LOAD.latency_report(out)
    assert rep.count == rep.requests == 30787 and rep.histogram is not None
    # the log's mean is h2load's own "time for request" mean (256us), to its rounding
    assert rep.mean_ms == pytest.approx(0.256, abs=0.0005)
    assert rep.min_ms == 0.075 and rep.max_ms == 12.328
    p = dict(rep.cdf)
    assert rep.min_ms <= p[50.0] <= p[99.0] <= rep.max_ms
    assert H2LOAD.read_version(out) == "1.52.0"
    with pytest.raises(H2loadParseError, match="histogram did not run"):
        H2LOAD.latency_report(CommandOutput(argv=["h2load"], rc=0, stdout=CLEAN))
    stale = json.loads(HIST)
    stale["buckets"]["900"] = 40000  # an earlier window's log h2load appended to
    stale["count"] += 40000
    with pytest.raises(H2loadParseError, match="more than its 30787"):
        H2LOAD.latency_report(
            CommandOutput(
                argv=[], rc=0, stdout=CLEAN, then=[CommandOutput([], 0, json.dumps(stale))]
            )
        )


def test_the_bucketing_script_is_the_histograms_layout(tmp_path: Path) -> None:
    """The follow-up runs for real on a log in h2load's format: its buckets are
    :func:`bucket_of`'s, failed answers are left out, and the log is removed."""
    latencies_us = [0.5, 1, 99, 100, 101, 250, 1000, 12345, 999999]
    log = tmp_path / "h2load-requests.log"
    lines = [f"1795854080493{i:03d}\t200\t{us}" for i, us in enumerate(latencies_us)]
    lines.append("1795854080494000\t404\t77")
    log.write_text("\n".join(lines) + "\n")
    done = subprocess.run(
        [sys.executable, "-c", HIST_SCRIPT, str(log)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    hist = Histogram.from_json(json.loads(done.stdout))
    expected: dict[int, int] = {}
    for us in latencies_us:
        expected[bucket_of(us)] = expected.get(bucket_of(us), 0) + 1
    assert dict(hist.buckets) == expected and hist.count == len(latencies_us)
    assert hist.min_ms == 0.0005 and hist.max_ms == 999.999
    assert not log.exists()
    assert parse_histogram(done.stdout).count == len(latencies_us)
