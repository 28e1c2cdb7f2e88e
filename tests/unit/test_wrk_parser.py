"""Unit tests for the wrk driver: argv building and parsing of real wrk 4.1.0 reports.

Each ``tests/data/wrk/*.txt`` is one captured output (``handmade_*`` files are edited
from real ones, as their names say) with a ``*.expected.json`` sidecar: either the
figures parse() must return, or ``{"error": [substrings of the WrkParseError]}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizing.errors import ExitStatus, SizingError, UsageError
from sizing.load.result import LoadResult
from sizing.load.wrk import WrkParseError, WrkSpec, build_argv, parse

DATA = Path(__file__).resolve().parent.parent / "data" / "wrk"
GOLDEN = sorted(DATA.glob("*.txt"))


def _expected(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.with_suffix(".expected.json").read_text())
    return data


def test_every_golden_wrk_file_has_a_sidecar() -> None:
    assert GOLDEN, f"no golden files in {DATA}"
    for path in GOLDEN:
        assert path.with_suffix(".expected.json").exists(), path.name


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden(path: Path) -> None:
    expected = _expected(path)
    text = path.read_text()
    if "error" in expected:
        with pytest.raises(WrkParseError) as info:
            parse(text)
        for part in expected["error"]:
            assert part in str(info.value)
        return
    result = parse(text)
    percentiles = {float(k): v for k, v in expected.pop("latency_percentiles_ms").items()}
    assert result.latency_percentiles_ms == pytest.approx(percentiles, rel=1e-9)
    for name, value in expected.items():
        got = getattr(result, name)
        if isinstance(value, float):
            assert got == pytest.approx(value, rel=1e-9), name
        else:
            assert got == value, name
            assert type(got) is type(value), name


def _golden(name: str) -> LoadResult:
    return parse((DATA / name).read_text())


def test_units_are_normalised() -> None:
    r = _golden("connection_close_latency.txt")  # 529.47us ... 0.88ms ... 43.28MB ... 13.96MB
    assert r.latency_mean_ms == pytest.approx(0.52947)
    assert r.latency_percentiles_ms[90.0] == pytest.approx(0.88)
    assert r.bytes_read == round(43.28 * 1024 * 1024)
    assert r.transfer_bps == pytest.approx(13.96 * 1024 * 1024)
    assert r.duration_s == pytest.approx(3.10)


def test_seconds_and_minutes() -> None:
    slow = _golden("slow_limit_rate_seconds.txt")  # "3.00s" latencies, "92.09us" stdev
    assert slow.latency_mean_ms == 3000.0
    assert slow.latency_stdev_ms == pytest.approx(0.09209)
    assert slow.latency_percentiles_ms == {50.0: 3000.0, 75.0: 3000.0, 90.0: 3000.0, 99.0: 3000.0}
    # a 55 s run: wrk prints "Running 1m test" and "in 0.92m", and GB read
    long = _golden("keepalive_55s_minutes.txt")
    assert long.duration_s == pytest.approx(55.2)
    assert long.bytes_read == round(1.42 * 1024**3)


def test_without_latency_flag_there_are_no_percentiles() -> None:
    assert _golden("keepalive_128b.txt").latency_percentiles_ms == {}


def test_error_figures() -> None:
    ok = _golden("keepalive_128b_latency.txt")
    assert ok.total_errors == 0 and ok.error_ratio == 0.0

    status = _golden("status_503.txt")
    assert status.non_2xx_3xx == status.requests == 261547
    assert status.total_errors == 0
    assert status.error_ratio == 1.0

    # wrk counts only status > 399: a 302 is not an error
    assert _golden("redirect_302.txt").non_2xx_3xx == 0

    timeouts = _golden("timeouts_limit_rate.txt")  # all 8 answers came after --timeout 1s
    assert timeouts.errors["timeout"] == 8 == timeouts.requests
    assert timeouts.latency_mean_ms == 0.0  # "-nan%" in +/- Stdev: nothing recorded

    killed = _golden("server_killed_midrun.txt")
    assert (killed.errors["read"], killed.errors["write"]) == (18, 194353)
    assert killed.error_ratio > 1.0  # one error per reconnect attempt

    handmade = _golden("handmade_connect_errors.txt")
    assert handmade.errors["connect"] == 7
    assert handmade.total_errors == 7 + 18 + 194353 + 2


@pytest.mark.parametrize("text", ["", "\n", "   \n\n"])
def test_empty_output(text: str) -> None:
    with pytest.raises(WrkParseError, match="the output is empty"):
        parse(text)


def test_parse_error_is_a_tool_error() -> None:
    with pytest.raises(WrkParseError) as info:
        parse("garbage")
    assert isinstance(info.value, SizingError)
    assert info.value.code is ExitStatus.TOOL
    assert "Requests/sec" in str(info.value)


def test_wrk_usage_message_is_quoted() -> None:
    with pytest.raises(WrkParseError, match="wrk said: number of connections must be >= threads"):
        parse("number of connections must be >= threads\nUsage: wrk <options> <url>\n")


@pytest.mark.parametrize("name", ["keepalive_128b_latency.txt", "status_503.txt"])
def test_every_truncation_fails_cleanly(name: str) -> None:
    """Cut a real report after each line: a prefix parses only once it is complete."""
    lines = (DATA / name).read_text().splitlines(keepends=True)
    for cut in range(len(lines)):
        with pytest.raises(WrkParseError):
            parse("".join(lines[:cut]))
    assert parse("".join(lines)).requests > 0


@given(st.integers(0, 2000))
def test_truncated_anywhere_never_raises_anything_else(cut: int) -> None:
    text = (DATA / "handmade_connect_errors.txt").read_text()
    try:
        parse(text[:cut])
    except WrkParseError:
        pass


def test_crlf_and_stderr_noise_are_tolerated() -> None:
    text = (DATA / "status_503.txt").read_text()
    assert parse(text.replace("\n", "\r\n")) == parse(text)
    assert parse("some warning on stderr\n" + text) == parse(text)


# -- argv ---------------------------------------------------------------------------------


URL = "http://127.0.0.1:19080/index.html"


def test_build_argv_taskset() -> None:
    spec = WrkSpec(
        url=URL,
        threads=1,
        connections=50,
        duration_s=10,
        headers=("Connection: close",),
        cpus=(1,),
    )
    assert build_argv(spec) == [
        "taskset",
        "-c",
        "1",
        "wrk",
        "-t1",
        "-c50",
        "-d10s",
        "--timeout",
        "5s",
        "--latency",
        "-H",
        "Connection: close",
        URL,
    ]


def test_build_argv_numactl_and_cpu_ranges() -> None:
    spec = WrkSpec(url=URL, threads=4, connections=400, duration_s=30.0, cpus=(3, 1, 2, 8))
    argv = build_argv(spec, wrk="/usr/bin/wrk", pin_with="numactl")
    assert argv[:3] == ["numactl", "--physcpubind=1-3,8", "--"]
    assert argv[3:] == [
        "/usr/bin/wrk",
        "-t4",
        "-c400",
        "-d30s",
        "--timeout",
        "5s",
        "--latency",
        URL,
    ]


def test_build_argv_without_pinning_or_latency() -> None:
    spec = WrkSpec(url=URL, threads=2, connections=2, duration_s=1, timeout_s=2, latency=False)
    assert build_argv(spec) == ["wrk", "-t2", "-c2", "-d1s", "--timeout", "2s", URL]


def test_build_argv_keeps_hostile_values_as_single_arguments() -> None:
    header = "X-Test: $(rm -rf /); `id` && echo"
    argv = build_argv(
        WrkSpec(url=URL + "?a=1&b=2", threads=1, connections=1, duration_s=1, headers=(header,))
    )
    assert argv[-3:] == ["-H", header, URL + "?a=1&b=2"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"threads": 0}, "at least 1 thread"),
        ({"threads": 4, "connections": 2}, "2 connections < 4 threads"),
        ({"duration_s": 0}, "duration must be a whole number of seconds"),
        ({"duration_s": 0.5}, "duration must be a whole number of seconds"),
        ({"duration_s": 2.5}, "duration must be a whole number of seconds"),
        ({"duration_s": float("nan")}, "duration"),
        ({"timeout_s": 0.5}, "timeout must be a whole number of seconds"),
        ({"url": "127.0.0.1:19080/"}, "http:// or https://"),
        ({"url": "--latency"}, "http:// or https://"),
        ({"headers": ("Host: a\r\nX: b",)}, "single HTTP header line"),
        ({"headers": ("no colon",)}, "single HTTP header line"),
    ],
)
def test_build_argv_rejects(changes: dict[str, Any], message: str) -> None:
    spec = {"url": URL, "threads": 1, "connections": 10, "duration_s": 3, **changes}
    with pytest.raises(UsageError, match=message.replace("?", r"\?")):
        build_argv(WrkSpec(**spec))


def test_build_argv_rejects_unknown_pinning_tool() -> None:
    spec = WrkSpec(url=URL, threads=1, connections=1, duration_s=1, cpus=(0,))
    with pytest.raises(UsageError, match="taskset or numactl"):
        build_argv(spec, pin_with="cset")
