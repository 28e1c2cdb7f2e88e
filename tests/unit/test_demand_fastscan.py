"""The compiled log reader (sizing/demand/_fastscan.c, issue 58's speed) against the
regular expression it replaces: log lines of every supported format, rendered from
hypothesis records and then mutated byte by byte, are read both ways, and every output is
the same (the demand as ``--json`` prints it, the skipped lines with their line numbers and
reasons, the notes), or both refuse the file with the same line.

The extension is built by scripts/setup (scripts/build-fastscan); this module builds it
when it is missing, and fails when it cannot be built: a comparison that silently ran the
reference twice would prove nothing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.demand import fastscan
from sizing.demand.formats import (
    APACHE_COMBINED,
    APACHE_COMMON,
    COMBINED,
    DEFAULT_NAME,
    MAIN,
    LogFormat,
    compile_format,
)
from sizing.demand.logs import read_logs
from sizing.demand.reader import CHUNK
from sizing.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_764_300_000
DATA = ROOT / "tests" / "data" / "logs"

# name, log_format, escape, given (False: read as `sizing demand FILE` reads it, the stock
# formats recognised from the default)
FORMATS = (
    ("combined", COMBINED, "default", False),
    ("main", MAIN, "default", False),
    ("apache common", APACHE_COMMON, "json", False),
    ("apache combined", APACHE_COMBINED, "json", False),
    (
        "rich",
        '$remote_addr [$time_local] "$request" $status $bytes_sent $msec $request_time'
        " $connection_requests $ssl_session_reused",
        "default",
        True,
    ),
    (
        "local less request_time",
        '$remote_addr [$time_local] "$request" $status $body_bytes_sent $request_time'
        " $connection_requests",
        "default",
        True,
    ),
    ("combined, escape=json", COMBINED, "json", True),
    ("time last", "$remote_addr $status $bytes_sent $ssl_session_reused $time_local", "", True),
    ("msec first", '$msec $status "$request" $body_bytes_sent', "default", True),
    ("iso and msec", "$time_iso8601 $msec $request_time $status", "default", True),
    ("side by side", '$host$request_uri [$time_local] $status "$http_user_agent"', "", True),
)
OFFSETS = ("+0000", "+0100", "-0400", "+0530", "-1200")


@pytest.fixture(scope="module", autouse=True)
def _built() -> None:
    if fastscan.native() is None:
        subprocess.run([str(ROOT / "scripts" / "build-fastscan")], cwd=ROOT, check=True)
    assert fastscan.native() is not None, "the compiled reader could not be built"


def _fmt(text: str, escape: str, given: bool) -> LogFormat:
    if not given:
        return compile_format(COMBINED, name=DEFAULT_NAME)
    return compile_format(text, escape=escape or "default", name="the given format")


@pytest.mark.parametrize("name,text,escape,given", FORMATS)
def test_every_format_here_has_a_program(name: str, text: str, escape: str, given: bool) -> None:
    """The comparison below runs the compiled reader on each of these formats."""
    assert compile_format(text, escape=escape or "default").program is not None, name


def test_a_field_that_could_end_early_keeps_the_regular_expression() -> None:
    # $status then a digit: the regular expression backtracks, the compiled reader would not
    assert compile_format("[$time_local] $status0 $request_time.x").program is None
    assert compile_format("$time_iso8601 $status").program is None  # read by the reference


@contextmanager
def _compiled(on: bool) -> Iterator[None]:
    old = fastscan.ENABLED
    fastscan.ENABLED = on
    try:
        yield
    finally:
        fastscan.ENABLED = old


record = st.fixed_dictionaries(
    {
        "sec": st.one_of(st.integers(0, 900), st.sampled_from([-(10**9), 10**9 // 3])),
        "off": st.sampled_from(OFFSETS),
        "ms": st.integers(0, 999),
        "rt": st.integers(0, 7000),
        "status": st.integers(100, 599),
        "size": st.one_of(st.integers(0, 10**9), st.just(-1)),
        "conn": st.sampled_from([1, 1, 2, 7, 12, 10**10]),
        "reused": st.sampled_from([".", "r", "-", ""]),
        "agent": st.text(st.characters(codec="ascii", min_codepoint=32), max_size=12),
        "day_digits": st.sampled_from([2, 2, 2, 1]),  # "5/Nov/..." is read one at a time
    }
)


def render(text: str, r: dict[str, int | str], override: dict[str, str] | None = None) -> str:
    """One line of the format ``text`` for the record (``override``: variables' text)."""
    sec = T0 + int(r["sec"])
    off = str(r["off"])
    shift = (1 if off[0] == "+" else -1) * (int(off[1:3]) * 3600 + int(off[3:]) * 60)
    local = time.gmtime(max(0, sec + shift))
    day = str(local.tm_mday).zfill(int(r["day_digits"]))
    stamp = time.strftime(f"{day}/%b/%Y:%H:%M:%S {off}", local)
    end_ms = sec * 1000 + int(r["ms"]) + int(r["rt"])
    size = "-" if r["size"] == -1 else str(r["size"])
    agent = str(r["agent"]).replace('"', "\\x22").replace("\\", "\\\\")
    values = {
        "remote_addr": "192.0.2.7",
        "remote_user": "-",
        "remote_ident": "-",
        "time_local": stamp,
        "time_iso8601": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(max(0, sec))),
        "request": "GET /x?token=s3cr3t HTTP/1.1",
        "status": str(r["status"]),
        "bytes_sent": size if r["size"] != -1 else "0",
        "body_bytes_sent": size,
        "http_referer": "-",
        "http_user_agent": agent,
        "http_x_forwarded_for": "-",
        "msec": f"{end_ms // 1000}.{end_ms % 1000:03d}",
        "request_time": f"{int(r['rt']) / 1000:.3f}",
        "connection_requests": str(r["conn"]),
        "ssl_session_reused": str(r["reused"]),
        "host": "shop.invalid",
        "request_uri": "/cart",
    } | (override or {})
    out = text
    for name in sorted(values, key=len, reverse=True):  # $request_time before $request
        out = out.replace("$" + name, values[name])
    return out


