"""``sizing demand``: logs and counters in, the per-second demand out (small generated
files in tmp dirs, the CLI in-process)."""

from __future__ import annotations

import gzip
import json
import random
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.demand.counted import read_counters
from sizing.demand.derive import nearest_rank
from sizing.demand.file import load_demand
from sizing.demand.formats import COMBINED, compile_format, format_from_conf
from sizing.demand.logs import read_logs
from sizing.errors import UsageError

runner = CliRunner()
T0 = 1_764_300_000
RICH = (
    '$remote_addr [$time_local] "$request" $status $bytes_sent $msec $request_time'
    " $connection_requests $ssl_session_reused"
)


def combined(sec: int, status: int = 200, size: int = 512, off: str = "+0000") -> str:
    sign = 1 if off[0] == "+" else -1
    shift = sign * (int(off[1:3]) * 3600 + int(off[3:5]) * 60)
    ts = time.strftime(f"%d/%b/%Y:%H:%M:%S {off}", time.gmtime(T0 + sec + shift))
    return f'10.0.0.1 - - [{ts}] "GET / HTTP/1.1" {status} {size} "-" "curl/8.5.0"\n'


def rich(msec: float, rt: float, first: int, reused: str, status: int = 200) -> str:
    ts = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(int(msec)))
    return f'10.0.0.1 [{ts}] "GET / HTTP/1.1" {status} 300 {msec:.3f} {rt:.3f} {first} {reused}\n'


def write_profile(path: Path, counts: list[int], seed: int = 1) -> None:
    """Lines with ``counts[s]`` in second s, shuffled (workers write out of order)."""
    lines = [combined(s, 200 if k % 10 else 404) for s, n in enumerate(counts) for k in range(n)]
    random.Random(seed).shuffle(lines)
    path.write_text("".join(lines))


def fmt_combined():  # type: ignore[no-untyped-def]
    return compile_format(COMBINED, name="combined")


