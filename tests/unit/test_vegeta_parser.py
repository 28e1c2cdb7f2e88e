"""The vegeta driver: argv builders and the parser, on reports captured from vegeta v12.12.0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sizing.errors import UsageError
from sizing.load import vegeta
from sizing.load.latency import merge_latency
from sizing.load.result import LoadResult


def _golden(data_dir: Path, name: str) -> LoadResult:
    d = data_dir / "vegeta"
    return vegeta.parse((d / f"{name}.json").read_text(), (d / f"{name}.hdrplot").read_text())


def test_steady_report_in_milliseconds(data_dir: Path) -> None:
    r = _golden(data_dir, "steady_500rps_2s")
    want = json.loads((data_dir / "vegeta" / "steady_500rps_2s.expected.json").read_text())
    assert r.requests == want["requests"]
    assert r.latency_percentiles_ms[50.0] == pytest.approx(want["p50_ms"])
    assert r.latency_percentiles_ms[95.0] == pytest.approx(want["p95_ms"])
    assert r.latency_percentiles_ms[99.0] == pytest.approx(want["p99_ms"])
    assert r.status_codes == {"200": want["status_200"]}
    assert r.failed == want["failed"]
    assert r.rate == pytest.approx(500.0, rel=0.01)
    assert r.lag(500) == 0.0
    assert r.lag(600) == pytest.approx((600 - r.rate) / 600)
    # the hdrplot CDF: increasing, from 0 to 100 percent, in ms
    assert r.cdf[0][0] == 0.0 and r.cdf[-1][0] == pytest.approx(100.0)
    assert [p for p, _ in r.cdf] == sorted(p for p, _ in r.cdf)
    assert r.cdf[0][1] == pytest.approx(r.latency_min_ms)


def test_transport_errors_count_as_failed(data_dir: Path) -> None:
    r = _golden(data_dir, "refused_100rps_1s")
    assert r.status_codes == {"0": 100}
    assert r.failed == 100 and r.success_ratio == 0.0
    assert any("connection refused" in e for e in r.error_messages)


def test_one_client_merges_to_itself(data_dir: Path) -> None:
    r = _golden(data_dir, "steady_500rps_2s")
    merged = merge_latency([r.latency_report()], percentiles=(50.0, 95.0, 99.0))
    assert merged is not None and merged.count == r.requests
    assert merged.percentiles_ms[50.0] == pytest.approx(r.latency_percentiles_ms[50.0], rel=0.05)
    assert merged.percentiles_ms[99.0] == pytest.approx(r.latency_percentiles_ms[99.0], rel=0.05)


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("", "empty"),
        ("attack: connection refused", "not JSON"),
        ('{"requests": 3}', "latencies"),
        ('{"latencies": {"mean": 1}, "requests": 1, "rate": 1, "throughput": 1}', "latencies.max"),
    ],
)
def test_parse_names_what_is_missing(text: str, missing: str) -> None:
    with pytest.raises(vegeta.VegetaParseError, match=missing):
        vegeta.parse(text)


def test_hdrplot_without_lines_is_an_error() -> None:
    with pytest.raises(vegeta.VegetaParseError):
        vegeta.parse_hdrplot("Value(ms)  Percentile  TotalCount  1/(1-Percentile)\n")


def test_attack_argv_is_open_loop_and_pinned() -> None:
    spec = vegeta.VegetaSpec(
        url="https://127.0.0.1:8443/1k",
        rate=2500,
        duration_s=10,
        results_file="/tmp/r.bin",
        cpus=(1, 2, 3),
        headers=("Authorization: Bearer x",),
    )
    argv = vegeta.attack_argv(spec, vegeta="/opt/vegeta")
    assert argv[:3] == ["taskset", "-c", "1-3"]
    assert "-rate=2500/1s" in argv and "-duration=10000ms" in argv
    assert "-insecure" in argv and "-http2=false" in argv and "-output=/tmp/r.bin" in argv
    assert not any(a.startswith(("-max-workers", "-max-connections")) for a in argv)
    assert vegeta.targets(spec) == "GET https://127.0.0.1:8443/1k\nAuthorization: Bearer x\n"
    assert vegeta.report_argvs(spec, vegeta="v") == [
        ["v", "report", "-type=json", "/tmp/r.bin"],
        ["v", "report", "-type=hdrplot", "/tmp/r.bin"],
    ]


@pytest.mark.parametrize(
    "bad",
    [
        {"rate": 0},
        {"duration_s": 0},
        {"url": "ftp://x/"},
        {"headers": ("X: a\r\nY: b",)},
    ],
)
def test_attack_argv_refuses_bad_specs(bad: dict[str, object]) -> None:
    base: dict[str, object] = {
        "url": "http://127.0.0.1/",
        "rate": 10,
        "duration_s": 1,
        "results_file": "/tmp/r",
    }
    with pytest.raises(UsageError):
        vegeta.attack_argv(vegeta.VegetaSpec(**{**base, **bad}))  # type: ignore[arg-type]
