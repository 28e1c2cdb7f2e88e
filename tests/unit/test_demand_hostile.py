"""``sizing demand``, ``recommend --demand`` and ``guide --demand`` on inputs found by an
adversarial pass after issue 58's hardening: each case failed before its fix (a hang, an
"internal error", memory past the bound, a figure read from a value no NGINX writes)."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import math
import os
import re
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sizing.cli import app
from sizing.demand import fastscan
from sizing.demand.file import load_demand
from sizing.demand.formats import (
    COMBINED,
    DEFAULT_NAME,
    MAX_CONF_BYTES,
    LogFormat,
    compile_format,
    format_from_conf,
)
from sizing.demand.logs import read_logs
from sizing.demand.mix import parse_assumptions
from sizing.demand.reader import _by_rows
from sizing.errors import InputError, UsageError
from sizing.yamlfile import MAX_INT_CHARS

runner = CliRunner()
T0 = 1_764_300_000


def line(sec: int) -> str:
    ts = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(sec))
    return f'10.0.0.1 - - [{ts}] "GET / HTTP/1.1" 200 512 "-" "curl/8.5.0"\n'


def demand(*args: str) -> tuple[int, str]:
    got = runner.invoke(app, ["demand", *args])
    return got.exit_code, got.output


# --nginx-conf ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "conf",
    [
        "log_format main " + "a" * 26,  # a bare word, no ';': each split was tried
        "log_format main '$remote_addr [$time_local]' " + "$a " * 26 + "'unclosed",
    ],
)
def test_a_log_format_without_its_semicolon_fails_in_linear_time(tmp_path: Path, conf: str) -> None:
    path = tmp_path / "nginx.conf"
    path.write_text("http {\n  " + conf + "\n}\n")
    t = time.process_time()
    with pytest.raises(UsageError, match="no log_format 'main'"):
        format_from_conf(path, "main")
    assert time.process_time() - t < 1.0  # was 7 s at 26 letters, doubling with each


def test_nginx_conf_that_is_a_fifo_or_too_big_is_refused_in_one_line(tmp_path: Path) -> None:
    log = tmp_path / "access.log"
    log.write_text(line(T0))
    fifo = tmp_path / "fifo.conf"
    os.mkfifo(fifo)  # read, it would never end
    code, out = demand(str(log), "--nginx-conf", str(fifo), "--log-name", "main")
    assert code == 2 and "a FIFO (named pipe), not an nginx.conf" in out
    big = tmp_path / "big.conf"
    big.write_bytes(b"#" * (MAX_CONF_BYTES + 1))
    code, out = demand(str(log), "--nginx-conf", str(big), "--log-name", "main")
    assert code == 2 and f"over the {MAX_CONF_BYTES:,} bytes" in out
    assert "Traceback" not in out and len(out.strip().splitlines()) == 1


# JSON lines: access logs and NGINX Plus samples ------------------------------------------


def test_a_deeply_nested_json_line_is_skipped_not_an_internal_error(tmp_path: Path) -> None:
    log = tmp_path / "access.json"
    docs = [f'{{"msec": "{T0 + i}.000", "status": 200}}\n' for i in range(20)]
    docs.insert(5, "[" * 60_000 + "\n")  # under the 64 KiB line cap; json recurses per [
    log.write_text("".join(docs))
    code, out = demand(str(log), "--json")
    assert code == 0, out
    assert "internal error" not in out and '"skipped": 1' in out and '"lines": 21' in out


@pytest.mark.parametrize(
    ("sample", "why"),
    [
        (f'{{"time": {T0 + 9}, "http/requests": {{"total": 1{"0" * 400}}}}}', "a number"),
        ("[" * 60_000, "not JSON"),
    ],
)
def test_an_nginx_plus_sample_too_deep_or_too_big_is_one_line(
    tmp_path: Path, sample: str, why: str
) -> None:
    path = tmp_path / "plus.jsonl"
    good = [f'{{"time": {T0 + i}, "http/requests": {{"total": {100 * i}}}}}' for i in range(5)]
    path.write_text("\n".join([*good, sample]) + "\n")
    code, out = demand("--counters", str(path))
    assert code == 2 and f"{path}:6: not an NGINX Plus API sample" in out and why in out
    assert "internal error" not in out and len(out.strip().splitlines()) == 1


# YAML: an integer Python will not read ---------------------------------------------------


@pytest.fixture(scope="module")
def demand_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    tmp = tmp_path_factory.mktemp("demand")
    log = tmp / "access.log"
    log.write_text("".join(line(T0 + i // 3) for i in range(90)))
    code, out = demand(str(log), "-o", str(tmp / "d.yml"))
    assert code == 0, out
    return (tmp / "d.yml").read_text()


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    field=st.sampled_from(["lines: ", "skipped: ", "  seconds: ", "chart:\n- "]),
    digits=st.integers(min_value=1, max_value=6000),
)
def test_an_integer_of_any_length_in_a_demand_file_loads_or_is_one_input_error(
    tmp_path_factory: pytest.TempPathFactory, demand_text: str, field: str, digits: int
) -> None:
    """Python reads no decimal of more than 4,300 digits (a ValueError the YAML loader
    does not mark): such a file was an internal error in recommend and guide --demand."""
    at = demand_text.index("\n" + field) + 1 + len(field)
    end = demand_text.index("\n", at)
    path = tmp_path_factory.mktemp("int") / "d.yml"
    path.write_text(demand_text[:at] + "9" * digits + demand_text[end:])
    try:
        load_demand(path)
    except InputError as exc:
        assert str(path) in str(exc) and len(exc.problems) >= 1
        if digits > MAX_INT_CHARS:
            assert "too long" in exc.problems[0] and "line " in exc.problems[0]


def test_a_catalog_price_of_5000_digits_is_one_line(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.yml"
    catalog.write_text(
        "kind: catalog\nname: x\nservers:\n  - {cores: 2, price: " + "9" * 5000 + "}\n"
    )
    got = runner.invoke(app, ["table", "--catalog", str(catalog)])
    assert got.exit_code == 3 and "internal error" not in got.output, got.output
    assert f"{catalog}: YAML syntax: line 4" in got.output and "too long" in got.output


# Memory: a chunk of very short lines ----------------------------------------------------

_MEASURE = """
import sys
from pathlib import Path
from sizing.demand.formats import COMBINED, DEFAULT_NAME, compile_format
from sizing.demand.logs import read_logs
d = read_logs([Path(sys.argv[1])], compile_format(COMBINED, name=DEFAULT_NAME), given=False)
hwm = next(x for x in open("/proc/self/status") if x.startswith("VmHWM")).split()[1]
print(d.totals.requests if d.totals else 0, d.skipped, int(hwm) // 1024)
"""


def _peak(path: Path) -> tuple[int, int, int]:
    """Requests, skipped lines and the peak RSS (MiB) of a fresh interpreter reading
    ``path`` (its own VmHWM: the parent's is not counted)."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    requests, skipped, rss = map(int, done.stdout.split())
    return requests, skipped, rss


def test_megabytes_of_empty_lines_take_memory_by_chunk_not_by_line(tmp_path: Path) -> None:
    """A chunk of 1 MiB holds a million empty lines: read whole, each skipped line's row
    and reason took 317 MB for a 1 MiB file; in pieces of MAX_ROWS lines, a few MB."""
    small = tmp_path / "small.log"
    small.write_text(line(T0) + line(T0 + 1))
    log = tmp_path / "empty-lines.log"
    log.write_text(line(T0) + "\n" * (2 << 20) + line(T0 + 1))
    base = _peak(small)[2]
    requests, skipped, rss = _peak(log)
    assert (requests, skipped) == (2, 2 << 20)
    assert rss - base < 60, (rss, base)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    lines=st.lists(st.binary(max_size=6).map(lambda b: b.replace(b"\n", b"")), max_size=200),
    tail=st.booleans(),
    rows=st.integers(min_value=1, max_value=20),
)
def test_pieces_of_a_chunk_hold_every_byte_in_order_and_at_most_rows_lines(
    lines: list[bytes], tail: bool, rows: int
) -> None:
    block = b"\n".join(lines) + (b"\n" if tail and lines else b"")
    pieces = list(_by_rows(block, rows))
    assert b"".join(pieces) == block
    for piece in pieces[:-1]:
        assert piece.endswith(b"\n") and piece.count(b"\n") <= rows
    if pieces:
        assert pieces[-1].count(b"\n") <= rows


# UTC offsets no clock is set to ------------------------------------------------------------


def _read_with(path: Path, native: bool, fmt: LogFormat | None = None) -> tuple[int, int]:
    """Requests and skipped lines of ``path``, by the compiled reader or the regular
    expression (the reference)."""
    old = fastscan.ENABLED
    fastscan.ENABLED = native
    try:
        fmt = fmt or compile_format(COMBINED, name=DEFAULT_NAME)
        d = read_logs([path], fmt, given=fmt.name != DEFAULT_NAME)
    finally:
        fastscan.ENABLED = old
    assert d.totals is not None
    return d.totals.requests, d.skipped


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    sign=st.sampled_from("+-"),
    hours=st.integers(min_value=0, max_value=99),
    minutes=st.integers(min_value=0, max_value=59),
    native=st.booleans(),
)
def test_a_utc_offset_past_14_hours_is_no_time(
    tmp_path_factory: pytest.TempPathFactory, sign: str, hours: int, minutes: int, native: bool
) -> None:
    """``-2400`` or ``+9900`` (a garbled digit) moved a request days away: the span, the
    average and the percentiles with it. Both readers refuse it alike; ISO 8601 too."""
    ok = hours * 60 + minutes <= 14 * 60
    tmp = tmp_path_factory.mktemp("tz")
    odd = line(T0 + 5).replace("+0000", f"{sign}{hours:02d}{minutes:02d}")
    log = tmp / "a.log"
    log.write_text("".join(line(T0 + i) for i in range(10)) + odd)
    assert _read_with(log, native) == ((11, 0) if ok else (10, 1))
    iso = tmp / "iso.log"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(T0 + 5))
    iso.write_text(
        "".join(f"2025-11-28T03:20:0{i}+00:00 200\n" for i in range(10))
        + f"{stamp}{sign}{hours:02d}:{minutes:02d} 200\n"
    )
    fmt = compile_format("$time_iso8601 $status", name="iso")
    assert _read_with(iso, native, fmt) == ((11, 0) if ok else (10, 1))