def test_out_of_order_lines_are_binned_and_the_peak_recovered_exactly(tmp_path: Path) -> None:
    counts = [random.Random(s).randint(5, 40) for s in range(300)]
    counts[123] = 97
    write_profile(tmp_path / "access.log", counts)
    d = read_logs([tmp_path / "access.log"], fmt_combined(), given=False)
    assert d.requests.peak == 97
    assert d.requests.peak_at == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(T0 + 123))
    assert d.requests.seconds == 300
    assert d.requests.p99 == nearest_rank(sorted(counts), 0.99)
    assert d.lines == sum(counts) and d.skipped == 0
    assert d.classes["4xx"].average == pytest.approx(
        sum(c // 10 + (c % 10 > 0) for c in counts) / 300, rel=0.01
    )
    assert any("$connection_requests $ssl_session_reused" in m.add for m in d.missing)
    assert "1 s resolution" in d.arrival


def test_nearest_rank_is_numpys_inverted_cdf() -> None:
    rnd = random.Random(3)
    for n in (1, 7, 100, 1001):
        xs = sorted(rnd.randint(0, 500) for _ in range(n))
        for q in (0.5, 0.99, 0.999):
            assert nearest_rank(xs, q) == int(np.percentile(xs, q * 100, method="inverted_cdf"))


def test_arrival_is_msec_minus_request_time_and_tls_figures(tmp_path: Path) -> None:
    log = tmp_path / "access.log"
    lines = [
        rich(T0 + 10.200, 0.700, 1, "."),  # arrived at T0+9.5: second 9
        rich(T0 + 10.900, 0.100, 2, "."),  # same connection: not new
        rich(T0 + 10.950, 0.010, 1, "r"),  # resumed
        rich(T0 + 11.001, 0.002, 1, "."),  # arrived at T0+10.999: second 10
        rich(T0 + 11.002, 0.001, 1, "-"),  # plain http: new connection, no handshake
    ]
    log.write_text("".join(lines))
    d = read_logs([log], compile_format(RICH), given=True)
    assert d.requests.start.endswith(time.strftime("%H:%M:%SZ", time.gmtime(T0 + 9)))
    assert d.requests.peak == 3  # second 10 holds 3 (9 and 11 one each)
    assert d.new_connections is not None and d.new_connections.peak == 2
    assert d.full_handshakes is not None and d.full_handshakes.peak == 1
    assert sum(1 for _ in lines) / 4 == d.requests_per_connection
    assert d.resumption_share == pytest.approx(1 / 3, abs=1e-3)
    assert d.request_time_ms == (10, 700)  # nearest rank of 1, 2, 10, 100, 700 ms
    assert "(to the ms)" in d.arrival and not d.missing


def test_rotated_and_gzipped_files_of_two_servers_are_summed_per_second(tmp_path: Path) -> None:
    for server in ("a", "b"):
        (tmp_path / server).mkdir()
        # each server's own lines (byte-identical logs would be one log given twice)
        size = ord(server)
        (tmp_path / server / "access.log").write_text(
            "".join(combined(5, size=size) for _ in range(3))
        )
        with gzip.open(tmp_path / server / "access.log.2.gz", "wt") as f:
            f.write("".join(combined(1, size=size) for _ in range(4)))
    files = sorted(tmp_path.glob("*/access.log*"))
    d = read_logs(files, fmt_combined(), given=False)
    assert d.requests.peak == 8 and d.lines == 14
    assert {s.server for s in d.sources} == {str(tmp_path / x / "access.log") for x in "ab"}
    assert sum(s.gzip for s in d.sources) == 2


def test_truncated_gzip_is_read_up_to_the_damage(tmp_path: Path) -> None:
    body = "".join(combined(s % 50, size=s) for s in range(20000)).encode()
    whole = gzip.compress(body)
    cut = tmp_path / "access.log.1.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    d = read_logs([cut], fmt_combined(), given=False)
    assert 0 < d.lines < 20000
    assert d.sources[0].damage.startswith("truncated gzip")
    assert any("read up to the damage" in n for n in d.notes)


def test_bad_lines_are_counted_and_sampled_with_file_and_line(tmp_path: Path) -> None:
    log = tmp_path / "access.log"
    lines = [combined(s % 10) for s in range(100)]
    lines[41] = "this is not an access log line\n"
    lines[77] = "\x00\x01garbage\n"
    log.write_text("".join(lines))
    d = read_logs([log], fmt_combined(), given=False)
    assert d.lines == 100 and d.skipped == 2 and d.requests.average == 9.8
    assert d.skipped_samples[0].startswith(f"{log}:42: not in the given format")
    assert f"{log}:78: binary data" in d.skipped_samples[1]
    assert d.notes[0].startswith("2 of 100 lines skipped")


def test_a_format_that_does_not_match_is_refused_with_the_first_line(tmp_path: Path) -> None:
    """The line is named by file, number and the field that failed, never by its content
    (a client address, a URL, a token)."""
    log = tmp_path / "access.log"
    log.write_text("".join(combined(s) for s in range(10)))
    with pytest.raises(UsageError, match=r"not in the given format .*access.log:1, at \$") as e:
        read_logs([log], compile_format(RICH, name="the given format"), given=True)
    assert "10.0.0.1" not in str(e.value) and "GET" not in str(e.value)


def test_binary_garbage_and_empty_files(tmp_path: Path) -> None:
    (tmp_path / "junk.log").write_bytes(bytes(range(256)) * 40)
    with pytest.raises(UsageError, match=r"junk.log: binary data, not an access log"):
        read_logs([tmp_path / "junk.log"], fmt_combined(), given=False)
    (tmp_path / "empty.log").write_text("")
    (tmp_path / "ok.log").write_text(combined(1))
    d = read_logs([tmp_path / "empty.log", tmp_path / "ok.log"], fmt_combined(), given=False)
    assert any("empty.log: empty file" in n for n in d.notes)
    with pytest.raises(UsageError, match="no request read: .*empty file"):
        read_logs([tmp_path / "empty.log"], fmt_combined(), given=False)


def test_a_utc_offset_change_is_reported_and_no_second_is_lost(tmp_path: Path) -> None:
    log = tmp_path / "access.log"
    log.write_text("".join(combined(s, off="+0100" if s < 5 else "+0200") for s in range(10)))
    d = read_logs([log], fmt_combined(), given=False)
    assert d.requests.seconds == 10 and d.requests.peak == 1
    assert any("changes from +0100 to +0200 at line 6" in n for n in d.notes)


def test_two_servers_whose_clocks_disagree_are_reported(tmp_path: Path) -> None:
    rnd = random.Random(5)
    counts = [rnd.randint(0, 30) for _ in range(400)]
    for server, shift in (("a", 0), ("b", 7)):
        (tmp_path / server).mkdir()
        shifted = [0] * shift + counts
        write_profile(tmp_path / server / "access.log", shifted[:400])
    d = read_logs(sorted(tmp_path.glob("*/access.log")), fmt_combined(), given=False)
    assert any("disagree by about 7 s" in n for n in d.notes)


def test_json_logs_are_read_by_their_keys(tmp_path: Path) -> None:
    log = tmp_path / "access.json"
    docs = [
        {
            "msec": f"{T0 + 3.5:.3f}",
            "request_time": "1.000",
            "status": "200",
            "bytes_sent": "100",
            "connection_requests": "1",
            "ssl_session_reused": ".",
        },
        {
            "msec": f"{T0 + 3.6:.3f}",
            "request_time": "0.001",
            "status": "503",
            "bytes_sent": "99999",
            "connection_requests": "1",
            "ssl_session_reused": "r",
        },
    ]
    log.write_text("".join(json.dumps(x) + "\n" for x in docs))
    d = read_logs([log], fmt_combined(), given=False)
    assert d.requests.start.endswith(time.strftime("%H:%M:%SZ", time.gmtime(T0 + 2)))
    assert d.full_handshakes is not None and d.resumption_share == 0.5
    assert "5xx" in d.classes


def test_log_format_is_read_from_nginx_conf(tmp_path: Path) -> None:
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        'http {\n  log_format main escape=json \'{"t":"$msec",\'\n'
        '      \'"s":"$status","rt":"$request_time"}\';\n}\n'
    )
    fmt = format_from_conf(conf, "main")
    assert fmt.escape == "json" and fmt.has("msec", "status", "request_time")
    with pytest.raises(UsageError, match="no log_format 'other' .found: main."):
        format_from_conf(conf, "other")


