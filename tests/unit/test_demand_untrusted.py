"""``sizing demand`` on hostile and real-world inputs (issue 58, the reader's side):
bounded memory and time whatever the span, compression or line length; the stock formats
recognised; no "internal error" on odd values; totals and connection tallies that add up.
The hostile files are generated here; memory is measured in a subprocess (its peak RSS,
``VmHWM``: ``getrusage``'s ``ru_maxrss`` keeps the parent's across fork and exec)."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.demand.counted import read_counters
from sizing.demand.formats import COMBINED, DEFAULT_NAME, compile_format
from sizing.demand.logs import read_logs
from sizing.demand.tally import CONN_OVER
from sizing.errors import UsageError

runner = CliRunner()
T0 = 1_764_300_000
DAY = 86_400


def line(sec: int, status: int = 200, body: str = "512", tail: str = ' "-" "curl/8.5.0"') -> str:
    ts = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(sec))
    return f'10.0.0.1 - - [{ts}] "GET / HTTP/1.1" {status} {body}{tail}\n'


def default_format():  # type: ignore[no-untyped-def]
    return compile_format(COMBINED, name=DEFAULT_NAME)


def demand(*args: str) -> tuple[int, str]:
    got = runner.invoke(app, ["demand", *args])
    return got.exit_code, got.output


_MEASURE = """
import sys, time
from pathlib import Path
from sizing.demand.formats import COMBINED, DEFAULT_NAME, compile_format
from sizing.demand.logs import read_logs
t = time.process_time()
fmt = compile_format(sys.argv[2], name=DEFAULT_NAME) if sys.argv[2] else compile_format(
    COMBINED, name=DEFAULT_NAME)
try:
    d = read_logs([Path(sys.argv[1])], fmt, given=bool(sys.argv[2]))
    out = f"{d.requests.seconds} {d.lines} {d.skipped}"
except Exception as exc:
    out = type(exc).__name__