def test_a_counter_sample_at_an_offset_past_14_hours_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "prom.txt"
    pages = [f"{T0 + i}\nnginx_http_requests_total {100 * i}\n" for i in range(5)]
    path.write_text("".join(pages) + "2025-11-28T03:20:00+23:59\nnginx_http_requests_total 5\n")
    code, out = demand("--counters", str(path))
    assert code == 2 and f"{path}:11: the sample's time has a UTC offset past" in out, out


# --out - ------------------------------------------------------------------------------------


def test_out_dash_writes_the_demand_file_to_stdout_not_a_file_named_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``guide --out -`` writes stdout; ``demand --out -`` wrote a file named ``-``."""
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "access.log"
    log.write_text("".join(line(T0 + i // 4) for i in range(40)))
    got = runner.invoke(app, ["demand", str(log), "-o", "-"])
    assert got.exit_code == 0, got.output
    assert not (tmp_path / "-").exists()
    (tmp_path / "d.yml").write_text(got.stdout)
    assert load_demand(tmp_path / "d.yml").requests.peak == 4
    code, out = demand(str(log), "-o", "-", "--json")
    assert code == 2 and "--out - and --json both write stdout" in out


# $request_time in a JSON log ----------------------------------------------------------------


@settings(max_examples=60, deadline=None, derandomize=True)
@given(value=st.one_of(st.text(max_size=8), st.integers(-(10**6), 10**6), st.floats()))
def test_a_json_request_time_is_read_as_the_format_reads_it(
    tmp_path_factory: pytest.TempPathFactory, value: object
) -> None:
    """A JSON log's ``request_time`` is a time only when it is what NGINX writes (digits, a
    dot, digits): ``-5`` moved the request 5 s later and was counted as a -5,000 ms time."""
    log = tmp_path_factory.mktemp("rt") / "a.json"
    docs = [{"msec": f"{T0 + i}.500", "request_time": "0.010", "status": 200} for i in range(9)]
    docs.append({"msec": f"{T0 + 8}.500", "request_time": value, "status": 200})
    log.write_text("".join(json.dumps(d) + "\n" for d in docs))
    d = read_logs([log], compile_format(COMBINED, name=DEFAULT_NAME), given=False)
    text = str(value)
    ok = bool(re.fullmatch(r"[0-9]*\.?[0-9]*", text)) and text not in ("", ".")
    ok = ok and len(text.partition(".")[0]) <= 12 and not isinstance(value, bool)
    assert d.skipped == (0 if ok else 1), text
    assert d.request_time_ms is not None and d.request_time_ms[0] >= 0
    assert d.requests.end.endswith("03:20:08Z")  # never later than it was logged


# bzip2, xz, zstd, zip, UTF-16 -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pack", "said"),
    [
        (lambda b: bz2.compress(b), "bzip2-compressed"),
        (lambda b: lzma.compress(b), "xz-compressed"),
        (lambda b: b"\x28\xb5\x2f\xfd" + b"\0" * 20, "zstd-compressed"),
        (lambda b: b"PK\x03\x04" + b, "a zip archive"),
        (lambda b: b.decode().encode("utf-16"), "UTF-16 text"),
    ],
)
@pytest.mark.parametrize("counters", [False, True])
def test_a_compression_sizing_does_not_read_is_named(
    tmp_path: Path, pack: Callable[[bytes], bytes], said: str, counters: bool
) -> None:
    """They were "binary data, not an access log", and with --counters "fewer than 2
    Prometheus samples"."""
    path = tmp_path / "access.log.x"
    path.write_bytes(pack("".join(line(T0 + i) for i in range(20)).encode()))
    code, out = demand(*(["--counters"] if counters else []), str(path))
    assert code == 2 and f"{path}: {said}: sizing reads plain and gzip'd files" in out, out


