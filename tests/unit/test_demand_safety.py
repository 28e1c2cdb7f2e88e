"""Customers' logs are untrusted input (issue 58): ``sizing demand`` never overwrites an
input, writes all at once, counts each file once, and a demand file is read as untrusted
input too (every field typed and ranged, unknown keys and versions refused, size capped,
alias bombs refused), with one line naming the file and field and a non-zero exit."""

from __future__ import annotations

import errno
import gzip
import hashlib
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sizing.cli import app
from sizing.demand.file import load_demand
from sizing.errors import InputError

runner = CliRunner()
T0 = 1_764_300_000


def line(sec: int, ip: str = "198.51.100.7", size: int = 512, status: int = 200) -> str:
    ts = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(T0 + sec))
    return f'{ip} - - [{ts}] "GET /a HTTP/1.1" {status} {size} "-" "curl/8.5.0"\n'


def write_log(path: Path, counts: list[int], ip: str = "198.51.100.7") -> Path:
    path.write_text("".join(line(s, ip) for s, n in enumerate(counts) for _ in range(n)))
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def demand(*args: str) -> Any:
    return runner.invoke(app, ["demand", *args])


# -- inputs are sacred -----------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["same", "dot", "hardlink", "symlink", "gzip"])
def test_out_never_overwrites_an_input(tmp_path: Path, spelling: str) -> None:
    log = write_log(tmp_path / "access.log", [3, 5, 2])
    if spelling == "gzip":
        gz = tmp_path / "access.log.gz"
        gz.write_bytes(gzip.compress(log.read_bytes()))
        log.unlink()
        log = gz
    before = digest(log)
    out = {
        "same": log,
        "dot": tmp_path / "." / log.name,
        "hardlink": tmp_path / "hard.yml",
        "symlink": tmp_path / "sym.yml",
        "gzip": log,
    }[spelling]
    if spelling == "hardlink":
        os.link(log, out)
    if spelling == "symlink":
        out.symlink_to(log)
    got = demand(str(log), "-o", str(out))
    assert got.exit_code == 2, got.output
    assert f"is the input {log}" in got.output and "Traceback" not in got.output
    assert digest(log) == before
    assert "demand file written" not in got.output


def test_out_refuses_the_nginx_conf_and_a_file_that_is_not_a_demand_file(tmp_path: Path) -> None:
    log = write_log(tmp_path / "access.log", [3])
    conf = tmp_path / "nginx.conf"
    conf.write_text("http { log_format combined2 '$remote_addr [$time_local]'; }\n")
    got = demand(str(log), "--nginx-conf", str(conf), "--log-name", "combined", "-o", str(conf))
    assert got.exit_code == 2 and "is the input" in got.output
    other = tmp_path / "notes.txt"
    other.write_text("the customer's notes\n")
    got = demand(str(log), "-o", str(other))
    assert got.exit_code == 2 and "is not a demand file" in got.output
    assert other.read_text() == "the customer's notes\n"
    out = tmp_path / "d.yml"
    assert demand(str(log), "-o", str(out)).exit_code == 0
    first = out.read_text()
    write_log(log, [7])
    assert demand(str(log), "-o", str(out)).exit_code == 0  # a demand file is replaced
    assert out.read_text() != first and load_demand(out).requests.peak == 7