def test_stub_status_plus_and_prometheus_counters(tmp_path: Path) -> None:
    stub = tmp_path / "stub.txt"
    pages = []
    for i, (acc, req) in enumerate([(100, 1000), (110, 1300), (130, 1400)]):
        pages.append(
            f"{T0 + 10 * i}\nActive connections: 3\nserver accepts handled requests\n"
            f" {acc} {acc} {req}\nReading: 0 Writing: 1 Waiting: 2\n"
        )
    stub.write_text("".join(pages))
    d = read_counters([stub])
    assert d.requests.peak == 30 and d.requests.average == 20
    assert d.new_connections is not None and d.new_connections.peak == 2
    assert d.full_handshakes is None and d.resolution_s == 10
    assert any("scraped every 10 s" in n for n in d.notes)
    plus = tmp_path / "plus.jsonl"
    rows = [(0, 0, 0), (100, 50, 10), (300, 80, 40)]
    plus.write_text(
        "".join(
            json.dumps(
                {
                    "time": T0 + 5 * i,
                    "http/requests": {"total": r},
                    "ssl": {"handshakes": h, "session_reuses": s},
                }
            )
            + "\n"
            for i, (r, h, s) in enumerate(rows)
        )
    )
    d = read_counters([plus])
    assert d.full_handshakes is not None and d.full_handshakes.peak == 8  # (50 - 10) / 5
    assert d.resumption_share == 0.5 and d.requests.peak == 40
    prom = tmp_path / "prom.txt"
    prom.write_text(
        f"{T0}\n# TYPE nginx_http_requests_total counter\nnginx_http_requests_total 10\n"
        f"{T0 + 2}\nnginx_http_requests_total 50\nnginx_connections_accepted 4\n"
    )
    assert read_counters([prom]).requests.peak == 20