# --assume as typed --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("tls-share=0.5%%", "the value is not a number"),  # was read as 0.005
        ("tls-share", "give NAME=VALUE"),  # was "'tls-share' is not one of tls-share, ..."
        ("requests-per-connection=1e12", "from 1 to 1,000,000,000"),  # was "give 1 or more"
    ],
)
def test_an_assumption_as_typed_is_read_or_refused_saying_why(
    tmp_path: Path, typed: str, said: str
) -> None:
    log = tmp_path / "access.log"
    log.write_text(line(T0))
    code, out = demand(str(log), "--assume", typed, "--assume-source", "a test")
    assert code == 2 and said in out, out


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    share=st.one_of(st.floats(min_value=-1.0, max_value=2.0), st.just(-0.0), st.just(math.nan)),
    pct=st.booleans(),
)
def test_an_assumed_share_is_in_range_and_never_minus_zero(share: float, pct: bool) -> None:
    typed = f"tls-share={share * 100 if pct else share}{'%' if pct else ''}"
    try:
        (got,) = parse_assumptions([typed], "a test")
    except UsageError:
        assert math.isnan(share) or not 0 <= share <= 1 or pct  # x * 100 / 100 may pass 1
        return
    assert 0 <= got.value <= 1 and math.copysign(1, got.value) == 1