hwm = next(x for x in open("/proc/self/status") if x.startswith("VmHWM")).split()[1]
print(out, time.process_time() - t, int(hwm) // 1024)
"""


def measured(path: Path, fmt: str = "") -> tuple[str, float, int]:
    """What reading ``path`` gave, its CPU seconds and the peak RSS (MiB) of a fresh
    interpreter doing it."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path), fmt],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    *what, cpu, rss = done.stdout.split()
    return " ".join(what), float(cpu), int(rss)


@pytest.fixture(scope="module")
def base_rss(tmp_path_factory: pytest.TempPathFactory) -> int:
    """The peak RSS (MiB) of the same interpreter reading a ten-line log."""
    small = tmp_path_factory.mktemp("base") / "small.log"
    small.write_text("".join(line(T0 + i) for i in range(10)))
    return measured(small)[2]


# -- bounded by design ---------------------------------------------------------------


def test_two_lines_ten_years_apart_take_no_memory_for_the_span(
    tmp_path: Path, base_rss: int
) -> None:
    log = tmp_path / "far.log"
    log.write_text(line(T0) + line(T0 + 3650 * DAY))
    what, cpu, rss = measured(log)
    assert what == f"{3650 * DAY + 1} 2 0"  # both kept: neither is a stray minority
    assert cpu < 5 and rss - base_rss < 30, (cpu, rss, base_rss)


def test_a_stray_1970_line_and_one_ten_years_on_are_outliers_named_by_line(
    tmp_path: Path,
) -> None:
    log = tmp_path / "a.log"
    body = [line(T0 + i // 5) for i in range(1000)]
    body.insert(500, line(0))
    log.write_text("".join(body) + line(T0 + 3650 * DAY))
    d = read_logs([log], default_format(), given=False)
    assert d.requests.seconds == 200 and d.requests.start.startswith("2025-11-28")
    assert d.totals is not None and d.totals.outliers == 2 and d.totals.requests == 1000
    note = next(n for n in d.notes if "far from the rest" in n)
    assert "2 request(s)" in note and f"{log}:501 (1970-01-01T00:00:00Z)" in note
    assert f"{log}:1002" in note


def test_a_long_quiet_spell_is_not_an_outlier(tmp_path: Path) -> None:
    log = tmp_path / "gap.log"
    log.write_text(
        "".join(line(T0 + i) for i in range(500))
        + "".join(line(T0 + 30 * DAY + i) for i in range(300))
    )
    d = read_logs([log], default_format(), given=False)
    assert d.totals is not None and d.totals.outliers == 0 and d.totals.requests == 800
    assert d.requests.seconds == 30 * DAY + 300


def test_a_small_gzip_of_a_huge_line_is_inflated_a_chunk_at_a_time(
    tmp_path: Path, base_rss: int
) -> None:
    bomb = tmp_path / "bomb.gz"
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    with bomb.open("wb") as f:
        f.write(deflate.compress(line(T0).encode() * 10))
        for _ in range(256):
            f.write(deflate.compress(b"A" * (1 << 20)))  # 256 MiB, one line
        f.write(deflate.compress(b"\n" + line(T0 + 1).encode() * 10))
        f.write(deflate.flush())
    assert bomb.stat().st_size < 1 << 20
    what, cpu, rss = measured(bomb)
    assert what == "2 21 1"
    assert cpu < 20 and rss - base_rss < 60, (cpu, rss, base_rss)
    d = read_logs([bomb], default_format(), given=False)
    assert d.sources[0].skipped == {"line too long": 1}
    assert f"{bomb}:11: line too long" in d.skipped_samples[0]


def test_a_50_mb_line_is_skipped_in_linear_time(tmp_path: Path, base_rss: int) -> None:
    log = tmp_path / "long.log"
    with log.open("w") as f:
        f.write("x" * (50 << 20) + "\n")  # first: the JSON check reads it first
        f.write("".join(line(T0 + i) for i in range(20)))
    what, cpu, rss = measured(log)
    assert what.endswith(" 21 1")
    assert cpu < 10 and rss - base_rss < 60, (cpu, rss, base_rss)


def test_adjacent_variables_match_in_linear_time_or_are_refused(tmp_path: Path) -> None:
    fmt = compile_format('$host$request_uri [$time_local] "$request" $status')
    hostile = b"a" * (1 << 20) + b"\n"
    t = time.process_time()
    assert fmt.pattern.findall(hostile * 4) == []
    assert time.process_time() - t < 1
    good = line(T0).replace("10.0.0.1 - - ", "example.invalid/x ").rsplit(" ", 3)[0]
    assert len(fmt.pattern.findall(good.encode())) == 1
    with pytest.raises(UsageError, match=r"\$status\$body_bytes_sent with nothing between"):
        compile_format("[$time_local] $status$body_bytes_sent")


# -- real formats --------------------------------------------------------------------


def test_apache_dash_for_an_empty_body_is_0_bytes(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text(line(T0, 304, "-") + line(T0, 404, "-") + line(T0 + 1, 200, "100"))
    d = read_logs([log], default_format(), given=False)
    assert d.skipped == 0 and d.totals is not None
    assert d.totals.classes == {"2xx": 1, "3xx": 1, "4xx": 1} and d.totals.bytes_sent == 100


@pytest.mark.parametrize("fast", [True, False], ids=["compiled", "regex"])
def test_bytes_sent_is_summed_past_int64(
    tmp_path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each size fits in int64, their sum does not: 20 sizes of 10^18 - 1 once wrapped to
    1,553,255,926,290,448,364 bytes sent, in both readers."""
    from sizing.demand import fastscan

    monkeypatch.setattr(fastscan, "ENABLED", fast)
    log = tmp_path / "a.log"
    big = 999_999_999_999_999_999
    log.write_text("".join(line(T0 + i, 200, str(big)) for i in range(20)))
    d = read_logs([log], default_format(), given=False)
    assert d.totals is not None and d.totals.bytes_sent == 20 * big


@pytest.mark.parametrize(
    ("name", "tail"),
    [
        ("NGINX's main format", ' "-" "curl/8.5.0" "203.0.113.9"'),
        ("Apache's common format", ""),
        ("Apache's combined format", ' "-" "Mozilla/5.0 \\"quoted\\""'),
    ],
)
def test_stock_formats_are_recognised_and_said(tmp_path: Path, name: str, tail: str) -> None:
    log = tmp_path / "x.log"
    log.write_text("".join(line(T0 + i // 3, tail=tail) for i in range(30)))
    d = read_logs([log], default_format(), given=False)
    assert d.lines == 30 and d.skipped == 0 and d.requests.peak == 3
    assert f"{log}: read in {name} (not the combined format)" in d.notes


def test_an_unknown_format_names_the_options_to_give(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("".join(f"{T0 + i}.000 GET / 200\n" for i in range(30)))
    code, out = demand(str(log))
    assert code != 0 and "internal error" not in out
    assert "nor in NGINX's main format" in out and "--log-format" in out
    assert "--nginx-conf" in out


def test_a_directory_a_fifo_and_a_device_are_named(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    for path, what in (
        (tmp_path / "dir", "a directory"),
        (tmp_path / "fifo", "a FIFO"),
        (Path("/dev/zero"), "a character device"),
        (tmp_path / "none", "no such file"),
    ):
        code, out = demand(str(path))
        assert code != 0 and what in out and "internal error" not in out
        got = runner.invoke(app, ["demand", "--counters", str(path)])
        assert got.exit_code != 0 and what in got.output


def test_a_corrupt_gzip_member_keeps_the_lines_before_and_reads_the_next(
    tmp_path: Path,
) -> None:
    members = [
        gzip.compress("".join(line(T0 + m * 100 + i % 100) for i in range(3000)).encode())
        for m in range(3)
    ]
    bad = bytearray(members[1])
    mid = len(bad) // 2
    for i in range(mid, mid + 64):
        bad[i] ^= 0x5A
    log = tmp_path / "access.log.2.gz"
    log.write_bytes(members[0] + bytes(bad) + members[2])
    d = read_logs([log], default_format(), given=False)
    damage = d.sources[0].damage
    # zlib finds the damage where its data stops making sense: either refused data
    # (between bytes A and B) or a member that runs on past its own end
    assert damage.startswith("corrupt gzip data")
    found = re.search(r"bytes? ([0-9,]+)", damage)
    assert found is not None
    start = int(found.group(1).replace(",", ""))
    assert len(members[0]) <= start <= len(members[0]) + len(bad)
    assert f"at byte {len(members[0]) + len(bad):,}" in damage  # the next member
    assert d.totals is not None and d.totals.requests >= 6000  # members 1 and 3 whole
    # the third member read whole (the damaged one's garbage may hold a time or two)
    from sizing.demand.scan import scan_file

    third = scan_file(log, default_format()).tally.requests.dense(T0 + 200, T0 + 299)
    assert int(third.sum()) >= 3000


# -- crashes that were "internal error" ----------------------------------------------


def test_a_5000_digit_msec_is_a_time_not_readable(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    log.write_text(f"x {T0}.123 200\n" * 10 + "x " + "9" * 5000 + ".1 200\n")
    code, out = demand(str(log), "--log-format", "$remote_addr $msec $status", "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["skipped"] == 1 and doc["sources"][0]["skipped"] == {"time not readable": 1}
    log.write_text(line(T0) * 5 + line(T0).replace("2025", "99999"))
    code, out = demand(str(log), "--json")
    assert code == 0 and json.loads(out)["skipped"] == 1


def _prom(samples: list[tuple[str, str]]) -> str:
    return "".join(f"{t}\nnginx_http_requests_total {v}\n" for t, v in samples)


@pytest.mark.parametrize(
    "samples",
    [
        [(str(T0), "10"), (str(T0), "20"), (str(T0 + 1), "30"), (str(T0 + 2), "40")],
        [(str(T0), "10"), (str(T0 + 1), "NaN"), (str(T0 + 2), "30"), (str(T0 + 3), "40")],
        [(str(T0), "10"), (str(T0 + 1), "+Inf"), (str(T0 + 2), "30"), (str(T0 + 3), "40")],
        [("0", "1")] + [(str(T0 + i), str(10 * i)) for i in range(200)],
    ],
    ids=["same time", "NaN", "+Inf", "epoch 0"],
)
def test_odd_counter_samples_are_read_or_refused_in_one_line(
    tmp_path: Path, samples: list[tuple[str, str]]
) -> None:
    f = tmp_path / "prom.txt"
    f.write_text(_prom(samples))
    got = runner.invoke(app, ["demand", "--counters", str(f), "--json"])
    assert got.exit_code == 0, got.output
    d = read_counters([f])
    assert d.requests.peak == 10 and d.requests.start.startswith("2025-11-28")


# -- totals, connection tallies, the terminal ------------------------------------------


def test_totals_add_up_and_are_in_the_terminal_and_json(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    rows = [(T0 + i % 50, (200, 301, 404, 503)[i % 4], i * 7) for i in range(400)]
    log.write_text("".join(line(t, s, str(b)) for t, s, b in rows))
    code, out = demand(str(log), "--json")
    tot = json.loads(out)["totals"]
    assert tot["requests"] == 400 and tot["bytes_sent"] == sum(b for *_, b in rows)
    assert tot["classes"] == {"2xx": 100, "3xx": 100, "4xx": 100, "5xx": 100}
    code, out = demand(str(log))
    assert (
        f"totals: 400 requests; 2xx 100, 3xx 100, 4xx 100, 5xx 100; {sum(b for *_, b in rows):,}"
        in out
    )
    out_file = tmp_path / "d.yml"
    assert demand(str(log), "-o", str(out_file))[0] == 0
    from sizing.demand.file import load_demand

    again = load_demand(out_file)
    assert again.totals is not None and again.totals.requests == 400


CONN = '[$time_local] $status $connection_requests "$ssl_session_reused"'


def test_connection_requests_histogram_and_tls_or_plain_new_connections(
    tmp_path: Path,
) -> None:
    log = tmp_path / "c.log"
    ts = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(T0))
    rows = [(1, "."), (1, "r"), (1, ""), (1, "-"), (2, "r"), (3, ""), (5000, "."), (99999, ".")]
    log.write_text("".join(f'[{ts}] 200 {n} "{r}"\n' for n, r in rows))
    d_t = read_logs([log], compile_format(CONN), given=True)
    assert d_t.lines == 8
    from sizing.demand.scan import scan_file

    t = scan_file(log, compile_format(CONN)).tally
    assert t.conn_requests == {1: 4, 2: 1, 3: 1, CONN_OVER: 2}
    assert (t.tls_connections, t.plain_connections) == (2, 2)
    j = tmp_path / "c.json"
    j.write_text(
        "".join(
            json.dumps(
                {"msec": f"{T0}.000", "connection_requests": str(n), "ssl_session_reused": r}
            )
            + "\n"
            for n, r in rows
        )
    )
    from sizing.demand.jsonlog import scan_json

    tj = scan_json(j).tally
    assert tj.conn_requests == t.conn_requests
    assert (tj.tls_connections, tj.plain_connections) == (2, 2)


def test_the_terminal_tells_the_truth(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    # a busy hour by total (steady 20/s) and, a day later, a lone burst of 60: the chart
    # must hold the burst; the span crosses a day, so "peak at" carries the date
    body = [line(T0 + s) for s in range(3600) for _ in range(20)]
    body += [line(T0 + DAY + 5000)] * 60
    log.write_text("".join(body))
    code, out = demand(str(log))
    assert code == 0
    row = next(r for r in out.splitlines() if r.startswith("requests "))
    burst = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(T0 + DAY + 5000))
    assert row.split()[1] == "60" and row.endswith(burst)
    assert "peak 60)" in out.replace("\n  ", " ")
    avg = (3600 * 20 + 60) / (DAY + 5001)
    assert row.split()[4] == f"{avg:.2f}"  # two significant digits below 1
    from sizing.report.render.demand_text import _n

    assert [_n(x) for x in (0.00073, 0.033, 1e-05)] == ["0.00073", "0.033", "0.000010"]
    doc = json.loads(demand(str(log), "--json")[1])
    assert doc["requests"]["peak_to_average"] == pytest.approx(60 / avg, rel=1e-9)
    assert all(len(r) <= 100 for r in out.splitlines())


def test_a_file_of_nothing_readable_says_why(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("y" * 70_000 + "\n")
    code, out = demand(str(log))
    assert code != 0 and "internal error" not in out
    assert f"no line read (1 line too long; first at {log}:1: line too long)" in out.replace(
        "\n", " "
    )
