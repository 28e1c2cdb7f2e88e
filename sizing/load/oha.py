"""The oha driver: an argv builder and a pure parser of oha's JSON report.

oha (crates.io, pinned to 1.16.0 by ``scripts/install-oha``) is the open-loop generator of
the latency profiles, built with its ``native-tls`` feature (:data:`BUILD`: HTTPS through
the system's OpenSSL, not rustls with aws-lc, whose C build was a fifth of the compile; on
this machine the HTTPS ``latency-static`` profile gave the same p50/p95 with either build,
within run-to-run noise). ``benchmarks/generators`` chose it over vegeta: on one client core of
the development machine, with nothing else running, it sustained 56,953 req/s on schedule
against vegeta's 7,500 (0.73 of wrk's closed loop in the same run), and it passes the
coordinated-omission check.

**Why its latencies are free of coordinated omission.** Read from oha 1.16.0's source:
with ``-q RATE`` the request schedule is fixed in advance (one send time every 1/RATE s),
and ``--latency-correction`` makes a request's latency ``end - scheduled send time``
(``RequestResult::duration``: ``end - start_latency_correction``), not ``end - actual send
time``. A request that waits for a free connection (all ``-c`` connections busy on a
stalled server) or for a late generator is charged the wait: wrk2's method, on a fixed
set of connections. ``tests/integration/test_latency.py`` proves it against a server
stopped for a known time, and ``benchmarks/generators`` repeats the check.

``-w`` waits for the requests still in flight at the deadline (otherwise oha aborts them
and counts "aborted due to deadline" errors). ``--db-url FILE`` makes oha write every
successful request's (corrected) latency to SQLite after the run; the window runner then
runs ``latency_hist.py FILE`` (``playbooks/files``), which buckets them 1% wide
(:class:`sizing.load.latency.Histogram`): several clients' and repetitions' histograms
add up exactly, so merged percentiles are those of the union of their requests.

oha's JSON report gives times in seconds; everything here is normalised to ms.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from sizing.errors import ToolError, UsageError
from sizing.load.base import Capabilities, LoadRequest, ToolBuild, ToolInstall, window_timeout
from sizing.load.latency import Histogram, LatencyReport
from sizing.load.result import LoadResult
from sizing.loadproto import Command, CommandOutput
from sizing.topology import cpulist

__all__ = [
    "BUILD",
    "OHA",
    "MAX_RATE_LAG",
    "PLANNING_RATE_PER_CORE",
    "VERSION",
    "OhaParseError",
    "OhaSpec",
    "OhaTool",
    "argv",
    "hist_argv",
    "parse",
    "parse_histogram",
]

VERSION = "1.16.0"  # scripts/install-oha
BUILD = "native-tls"  # scripts/install-oha: cargo install --no-default-features --features
MAX_RATE_LAG = 0.02  # answered more than 2% below the offered rate: the client fell behind
CONNECTIONS = 50  # the latency article's wrk2 -c50
# The planning figure for sizing clients: requests/s one client core offers on schedule
# WITH latencies worth reading. benchmarks/generators on the quiet 2-core development
# machine (a 128-byte file over HTTP/1.1 keepalive): oha kept 37,969/s with its core 61%
# busy and p95 2.2 ms; at 56,953/s it still kept the rate but its core was 96% busy and
# p95 504 ms, its own queueing. Rounded down from the first; a sweep to the knee uses it to
# know when the clients, not the server, would be the limit. Not a measured claim about any
# other machine.
PLANNING_RATE_PER_CORE = 37_000


class OhaParseError(ToolError):
    """oha's report lacks a figure the run needs (oha failed, or the text is cut)."""


@dataclass(frozen=True)
class OhaSpec:
    """One constant-rate run. ``cpus`` pins the client (and sets oha's worker threads)."""

    url: str
    rate: int  # requests per second, on a fixed schedule
    duration_s: float
    connections: int = CONNECTIONS
    timeout_s: float = 10.0
    headers: tuple[str, ...] = ()
    keepalive: bool = True
    insecure: bool = True  # sizing's own self-signed certificates
    cpus: tuple[int, ...] = ()
    db_file: str = ""  # where oha writes the raw latencies (empty: not written)