# A damaged gzip -----------------------------------------------------------------------------


def _intact_lines(packed: bytes, original: bytes) -> int:
    """The reference: the lines zlib gives whole and unchanged before it refuses the data,
    fed a byte at a time (each byte's output kept)."""
    inflate = zlib.decompressobj(wbits=31)
    got = bytearray()
    for i in range(len(packed)):
        try:
            got += inflate.decompress(packed[i : i + 1])
        except zlib.error:
            break
    same = 0
    while same < min(len(got), len(original)) and got[same] == original[same]:
        same += 1
    return original[:same].count(b"\n")


@settings(max_examples=25, deadline=None, derandomize=True)
@given(where=st.floats(min_value=0.05, max_value=1.0), flips=st.integers(1, 40))
def test_a_damaged_gzip_keeps_every_line_before_the_damage(
    tmp_path_factory: pytest.TempPathFactory, where: float, flips: int
) -> None:
    """zlib gives nothing of a call that meets damage: one call inflated a small file
    whole, so a corrupt block, or only a wrong CRC in the trailer, lost every line."""
    original = "".join(line(T0 + i // 10) for i in range(600)).encode()
    packed = bytearray(gzip.compress(original))
    at = min(len(packed) - 1, 10 + int(where * (len(packed) - 10)))
    for i in range(at, min(len(packed), at + flips)):
        packed[i] ^= 0x5A
    log = tmp_path_factory.mktemp("gz") / "access.log.gz"
    log.write_bytes(bytes(packed))
    want = _intact_lines(bytes(packed), original)
    try:
        d = read_logs([log], compile_format(COMBINED, name=DEFAULT_NAME), given=False)
    except UsageError:
        assert want == 0
        return
    assert d.totals is not None and d.totals.requests >= want
    assert d.sources[0].damage.startswith(("corrupt gzip data", "truncated gzip"))


def test_a_gzip_with_a_wrong_crc_keeps_all_its_lines(tmp_path: Path) -> None:
    original = "".join(line(T0 + i // 10) for i in range(600)).encode()
    packed = gzip.compress(original)
    log = tmp_path / "access.log.gz"
    log.write_bytes(packed[:-8] + b"\0\0\0\0" + packed[-4:])
    d = read_logs([log], compile_format(COMBINED, name=DEFAULT_NAME), given=False)
    assert d.totals is not None and d.totals.requests == 600
    found = re.fullmatch(r"corrupt gzip data, found at byte ([0-9,]+)", d.sources[0].damage)
    assert found is not None  # in the trailer's CRC, where zlib checks it
    assert len(packed) - 8 <= int(found.group(1).replace(",", "")) < len(packed) - 4


# One server's files that hold the same lines ----------------------------------------------------


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    rates=st.lists(st.integers(min_value=0, max_value=6), min_size=150, max_size=300),
    kept=st.floats(min_value=0.3, max_value=0.99),
)
@example(rates=[3] * 200, kept=0.9)  # 179 busy seconds the same in both: named
def test_a_log_beside_a_gzip_of_most_of_its_lines_is_named(
    tmp_path_factory: pytest.TempPathFactory, rates: list[int], kept: float
) -> None:
    """``access.log`` and an ``access.log.1.gz`` made from it a little earlier were summed
    as one server's rotations, without a word: the busiest second doubled. Rotations that
    follow each other in time are never named."""
    seconds = [s for s, n in enumerate(rates) for _ in range(n)]
    cut = int(len(seconds) * kept)
    if cut < 2 or cut == len(seconds):
        return
    tmp = tmp_path_factory.mktemp("rot")
    log, rotated = tmp / "access.log", tmp / "access.log.1.gz"
    fmt = compile_format(COMBINED, name=DEFAULT_NAME)
    rotated.write_bytes(gzip.compress("".join(line(T0 + s) for s in seconds[:cut]).encode()))
    log.write_text("".join(line(T0 + s) for s in seconds))  # a copy of the lines, and more
    lo, hi = max(seconds[0], seconds[0]) + 1, min(seconds[-1], seconds[cut - 1]) - 1
    busy = sum(1 for s in range(lo, hi + 1) if rates[s])
    named = [n for n in read_logs([log, rotated], fmt, given=False).notes if "one server" in n]
    assert bool(named) == (hi - lo >= 60 and busy >= 10), (lo, hi, busy)
    log.write_text("".join(line(T0 + s) for s in seconds[cut:]))  # the lines after it
    named = [n for n in read_logs([log, rotated], fmt, given=False).notes if "one server" in n]
    assert not named


def test_a_copy_of_a_real_logs_first_lines_out_of_time_order_is_named(tmp_path: Path) -> None:
    """Elastic's public sample (tests/data/logs) is not in time order: a copy of its first
    8,000 lines spans its whole 4 days, one request a second or so, and no second's count
    is the same in both files; each second of the copy is still held by the log. Split in
    two instead (its first 8,000 lines, then the rest), its lines are shared out and each
    file has seconds the other has not: not named."""
    with gzip.open(Path(__file__).parents[1] / "data/logs/elastic_apache_logs.gz", "rt") as f:
        lines = f.readlines()
    fmt = compile_format(COMBINED, name=DEFAULT_NAME)
    log, rotated = tmp_path / "access.log", tmp_path / "access.log.1.gz"
    log.write_text("".join(lines))
    rotated.write_bytes(gzip.compress("".join(lines[:8000]).encode()))
    named = [n for n in read_logs([log, rotated], fmt, given=False).notes if "one server" in n]
    assert len(named) == 1 and "likely one holds the other's lines" in named[0], named
    log.write_text("".join(lines[8000:]))
    named = [n for n in read_logs([log, rotated], fmt, given=False).notes if "one server" in n]
    assert not named