@pytest.mark.parametrize("where", ["missing-dir", "a-directory"])
def test_out_that_cannot_be_written_is_one_line_before_any_work(tmp_path: Path, where: str) -> None:
    log = write_log(tmp_path / "access.log", [3])
    out = tmp_path / "nowhere" / "d.yml" if where == "missing-dir" else tmp_path
    got = demand(str(log), "-o", str(out))
    assert got.exit_code != 0 and "Traceback" not in got.output
    assert "cannot write the demand file" in got.output
    assert len(got.output.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["access.log"]


def test_a_full_disk_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk filling up is a process boundary (os.fsync fails with ENOSPC): patched."""
    log = write_log(tmp_path / "access.log", [3])
    out = tmp_path / "d.yml"
    assert demand(str(log), "-o", str(out)).exit_code == 0
    before = out.read_bytes()

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    write_log(log, [9])
    got = demand(str(log), "-o", str(out))
    assert got.exit_code != 0 and "No space left on device" in got.output
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["access.log", "d.yml"]


# -- each request counted once -----------------------------------------------------------


@pytest.mark.parametrize("twice", ["same", "dot", "hardlink", "symlink", "gzip-beside", "copy"])
def test_one_log_given_twice_is_counted_once_and_said(tmp_path: Path, twice: str) -> None:
    counts = [random.Random(s).randint(1, 20) for s in range(120)]
    counts[60] = 77
    log = write_log(tmp_path / "a.log", counts)
    other = {
        "same": log,
        "dot": Path(str(tmp_path) + "/./a.log"),
        "hardlink": tmp_path / "h.log",
        "symlink": tmp_path / "s.log",
        "gzip-beside": tmp_path / "a.log.gz",
        "copy": tmp_path / "copy" / "a.log",
    }[twice]
    if twice == "hardlink":
        os.link(log, other)
    elif twice == "symlink":
        other.symlink_to(log)
    elif twice == "gzip-beside":
        other.write_bytes(gzip.compress(log.read_bytes()))
    elif twice == "copy":
        other.parent.mkdir()
        other.write_bytes(log.read_bytes())
    got = demand(str(log), str(other), "--json")
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    assert doc["requests"]["peak"] == 77
    assert doc["lines"] == sum(counts)
    assert any("counted once" in n for n in doc["notes"]), doc["notes"]


def test_two_servers_with_the_same_traffic_each_second_are_named_as_likely_copies(
    tmp_path: Path,
) -> None:
    counts = [random.Random(s).randint(1, 9) for s in range(200)]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = write_log(tmp_path / "a" / "access.log", counts, ip="198.51.100.1")
    b = write_log(tmp_path / "b" / "access.log", counts, ip="198.51.100.2")  # other bytes
    doc = json.loads(demand(str(a), str(b), "--json").stdout)
    assert doc["requests"]["peak"] == 2 * max(counts)  # summed, as two servers
    assert any("likely the same log under two names" in n for n in doc["notes"])
    different = [c + (s % 2) for s, c in enumerate(counts)]
    write_log(b, different, ip="198.51.100.2")
    doc = json.loads(demand(str(a), str(b), "--json").stdout)
    assert not any("likely the same log" in n for n in doc["notes"])


@pytest.mark.parametrize("kind", ["dir", "fifo", "device"])
def test_a_directory_a_fifo_and_a_device_are_named_as_what_they_are(
    tmp_path: Path, kind: str
) -> None:
    path = {"dir": tmp_path, "fifo": tmp_path / "p", "device": Path("/dev/zero")}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    got = demand(str(path))
    word = {"dir": "a directory", "fifo": "a FIFO", "device": "a character device"}[kind]
    assert got.exit_code == 2 and word in got.output and "no such file" not in got.output


# -- the demand file is untrusted input ------------------------------------------------


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("good")
    log = write_log(tmp / "access.log", [random.Random(s).randint(1, 30) for s in range(90)])
    out = tmp / "d.yml"
    got = demand(str(log), "-o", str(out), "--role", "api-jwt")
    assert got.exit_code == 0, got.output
    doc: dict[str, Any] = yaml.safe_load(out.read_text())
    return doc


def _write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "d.yml"
    path.write_text(yaml.safe_dump(doc) if not isinstance(doc, str) else doc)
    return path


HOSTILE = [
    ("empty", "", "the document is empty"),
    ("list", "[1, 2]\n", "the document is a list"),
    ("scalar", "42\n", "the document is an int"),
    ("peak-lots", ("requests", "peak", "lots"), "requests.peak"),
    ("negative", ("requests", "peak", -405), "requests.peak"),
    ("nan", ("requests", "average", float("nan")), "requests.average"),
    ("inf", ("requests", "p99", float("inf")), "requests.p99"),
    ("resumption-lots", ("resumption_share", None, "lots"), "resumption_share"),
    ("chart-empty", ("chart", None, []), "chart"),
    ("chart-negative", ("chart", None, [-1, 3]), "chart.0"),
    ("unknown-key", ("surprise", None, 1), "[key]: Extra inputs are not permitted"),
    ("version", ("version", None, 7), "version"),
    ("kind", ("kind", None, "catalog"), "kind"),
    ("role", ("workload", "role", "jwt-ish"), "workload.role"),
    ("shares", ("workload", "status", {"2xx": 0.5}), "workload"),
]


@pytest.mark.parametrize(("name", "change", "field"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_bad_demand_file_is_one_error_naming_the_field(
    tmp_path: Path, good: dict[str, Any], name: str, change: Any, field: str
) -> None:
    if isinstance(change, str):
        path = _write(tmp_path, change)
    else:
        doc = json.loads(json.dumps(good))
        key, sub, value = change
        if sub is None:
            doc[key] = value
        else:
            doc[key][sub] = value
        path = _write(tmp_path, doc)
    guide = ["guide", "--demand", str(path), "-o", str(tmp_path / "g.md")]
    for command in (["recommend", "--demand", str(path)], guide):
        got = runner.invoke(app, command)
        assert got.exit_code == 3, (command, got.output)
        assert "Traceback" not in got.output and "internal error" not in got.output
        assert f"{path}" in got.output and field in got.output
    assert not (tmp_path / "g.md").exists()


def test_a_key_or_a_yaml_problem_the_file_made_up_is_not_echoed(
    tmp_path: Path, good: dict[str, Any]
) -> None:
    """A demand file's keys and the YAML parser's words quote the file: the error names
    where, never what (issue 58: the file is handed around and may carry anything)."""
    doc = json.loads(json.dumps(good))
    doc["workload"]["status"] = {"PLANTED-KEY-77": 1.0}
    keyed = _write(tmp_path, doc)
    dup = tmp_path / "dup.yml"
    dup.write_text("PLANTED-DUP-88: 1\nPLANTED-DUP-88: 2\n")
    tag = tmp_path / "tag.yml"
    tag.write_text("kind: !PLANTED-TAG-99 x\n")
    for path in (keyed, dup, tag):
        got = runner.invoke(app, ["recommend", "--demand", str(path)])
        assert got.exit_code == 3 and str(path) in got.output, got.output
        assert "PLANTED" not in got.output, got.output


def test_a_log_given_as_a_demand_file_says_how_to_make_one(tmp_path: Path) -> None:
    """The usual mistake: the customer's log (a real one: Elastic's sample, whose lines
    YAML reads as one string) given to --demand. One line that names the way on, and
    nothing of the log."""
    log = tmp_path / "access.log"
    with gzip.open(Path(__file__).parents[1] / "data/logs/elastic_apache_logs.gz", "rt") as f:
        log.write_text("".join(next(f) for _ in range(200)))
    guide = ["guide", "--demand", str(log), "-o", str(tmp_path / "g.md")]
    for command in (["recommend", "--demand", str(log)], guide):
        got = runner.invoke(app, command)
        assert got.exit_code == 3, got.output
        assert got.output.count("\n") == 1 and "sizing demand FILE -o demand.yml" in got.output
        assert "GET" not in got.output and "HTTP/1.1" not in got.output, got.output
    assert not (tmp_path / "g.md").exists()


def test_a_negative_or_nan_tls_peak_is_refused_not_dropped(
    tmp_path: Path, good: dict[str, Any]
) -> None:
    doc = json.loads(json.dumps(good))
    doc["full_handshakes"] = dict(doc["requests"], peak=-405)
    got = runner.invoke(app, ["recommend", "--demand", str(_write(tmp_path, doc))])
    assert got.exit_code == 3 and "full_handshakes.peak" in got.output
    assert "no TLS figure" not in got.output


def test_size_caps_devices_and_alias_bombs_are_refused_in_bounded_time(tmp_path: Path) -> None:
    big = tmp_path / "big.yml"
    big.write_text("kind: sizing-demand\nnotes:\n" + "- x\n" * 2_000_000)
    bomb = tmp_path / "bomb.yml"
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    bomb.write_text("kind: sizing-demand\nnotes:\n  " + "\n  ".join(levels) + "\n")
    for path, said in (
        (big, "bytes a demand file may hold"),
        (Path("/dev/zero"), "is a device"),
        (bomb, "alias bomb"),
    ):
        start = time.monotonic()
        got = runner.invoke(app, ["recommend", "--demand", str(path)])
        assert time.monotonic() - start < 10
        assert got.exit_code == 3 and said in got.output.replace("\n", " "), got.output


def test_an_alias_bomb_in_an_inventory_is_refused(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yml"
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    inv.write_text(
        "all:\n  hosts:\n    localhost:\n      ansible_connection: local\n  vars:\n    "
        + "\n    ".join(levels)
        + "\n"
    )
    start = time.monotonic()
    got = runner.invoke(app, ["inventory", "check", "-i", str(inv)])
    assert time.monotonic() - start < 20
    assert got.exit_code == 3 and "alias bomb" in got.output


def test_a_version_1_file_loses_the_line_text_it_kept(tmp_path: Path, good: dict[str, Any]) -> None:
    """Version 1 kept a skipped line's first 80 characters: read today, only its file:line
    and reason remain, in the samples and in the note."""
    doc = json.loads(json.dumps(good))
    doc["version"] = 1
    del doc["workload"]
    leaked = "access.log:9: not in the given format: 203.0.113.9 - bob [x] GET /?access_token=T0K"
    doc["skipped_samples"] = [leaked, "whatever: 198.51.100.3 /login?password=pw"]
    doc["notes"] = [f"1 of 90 lines skipped (1 not in the given format); first at {leaked}"]
    d = load_demand(_write(tmp_path, doc))
    text = json.dumps(d.to_dict())
    for secret in ("203.0.113.9", "bob", "access_token", "T0K", "198.51.100.3", "password"):
        assert secret not in text
    assert d.skipped_samples == ["access.log:9: not in the given format"]
    assert d.notes[0].endswith("first at access.log:9: not in the given format")


def _mutations() -> st.SearchStrategy[Any]:
    junk = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=30),
        st.lists(st.integers(), max_size=3),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    )
    return st.tuples(st.integers(min_value=0, max_value=10**6), junk, st.booleans())


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            out += _paths(v, (*prefix, i))
    return out


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    derandomize=True,
)
@given(mutation=_mutations())
def test_any_mutated_demand_file_loads_sound_or_is_one_input_error(
    tmp_path: Path, good: dict[str, Any], mutation: Any
) -> None:
    """One field of a valid demand file replaced by junk (or removed): it loads with every
    figure finite and in range, or it is an InputError; nothing else."""
    which, junk, remove = mutation
    doc = json.loads(json.dumps(good))
    paths = _paths(doc)
    path = paths[which % len(paths)]
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    if remove and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = junk
    file = tmp_path / "m.yml"
    file.write_text(yaml.safe_dump(doc))
    try:
        d = load_demand(file)
    except InputError as exc:
        assert str(file) in str(exc) and "\n" not in exc.problems[0]
        return
    for rate in (d.requests, d.new_connections, d.full_handshakes, *d.classes.values()):
        if rate is not None:
            assert 0 <= rate.p99 <= rate.p999 <= rate.peak < float("inf")
            assert 0 <= rate.average <= rate.peak
    assert d.chart and min(d.chart) >= 0
    for share in (d.resumption_share,):
        assert share is None or 0 <= share <= 1


def test_one_stray_line_in_a_small_log_is_an_outlier_not_a_55_year_span(tmp_path: Path) -> None:
    """A host whose clock was not set wrote one line dated 1970 among 50: more than 1% of
    the lines, but one second far from the rest; left out of the span and named."""
    log = write_log(tmp_path / "a.log", [1] * 50)
    with log.open("a") as f:
        f.write('198.51.100.7 - - [01/Jan/1970:00:00:05 +0000] "GET /a HTTP/1.1" 200 5 "-" "c"\n')
    doc = json.loads(demand(str(log), "--json").stdout)
    assert doc["requests"]["seconds"] == 50 and doc["requests"]["average"] == 1.0
    assert doc["totals"]["outliers"] == 1
    assert any("a.log:51" in n and "left out of the span" in n for n in doc["notes"]), doc["notes"]


def test_a_line_skipped_for_its_time_feeds_no_size_or_total(tmp_path: Path) -> None:
    """A line whose time cannot be read is skipped whole: its 5 MB response does not
    count in the bytes sent or the size mix (it did, before the time was checked)."""
    fmt = "$remote_addr $status $bytes_sent $msec $request_time"
    good = [f"198.51.100.7 200 100 {T0 + s}.250 0.001\n" for s in range(50)]
    log = tmp_path / "a.log"
    log.write_text("".join(good) + "198.51.100.7 200 5000000 " + "9" * 40 + ".1 0.001\n")
    doc = json.loads(demand(str(log), "--log-format", fmt, "--json").stdout)
    assert doc["skipped"] == 1 and doc["totals"]["requests"] == 50
    assert doc["totals"]["bytes_sent"] == 5000
    assert doc["workload"]["sizes"] == [{"upto": 128, "share": 1.0}]
