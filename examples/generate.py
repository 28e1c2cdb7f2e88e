#!/usr/bin/env python3
"""Write the example files the docs' commands read (examples/README.md says what each is).

The access logs are synthetic: no customer's and no real client's. Their addresses are the
documentation ranges (RFC 5737: 198.51.100.0/24, 203.0.113.0/24), their paths and user agent
made up; a seeded generator makes the same bytes on every run, so the test
(tests/unit/test_examples.py) regenerates them and compares.

    examples/generate.py            # rewrite the files
    examples/generate.py --check    # exit 1 when a file differs from what it would write
"""

from __future__ import annotations

import gzip
import random
import re
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
START = datetime(2026, 11, 28, 5, 20, 0, tzinfo=UTC)
SECONDS = 120
PATHS = [
    ("/", 612),
    ("/index.html", 612),
    ("/css/site.css", 4_210),
    ("/js/app.js", 18_940),
    ("/img/logo.png", 7_331),
    ("/img/hero.jpg", 96_512),
    ("/api/items?page=2", 1_180),
    ("/api/items/42", 388),
    ("/favicon.ico", 1_150),
]
AGENT = "Mozilla/5.0 (X11; Linux x86_64) ExampleBrowser/1.0"


def _rate(second: int) -> float:
    """Requests a second: a quiet minute, then a burst that peaks near the 80th second."""
    base = 3.0 + 2.0 * (second / SECONDS)
    burst = 22.0 * max(0.0, 1.0 - abs(second - 80) / 6.0)
    return base + burst


def combined_lines(rng: random.Random) -> list[str]:
    """The combined-format log: one line a request, in the order nginx writes them."""
    lines = []
    for second in range(SECONDS):
        when = START + timedelta(seconds=second)
        stamp = when.strftime("%d/%b/%Y:%H:%M:%S +0000")
        n = int(_rate(second) + rng.random())
        for _ in range(n):
            net = rng.choice(("198.51.100", "203.0.113"))
            addr = f"{net}.{rng.randrange(1, 255)}"
            path, size = rng.choice(PATHS)
            status = rng.choices((200, 304, 404), weights=(90, 8, 2))[0]
            body = 0 if status == 304 else (153 if status == 404 else size)
            lines.append(
                f'{addr} - - [{stamp}] "GET {path} HTTP/1.1" {status} {body} "-" "{AGENT}"\n'
            )
    return lines


# the log_format of examples/nginx.conf (docs/demand.md's `--log-name rich`)
RICH = (
    "'$remote_addr [$time_local] \"$request\" $status $bytes_sent $msec $request_time '\n"
    "                    '$connection_requests $ssl_session_reused'"
)
NGINX_CONF = f"""# The log_format the synthetic examples/access-rich.log is written in: a
# configuration excerpt for `sizing demand --nginx-conf examples/nginx.conf --log-name rich`.
http {{
    log_format rich {RICH};
    access_log /var/log/nginx/access.log rich;
}}
"""
HEADERS = 238  # a response's header bytes: $bytes_sent is the body and these