def _check(spec: OhaSpec) -> None:
    if spec.rate < 1:
        raise UsageError(f"oha needs a rate of at least 1 request/s, not {spec.rate}")
    if spec.connections < 1:
        raise UsageError(f"oha needs at least 1 connection, not {spec.connections}")
    for name, v in (("duration", spec.duration_s), ("timeout", spec.timeout_s)):
        if not math.isfinite(v) or v <= 0:
            raise UsageError(f"oha {name} must be a positive number of seconds, not {v}")
    if not spec.url.startswith(("http://", "https://")):
        raise UsageError(f"oha URL must start with http:// or https://, not {spec.url!r}")
    for header in spec.headers:
        if "\r" in header or "\n" in header or ":" not in header:
            raise UsageError(f"not a single HTTP header line 'Name: value': {header!r}")


def _ms(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms"


def argv(spec: OhaSpec, *, oha: str = "oha") -> list[str]:
    """``[taskset -c CPUS] oha --no-tui --output-format json -z D -q RATE
    --latency-correction -c N -w ... URL``: HTTP/1.1 (the article's), no redirects."""
    _check(spec)
    threads = max(1, len(spec.cpus))
    out = [
        *(["taskset", "-c", cpulist(spec.cpus)] if spec.cpus else []),
        oha,
        "--no-tui",
        "--output-format",
        "json",
        "-z",
        _ms(spec.duration_s),
        "-q",
        str(spec.rate),
        "--latency-correction",
        "-c",
        str(spec.connections),
        "-w",
        "--worker-threads",
        str(threads),
        "-t",
        _ms(spec.timeout_s),
        "--http-version",
        "1.1",
        "-r",
        "0",
    ]
    if not spec.keepalive:
        out.append("--disable-keepalive")
    if spec.insecure and spec.url.startswith("https://"):
        out.append("--insecure")
    for header in spec.headers:
        out += ["-H", header]
    if spec.db_file:
        out += ["--db-url", spec.db_file]
    out.append(spec.url)
    return out


def hist_argv(spec: OhaSpec, script: str, *, python: str = "python3") -> list[str]:
    """The follow-up that buckets ``spec.db_file`` (``playbooks/files/latency_hist.py``)."""
    if not spec.db_file:
        raise UsageError("oha spec has no db_file: nothing to bucket")
    return [python, script, spec.db_file]


def _num(doc: Mapping[str, Any], key: str, where: str) -> float:
    v = doc.get(key)
    if v is None:
        raise OhaParseError(f"oha report lacks {where}{key} (no request was answered?)")
    try:
        f = float(v)
    except (TypeError, ValueError) as exc:
        raise OhaParseError(f"oha report has a malformed {where}{key}: {v!r}") from exc
    if not math.isfinite(f):
        raise OhaParseError(f"oha report has a non-finite {where}{key}")
    return f


def parse_histogram(text: str) -> Histogram:
    """``latency_hist.py``'s JSON -> :class:`Histogram`; raises :class:`OhaParseError`."""
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        return Histogram.from_json(doc)
    except (ValueError, KeyError, TypeError) as exc:
        raise OhaParseError(f"latency histogram is unreadable: {exc}") from exc


def parse(json_text: str, hist_text: str | None = None) -> LoadResult:
    """Parse ``oha --output-format json`` (and optionally ``latency_hist.py``'s output) as
    a :class:`LoadResult`: ``requests`` counts every finished request (answered or
    failed), ``rate`` the rate they finished at (oha's schedule is fixed: what it kept).

    Raises :class:`OhaParseError` naming what is missing when the text is not oha's JSON
    report or lacks the latencies, the counts or the run's length.
    """
    text = json_text.strip()
    if not text:
        raise OhaParseError("oha report is empty (oha did not run)")
    try:
        doc = json.loads(text[text.index("{") :]) if "{" in text else None
    except ValueError as exc:
        raise OhaParseError(f"oha report is not JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise OhaParseError(f"oha report is not JSON: {text.splitlines()[0][:200]!r}")
    summary = doc.get("summary")
    pct = doc.get("latencyPercentiles")
    missing = [
        k
        for k in ("summary", "latencyPercentiles", "statusCodeDistribution")
        if not isinstance(doc.get(k), dict)
    ]
    if missing:
        raise OhaParseError("oha report lacks " + ", ".join(missing))
    assert isinstance(summary, dict) and isinstance(pct, dict)
    codes = {str(k): int(v) for k, v in doc["statusCodeDistribution"].items()}
    errors = {str(k): int(v) for k, v in (doc.get("errorDistribution") or {}).items()}
    total_s = _num(summary, "total", "summary.")
    per_s = _num(summary, "requestsPerSec", "summary.")
    requests = sum(codes.values()) + sum(errors.values())
    if requests == 0:
        raise OhaParseError("oha report counts no request")
    if not codes:
        # Not one answer (every request a transport error): oha has no latencies. They read
        # 0 here; every request counts as failed, so the rate is never a good one.
        def num(doc: Mapping[str, Any], key: str, where: str) -> float:
            return 0.0 if doc.get(key) is None else _num(doc, key, where)
    else:
        num = _num
    percentiles = {
        p: 1000 * num(pct, f"p{p:g}", "latencyPercentiles.") for p in (50.0, 90.0, 95.0, 99.0)
    }
    for p in (99.9,):
        if pct.get(f"p{p:g}") is not None:
            percentiles[p] = 1000 * _num(pct, f"p{p:g}", "latencyPercentiles.")
    bad = sum(n for code, n in codes.items() if not code.startswith(("2", "3")))
    ok = requests - bad - sum(errors.values())
    return LoadResult(
        requests=requests,
        duration_s=total_s,
        rate=per_s,
        throughput=ok / total_s if total_s > 0 else 0.0,
        success_ratio=float(summary.get("successRate") or 0.0),
        latency_min_ms=1000 * num(summary, "fastest", "summary."),
        latency_mean_ms=1000 * num(summary, "average", "summary."),
        latency_max_ms=1000 * num(summary, "slowest", "summary."),
        latency_percentiles_ms=percentiles,
        bytes_read=int(summary.get("totalData") or 0),
        status_codes=codes,
        non_2xx_3xx=bad,
        errors=errors,
        error_messages=tuple(errors),
        histogram=parse_histogram(hist_text) if hist_text is not None else None,
    )


@dataclass(frozen=True)
class OhaTool:
    """oha as a :class:`~sizing.load.base.LoadTool`: open loop, HTTP/1.1 and TLS, exact
    per-client histograms; built and copied by sizing (``scripts/install-oha``), pinned."""

    name: str = "oha"
    capabilities: Capabilities = Capabilities(open_loop=True, full_handshakes=True)
    install: ToolInstall | None = None  # built and copied by sizing: its ``built``
    built: ToolBuild | None = ToolBuild(
        binary="oha",
        playbook="oha.yml",
        extravar="sizing_oha_binary",
        needs="cargo",
        time_words="about 4 to 6 minutes",
        seconds=(240.0, 360.0),
        bg_job="oha",
        cost_words="4-6 min the first time on a machine, then a copy",
    )
    ships: tuple[str, ...] = ("latency_hist.py",)  # oha.yml: buckets its raw latencies
    version: str | None = VERSION
    build: str | None = BUILD
    planning_rate_per_core: int = PLANNING_RATE_PER_CORE
    max_rate_lag: float = MAX_RATE_LAG

    def spec(self, req: LoadRequest) -> OhaSpec:
        spec = OhaSpec(
            url=req.url,
            rate=req.rate,
            duration_s=req.duration_s,
            connections=req.connections,
            headers=req.headers,
            keepalive=req.keepalive,
            cpus=req.cpus,
        )
        if not req.window:
            return spec
        return replace(
            spec,
            timeout_s=window_timeout(req.duration_s),
            db_file=f"{req.tool_dir}/oha-results.db",
        )

    def summary(self, req: LoadRequest) -> list[str]:
        return self.command(req).argv

    def command(self, req: LoadRequest) -> Command:
        spec = self.spec(req)
        cmd = argv(spec, oha=f"{req.tool_dir}/oha")
        if not spec.db_file:  # the dry run's: no raw latencies written, none to bucket
            return Command(cmd)
        return Command(cmd, then=[hist_argv(spec, f"{req.tool_dir}/latency_hist.py")])

    def parse(self, out: CommandOutput) -> LoadResult:
        if not out.then:
            raise OhaParseError("latency_hist.py did not run")
        return parse(out.stdout, out.then[0].stdout)

    def latency_report(self, out: CommandOutput) -> LatencyReport:
        return self.parse(out).latency_report()

    def read_version(self, out: CommandOutput) -> str | None:
        return self.version


OHA = OhaTool()