ALPHABET = b' "[]-.0123456789\\\x00\r\t/:+rZTaN\xff\x1b'
mutation = st.tuples(
    st.sampled_from(["replace", "insert", "delete", "cut", "digits", "repeat", "binary"]),
    st.integers(0, 10**6),
    st.sampled_from(list(ALPHABET)),
)


def mutate(line: bytes, how: str, at: int, byte: int) -> bytes:
    at = at % (len(line) + 1)
    if how == "replace":
        return line[:at] + bytes([byte]) + line[at + 1 :]
    if how == "insert":
        return line[:at] + bytes([byte]) + line[at:]
    if how == "delete":
        return line[:at] + line[at + 1 :]
    if how == "cut":
        return line[:at]
    if how == "digits":
        return line[:at] + b"9" * (at % 40) + line[at:]
    if how == "repeat":
        return line[:at] + line[at : at + 6] + line[at:]
    return bytes((byte * k + at) % 256 for k in range(at % 60))


def _read(path: Path, fmt: LogFormat, given: bool) -> str:
    """What `sizing demand --json` would print, or the refusal's line."""
    try:
        return json.dumps(read_logs([path], fmt, given=given).to_dict(), sort_keys=True)
    except UsageError as exc:
        return f"refused: {exc}"


SETTINGS = settings(
    # scripts/fuzz-fastscan raises it, with the extension built under the sanitizers
    max_examples=int(os.environ.get("SIZING_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@SETTINGS
@given(
    which=st.integers(0, len(FORMATS) - 1),
    rows=st.lists(record, min_size=1, max_size=40),
    mutations=st.lists(st.tuples(st.integers(0, 10**6), mutation), max_size=12),
    crlf=st.booleans(),
    last_newline=st.booleans(),
)
def test_the_compiled_reader_gives_every_output_the_regular_expression_gives(
    tmp_path_factory: pytest.TempPathFactory,
    which: int,
    rows: list[dict[str, int | str]],
    mutations: list[tuple[int, tuple[str, int, int]]],
    crlf: bool,
    last_newline: bool,
) -> None:
    _, text, escape, given = FORMATS[which]
    lines = [render(text, r).encode() for r in rows]
    for row, (how, at, byte) in mutations:
        i = row % len(lines)
        lines[i] = mutate(lines[i], how, at, byte)
    end = b"\r\n" if crlf else b"\n"
    data = end.join(lines) + (end if last_newline else b"")
    path = tmp_path_factory.mktemp("f") / "access.log"
    path.write_bytes(data)
    fmt = _fmt(text, escape, given)
    with _compiled(True):
        fast = _read(path, fmt, given)
    with _compiled(False):
        reference = _read(path, fmt, given)
    assert fast == reference


@pytest.mark.parametrize("name", ["elastic_apache_logs.gz", "nasa_access_log_aug95_head.gz"])
def test_the_real_public_logs_read_the_same_both_ways(name: str) -> None:
    fmt = compile_format(COMBINED, name=DEFAULT_NAME)
    with _compiled(True):
        fast = _read(DATA / name, fmt, False)
    with _compiled(False):
        reference = _read(DATA / name, fmt, False)
    assert fast == reference
    assert '"skipped": 0' not in fast  # both hold lines to skip: their reasons compared too


def test_a_chunk_many_lines_long_is_read_the_same_both_ways(tmp_path: Path) -> None:
    """Several chunks (1 MiB each), each with bad lines, out-of-order times and offsets."""
    text = FORMATS[4][1]
    rows = []
    for k in range(30_000):
        r: dict[str, int | str] = {
            "sec": (k * 7919) % 5000,
            "off": OFFSETS[k % 3],
            "ms": k % 1000,
            "rt": (k * 31) % 4000,
            "status": (200, 200, 304, 404, 503, 101)[k % 6],
            "size": (k * 13) % 70000,
            "conn": (1, 2, 3, 1)[k % 4],
            "reused": (".", "r", "", "-")[k % 4],
            "agent": "a",
            "day_digits": 2,
        }
        line = render(text, r)
        rows.append(line if k % 997 else line[: k % 50])
    path = tmp_path / "big.log"
    path.write_text("\n".join(rows) + "\n")
    fmt = compile_format(text, name="the given format")
    with _compiled(True):
        fast = _read(path, fmt, True)
    with _compiled(False):
        reference = _read(path, fmt, True)
    assert fast == reference
    assert '"lines": 30000' in fast


# Hostile input (issue 58: customers' logs are untrusted): each variable of each format in
# turn holds a value a parser can trip on, between lines in the format; the files below
# also cut lines at the reader's chunk edges, hold lines past its cap, no final newline,
# nothing at all. scripts/fuzz-fastscan runs them under AddressSanitizer, through the
# tests below and through `sizing demand` as typed.
HOSTILE = (
    "9" * 5000,
    "",
    "\x00",
    "-",
    ".",
    "..",
    "1.2.3",
    "9" * 5000 + "." + "9" * 5000,
    "0." + "0" * 5000,
    "." + "1",
    "9" * 13 + ".5",
    "1." + "9" * 10,
    "99999999999999999999",
    "18446744073709551616",
    "-1",
    "\xff\xfe\xc3",
    "\r",
    "\\",
    '"',
    "]",
    " ",
    "\t",
    "28/Nov/2026:05:01:04 +0100\x00",
    "28/Nov/2026:05:01:04 +0100\x00x",
    "28/Nov/2026:05:01:04\x00+0100",
    "00/Nov/2026:05:01:04 +0100",
    "31/Feb/0000:23:59:60 -9959",
    "31/Dec/9999:23:59:59 -1200",
    "01/Jan/1970:00:00:00 +0001",
    "28/Nov/2026:05:01:04 +01000",
    "28/Xyz/2026:05:01:04 +0100",
    "\x00" * 26,
    "9" * 26,
)
_RECORD: dict[str, int | str] = {
    "sec": 5,
    "off": "+0100",
    "ms": 7,
    "rt": 120,
    "status": 200,
    "size": 512,
    "conn": 1,
    "reused": ".",
    "agent": "a",
    "day_digits": 2,
}

_VAR = re.compile(r"\$(?:\{(\w+)\}|(\w+))")  # a variable, as sizing.demand.formats reads it


def _hostile_log(text: str) -> bytes:
    """Every variable of ``text`` holding every hostile value, one per line, each after a
    line in the format."""
    good = render(text, _RECORD).encode()
    out = []
    for name in sorted({m.group(2) or m.group(1) for m in _VAR.finditer(text)}):
        for value in HOSTILE:
            out += [good, render(text, _RECORD, {name: value}).encode("latin-1")]
    return b"\n".join(out) + b"\n"


def corpus() -> list[tuple[str, int, bytes]]:
    """(name, index into FORMATS, the file's bytes) of every hostile file."""
    files = [(f"fields of {f[0]}", i, _hostile_log(f[1])) for i, f in enumerate(FORMATS)]
    files += [(f"{n} with CRLF", i, d.replace(b"\n", b"\r\n")) for n, i, d in files[:5]]
    files += [(f"{n}, no final newline", i, d[:-1]) for n, i, d in files[:5]]
    good = render(COMBINED, _RECORD).encode()
    files += [
        ("empty", 0, b""),
        ("one newline", 0, b"\n"),
        ("newlines", 0, b"\n\n\n"),
        ("CR LF", 0, b"\r\n"),
        ("NULs", 0, b"\x00" * 100),
        ("one line, no newline", 0, good),
        ("blanks", 0, b" \t\r\n" * 20),
        ("a 200 KB line of digits", 4, good + b"\n" + b"9" * 200_000 + b"\n" + good + b"\n"),
        ("a 100 KB last line, no newline", 4, good + b"\n" + b"9" * 100_000),
        ("64 KiB of backslashes", 6, good + b"\n" + b"\\" * 65_000 + b"\n" + good + b"\n"),
    ]
    # a chunk's edge inside a line, on its CR, on its newline, just after it
    for shift in (-3, -2, -1, 0, 1):
        head = (good + b"\r\n") * 1000
        pad = CHUNK + shift - len(head) - len(good) - 2
        files.append((f"chunk edge {shift:+d}", 0, head + b"x" * pad + b"\n" + good + b"\r\n"))
    return files


def write_corpus(where: Path) -> None:
    """The corpus as files in ``where`` (scripts/fuzz-fastscan reads them with the CLI)."""
    where.mkdir(parents=True, exist_ok=True)
    for k, (_, _, data) in enumerate(corpus()):
        (where / f"{k:03d}.log").write_bytes(data)


@pytest.mark.parametrize("name,which,data", corpus(), ids=lambda v: v if isinstance(v, str) else "")
def test_hostile_files_read_the_same_both_ways(
    tmp_path: Path, name: str, which: int, data: bytes
) -> None:
    _, text, escape, given = FORMATS[which]
    path = tmp_path / "access.log"
    path.write_bytes(data)
    fmt = _fmt(text, escape, given)
    with _compiled(True):
        fast = _read(path, fmt, given)
    with _compiled(False):
        reference = _read(path, fmt, given)
    assert fast == reference, name


def _ops(prog: bytes) -> int:
    """How many ops a program holds (each: op, stop, length in 2 bytes, literal)."""
    n = i = 0
    while i < len(prog):
        i += 4 + int.from_bytes(prog[i + 2 : i + 4])
        n += 1
    return n


def _op_bytes(op: str, stop: bytes, lit: bytes = b"") -> bytes:
    return op.encode() + stop + len(lit).to_bytes(2) + lit


program = st.lists(
    st.tuples(
        st.sampled_from(list("LTIMRSBNUXJ?")),
        st.sampled_from([b"\0", b" ", b"]", b'"', b".", b"9"]),
        st.binary(max_size=4),
    ),
    max_size=10,
).map(lambda ops: b"".join(_op_bytes(o, s, lit if o == "L" else b"") for o, s, lit in ops))


@SETTINGS
@given(
    prog=program,
    chunk=st.lists(
        st.binary(max_size=40) | st.sampled_from(HOSTILE).map(lambda v: v.encode("latin-1")),
        max_size=8,
    ).map(b"\n".join),
    tail=st.sampled_from([b"", b"\n", b"\r\n", b"\\"]),
    msec=st.booleans(),
)
def test_any_program_on_any_chunk_gives_whole_columns(
    prog: bytes, chunk: bytes, tail: bytes, msec: bool
) -> None:
    """The extension on programs the compiler never gives and any bytes: columns of one
    row per line, every row either read or returned as a line not in the format."""
    mod = fastscan.native()
    assert mod is not None
    data = chunk + tail
    rows, ms, rt, status, first, reused, size, conn, bad, odd, offs = mod.scan(data, prog, msec)
    assert rows == data.count(b"\n") + (not data.endswith(b"\n"))
    assert [len(c) for c in (ms, rt, status, first, reused, size, conn)] == [
        rows * w for w in (8, 8, 1, 1, 1, 8, 8)
    ]
    lines = data.split(b"\n")
    assert all(lines[i] == text for i, text in bad)
    assert [i for i, _ in bad] == sorted({i for i, _ in bad})
    assert all(0 <= i < rows for i, _ in odd) and all(0 <= i < rows for _, i in offs)
    assert len({o for o, _ in offs}) == len(offs) and all(len(o) == 5 for o, _ in offs)


@pytest.mark.parametrize(
    "prog",
    [
        b"L",  # a header cut short
        b"L\0\0\x05abc",  # a literal past the program's end
        b"X\0\0\x01",  # its one byte missing
    ],
)
def test_a_program_that_is_not_one_is_refused(prog: bytes) -> None:
    mod = fastscan.native()
    assert mod is not None
    with pytest.raises(ValueError, match="not a program"):
        mod.scan(b"x\n", prog, False)


def test_a_format_of_many_variables_is_read_the_same_both_ways(tmp_path: Path) -> None:
    """A log_format of 140 variables (281 ops: past the 256 the reader once held, when
    `sizing demand` stopped with an internal error) reads as the regular expression does."""
    text = "[$time_local] $status " + " ".join(f"$v{i}" for i in range(140))
    fmt = compile_format(text, name="the given format")
    assert fmt.program is not None and _ops(fmt.program) > 256
    line = render("[$time_local] $status", _RECORD) + " x" * 140
    path = tmp_path / "access.log"
    path.write_text(f"{line}\n{line}\nnot a line\n")
    with _compiled(True):
        fast = _read(path, fmt, True)
    with _compiled(False):
        reference = _read(path, fmt, True)
    assert fast == reference
    assert '"lines": 3' in fast


def test_the_extension_takes_any_buffer_and_refuses_other_types() -> None:
    mod = fastscan.native()
    assert mod is not None
    prog = compile_format(COMBINED).program
    assert prog is not None
    line = render(COMBINED, _RECORD).encode() + b"\n"
    got = mod.scan(line, prog, False)
    assert mod.scan(bytearray(line), prog, False) == got == mod.scan(memoryview(line), prog, False)
    assert got[0] == 1 and got[8] == []
    with pytest.raises(TypeError):
        mod.scan(line.decode(), prog, False)


if __name__ == "__main__":
    write_corpus(Path(sys.argv[1]))