def rich_lines(rng: random.Random) -> list[str]:
    """The same traffic's shape as connections: most over TLS, several requests each, some
    TLS sessions resumed; each line written when its response ended, in that order."""
    out: list[tuple[float, str]] = []
    t0 = START.timestamp()
    for second in range(SECONDS):
        n = int(_rate(second) * 1.5 + rng.random())
        for _ in range(max(1, n // 3)):
            net = rng.choice(("198.51.100", "203.0.113"))
            addr = f"{net}.{rng.randrange(1, 255)}"
            tls = rng.random() < 0.7
            reused = "r" if tls and rng.random() < 0.4 else ("." if tls else "-")
            at = t0 + second + rng.random()
            for k in range(1, rng.choice((1, 1, 2, 3, 4, 6)) + 1):
                path, size = rng.choice(PATHS)
                status = rng.choices((200, 304, 404), weights=(90, 8, 2))[0]
                body = 0 if status == 304 else (153 if status == 404 else size)
                took = round(rng.uniform(0.0, 0.004) + body / 50e6, 3)
                end = at + took
                stamp = datetime.fromtimestamp(int(end), UTC).strftime("%d/%b/%Y:%H:%M:%S +0000")
                out.append(
                    (
                        end,
                        f'{addr} [{stamp}] "GET {path} HTTP/1.1" {status} {body + HEADERS} '
                        f"{end:.3f} {took:.3f} {k} {reused}\n",
                    )
                )
                at = end + rng.uniform(0.01, 0.2)
    return [line for _, line in sorted(out)]


def stub_status(rng: random.Random) -> str:
    """stub_status pages scraped each second, each after a line holding its time (the loop
    docs/demand.md shows: `date +%s; curl -s http://127.0.0.1/nginx_status`)."""
    accepts = requests = 1000
    out = []
    for second in range(SECONDS):
        new = int(_rate(second) / 2.5 + rng.random())
        accepts += new
        requests += int(_rate(second) + rng.random())
        active = 2 + new
        out.append(
            f"{int(START.timestamp()) + second}\n"
            f"Active connections: {active} \n"
            "server accepts handled requests\n"
            f" {accepts} {accepts} {requests} \n"
            f"Reading: 0 Writing: 1 Waiting: {active - 1} \n"
        )
    return "".join(out)


def files() -> dict[str, bytes]:
    """Each example file's path under examples/ and its bytes."""
    log = "".join(combined_lines(random.Random(62))).encode()
    return {
        "access.log": log,
        # its gzip'd copy (mtime 0, no name: the same bytes each time): the same lines
        "access.log.gz": gzip.compress(log, compresslevel=9, mtime=0),
        "access-rich.log": "".join(rich_lines(random.Random(2026))).encode(),
        "nginx.conf": NGINX_CONF.encode(),
        "stub_status.txt": stub_status(random.Random(7)).encode(),
        # not in any format sizing knows: the user field is missing
        "bad/odd.log": b'198.51.100.7 [28/Nov/2026:05:20:00 +0000] "GET / HTTP/1.1" 200 612\n',
        # a binary file given as a log
        "bad/junk.log": bytes(range(256)) * 4,
        "bad/empty.log": b"",
    }


# examples/demand.yml: what `sizing demand` writes from the rich log, for a load balancer
DEMAND = [
    "demand", "examples/access-rich.log", "--nginx-conf", "examples/nginx.conf",
    "--log-name", "rich", "--role", "lb", "-o",
]  # fmt: skip


def demand_files(scratch: Path) -> dict[str, bytes]:
    """examples/demand.yml as this sizing writes it (run in the repository, paths relative),
    and bad/demand-negative.yml: the same with its full-handshake peak edited to a negative
    number, as a hand edit gone wrong would leave it."""
    out = scratch / "demand.yml"
    cmd = [sys.executable, "-m", "sizing", *DEMAND, str(out)]
    done = subprocess.run(cmd, cwd=HERE.parent, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"examples/generate.py: sizing demand failed: {done.stderr.strip()}")
    text = out.read_text(encoding="utf-8")
    bad, n = re.subn(r"(?m)^(full_handshakes:\n  peak:) \d+$", r"\1 -405", text)
    assert n == 1, "the demand file has no full_handshakes.peak"
    return {"demand.yml": text.encode(), "bad/demand-negative.yml": bad.encode()}


def main(argv: list[str]) -> int:
    check = "--check" in argv
    differ = []
    wanted = files()
    if not check:  # the demand is read from the logs just written
        for rel, data in wanted.items():
            (HERE / rel).parent.mkdir(parents=True, exist_ok=True)
            (HERE / rel).write_bytes(data)
    with tempfile.TemporaryDirectory() as scratch:
        wanted.update(demand_files(Path(scratch)))
    for rel, data in wanted.items():
        path = HERE / rel
        if check:
            if not path.is_file() or path.read_bytes() != data:
                differ.append(rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for rel in differ:
        print(f"examples/{rel}: differs from what examples/generate.py writes", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
