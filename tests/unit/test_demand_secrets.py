"""Nothing of a customer's log content leaves the reader (issue 58).

Secrets are planted in every field of every supported format (client addresses, user
names, URL paths and query strings, referers, user agents, cookies, authorization headers),
in good lines and in bad ones (a field that does not parse, binary bytes, a cut-off last
line), and every output is searched for them: ``sizing demand``'s terminal report and
``--json``, the demand file, ``recommend --demand`` (terminal and ``--json``), and the guide
of ``guide --demand`` in Markdown, HTML and PDF (its text read with pdftotext)."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app

runner = CliRunner()
T0 = 1_764_300_000

# Every secret is a string no sizing output could hold by chance.
ADDR = "203.0.113.77"
ADDR6 = "2001:db8::beef"
USER = "zelda-planted-user"
PATH = "/planted-path-q8v1"
QUERY = "access_token=PLANTED-tok-3b9"
PASSWORD = "password=PLANTED-pw-77x"
REFERER = "https://planted-referer.example/r?sid=PLANTED-sid-551"
AGENT = "PlantedAgent/9.9 (PLANTED-agent-13)"
COOKIE = "session=PLANTED-cookie-8812"
BEARER = "Bearer PLANTED-jwt-eyJhbGci"
SECRETS = (
    ADDR,
    ADDR6,
    USER,
    PATH,
    "PLANTED-tok-3b9",
    "PLANTED-pw-77x",
    "planted-referer",
    "PLANTED-sid-551",
    "PLANTED-agent-13",
    "PLANTED-cookie-8812",
    "PLANTED-jwt",
)


def _ts(sec: int) -> str:
    return time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(T0 + sec))


def _combined(sec: int, status: str = "200", ip: str = ADDR) -> str:
    return (
        f'{ip} - {USER} [{_ts(sec)}] "GET {PATH}?{QUERY}&{PASSWORD} HTTP/1.1" {status} 512'
        f' "{REFERER}" "{AGENT} {COOKIE}"'
    )


RICH = (
    '$remote_addr - $remote_user [$time_local] "$request" $status $bytes_sent'
    ' "$http_referer" "$http_user_agent" "$http_cookie" "$http_authorization"'
    " $msec $request_time $connection_requests $ssl_session_reused"
)


def _rich(sec: int, status: str = "200", ip: str = ADDR) -> str:
    return (
        f'{ip} - {USER} [{_ts(sec)}] "GET {PATH}?{QUERY} HTTP/1.1" {status} 900'
        f' "{REFERER}" "{AGENT}" "{COOKIE}" "{BEARER}" {T0 + sec}.250 0.004'
        f" {1 + sec % 3} {'r' if sec % 2 else '.'}"
    )


def _json(sec: int, status: str = "200", ip: str = ADDR) -> str:
    return json.dumps(
        {
            "remote_addr": ip,
            "remote_user": USER,
            "time_local": _ts(sec),
            "request": f"GET {PATH}?{QUERY} HTTP/1.1",
            "status": status,
            "bytes_sent": 700,
            "http_referer": REFERER,
            "http_user_agent": AGENT,
            "http_cookie": COOKIE,
            "http_authorization": BEARER,
        }
    )


def _log(make: Callable[..., str], bad_status: str) -> str:
    """Good lines over two minutes, and bad ones: a field that does not parse, an IPv6
    client, binary bytes, and a cut-off last line."""
    lines = [make(s % 120, ip=ADDR6 if s % 7 == 0 else ADDR) for s in range(600)]
    lines.insert(100, make(5, status=bad_status))
    lines.insert(200, "\x00\x01" + make(6))
    lines.insert(300, make(7)[: len(make(7)) // 2])
    return "\n".join(lines) + "\n" + make(8)[:60]  # the last line cut off, no newline


FORMATS = {
    "combined": ([], lambda: _log(_combined, "2x0")),
    "custom": (["--log-format", RICH], lambda: _log(_rich, "x00")),
    "json": ([], lambda: _log(_json, "x")),
}


def _grep(name: str, text: str) -> None:
    found = [s for s in SECRETS if s.lower() in text.lower()]
    assert not found, f"{name} holds {found}"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("compressed", [False, True])
def test_no_planted_secret_reaches_any_output(tmp_path: Path, fmt: str, compressed: bool) -> None:
    args, make = FORMATS[fmt]
    text = make()
    log = tmp_path / ("access.log.gz" if compressed else "access.log")
    log.write_bytes(gzip.compress(text.encode()) if compressed else text.encode())
    out = tmp_path / "demand.yml"
    terminal = runner.invoke(app, ["demand", str(log), *args, "-o", str(out), "--role", "lb"])
    assert terminal.exit_code == 0, terminal.output
    assert "skipped" in terminal.stdout  # the bad lines were met, and reported
    _grep("demand's terminal report", terminal.output)
    as_json = runner.invoke(app, ["demand", str(log), *args, "--json"])
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout)["skipped"] >= 3
    _grep("demand --json", as_json.output)
    _grep("the demand file", out.read_text())
    db = tmp_path / "none.sqlite"
    for extra in ([], ["--json"]):
        rec = runner.invoke(app, ["recommend", "--demand", str(out), "--db", str(db), *extra])
        assert rec.exit_code == 0, rec.output
        _grep(f"recommend --demand {extra}", rec.output)
    for suffix in ("md", "html") + (("pdf",) if fmt == "combined" and not compressed else ()):
        guide = tmp_path / f"guide.{suffix}"
        got = runner.invoke(app, ["guide", "--demand", str(out), "--db", str(db), "-o", str(guide)])
        assert got.exit_code == 0, got.output
        _grep(f"guide --demand {suffix} (stderr)", got.output)
        if suffix == "pdf":
            if shutil.which("pdftotext") is None:
                pytest.fail("pdftotext is missing: scripts/setup --dev installs poppler-utils")
            body = subprocess.run(
                ["pdftotext", "-layout", str(guide), "-"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            assert "Your traffic" in body
        else:
            body = guide.read_text()
            assert "skipped" in body
        _grep(f"the {suffix} guide", body)


def test_the_planted_secrets_are_found_when_they_leak() -> None:
    """The search itself finds each secret, in any case: the test above can fail."""
    for secret in SECRETS:
        with pytest.raises(AssertionError):
            _grep("a leak", f"... {secret.upper()} ...")