def test_cli_demand_file_and_recommend_size_the_same_peak(tmp_path: Path) -> None:
    counts = [10] * 100
    counts[50] = 12345
    write_profile(tmp_path / "access.log", counts)
    out = tmp_path / "demand.yml"
    got = runner.invoke(app, ["demand", str(tmp_path / "access.log"), "-o", str(out), "--json"])
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout)["requests"]["peak"] == 12345
    assert load_demand(out).sources[0].sha256
    db = tmp_path / "none.sqlite"
    rec = runner.invoke(app, ["recommend", "--demand", str(out), "--db", str(db), "--json"])
    assert rec.exit_code == 0, rec.output
    doc = json.loads(rec.stdout)
    assert doc["demand"]["rps"] == 12345 and doc["traffic"]["peak"] == "max"
    p99 = runner.invoke(
        app, ["recommend", "--demand", str(out), "--peak", "p99", "--db", str(db), "--json"]
    )
    assert json.loads(p99.stdout)["demand"]["rps"] == 10
    from sizing.cli.sizing_opts import PEAK_CHOICES
    from sizing.demand.model import PEAKS

    assert PEAK_CHOICES == PEAKS
    bad = runner.invoke(app, ["recommend", "--demand", str(out), "--peak", "p50"])
    assert bad.exit_code == 2 and "--peak: 'p50' is not one of max, p99.9, p99" in bad.output
    both = runner.invoke(app, ["recommend", "--demand", str(out), "--rps", "5"])
    assert both.exit_code == 2 and "no --rps or --tps beside it" in both.output
    text = runner.invoke(app, ["demand", str(tmp_path / "access.log")])
    assert all(len(line) <= 100 for line in text.stdout.splitlines())
    assert "12,345" in text.stdout


def test_guide_your_traffic_chapter_says_the_demand_recommend_sizes(tmp_path: Path) -> None:
    log = tmp_path / "access.log"
    lines = [
        rich(T0 + s + 0.5, 0.001, 1 if k == 0 else k + 1, "r" if s % 2 else ".")
        for s in range(60)
        for k in range(3)
    ]
    lines += [rich(T0 + 30.2, 0.001, 1, ".") for _ in range(40)]  # the peak: 43, 41 full
    log.write_text("".join(lines))
    out = tmp_path / "demand.yml"
    assert (
        runner.invoke(app, ["demand", str(log), "--log-format", RICH, "-o", str(out)]).exit_code
        == 0
    )
    db = str(tmp_path / "none.sqlite")
    rec = json.loads(
        runner.invoke(app, ["recommend", "--demand", str(out), "--db", db, "--json"]).stdout
    )
    assert rec["demand"]["rps"] == 43 and rec["demand"]["tps"] == 41
    md = tmp_path / "guide.md"
    got = runner.invoke(app, ["guide", "--demand", str(out), "--db", db, "-o", str(md)])
    assert got.exit_code == 0, got.output
    text = md.read_text()
    chapter = text.split("Your traffic\n", 1)[1].split("\n## ", 1)[0]
    assert "sized for 43 requests/s and 41 full TLS handshakes/s" in chapter
    assert "43 requests/s sized for" in chapter  # the chart's mark
    assert "resume a session" in chapter and "upper bound on cost" in chapter
    assert "Recommendation for 43 RPS + 41 TPS" in text  # recommend's demand, the same
