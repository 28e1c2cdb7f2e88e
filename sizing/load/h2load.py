"""The h2load generator (nghttp2's benchmarking tool): closed loop, HTTP/1.1 and TLS.

Written against h2load nghttp2/1.52.0 (Debian 12's ``nghttp2-client``). It runs as wrk
does, each of ``-c`` clients sending its next request when the last is answered, here
over HTTP/1.1 (``--h1``: no HTTP/2 negotiation, one request in flight per connection,
``-m 1``), for ``-D`` seconds. What the parser relies on, from its text report:

* ``finished in 2.00s, 15439.00 req/s, 5.38MB/s``: the run's length and rate;
* ``requests: N total, N started, N done, N succeeded, N failed, N errored, N timeout``:
  ``done`` counts every answered or failed request, ``failed`` those without a 2xx/3xx
  answer, ``errored`` those cut by a transport error, ``timeout`` those that timed out;
* ``status codes: N 2xx, N 3xx, N 4xx, N 5xx`` and ``traffic: SIZE (BYTES) total``;
* ``time for request: MIN MAX MEAN SD +/-SD`` (``us``, ``ms`` or ``s``).

Its text has no percentiles: ``--log-file`` writes every request's status and latency
(microseconds, the third tab-separated column), and a follow-up (:data:`HIST_SCRIPT`,
run by ``python3 -c``) buckets them as :class:`sizing.load.latency.Histogram` (1% wide,
exactly mergeable across clients and repetitions) and deletes the log.
``h2load --version`` (``h2load nghttp2/1.52.0``) after each window gives the version a
point records. h2load cannot close each HTTP/1.1 connection after its request (with
``Connection: close`` it waits forever for the next answer): it makes no full-handshake
(TPS) windows. Installed on the clients from Debian's ``nghttp2-client``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from sizing.errors import ToolError, UsageError
from sizing.load.base import Capabilities, LoadRequest, ToolBuild, ToolInstall, first_version
from sizing.load.latency import HIST_GROWTH, Histogram, LatencyReport
from sizing.load.result import LoadResult
from sizing.loadproto import Command, CommandOutput
from sizing.topology import cpulist

__all__ = [
    "H2LOAD",
    "HIST_SCRIPT",
    "H2loadParseError",
    "H2loadSpec",
    "H2loadTool",
    "argv",
    "parse",
    "parse_histogram",
]


class H2loadParseError(ToolError):
    """h2load's report lacks a figure the run needs (h2load failed, or the text is cut)."""


@dataclass(frozen=True)
class H2loadSpec:
    """One h2load run over HTTP/1.1. ``cpus`` pins the client and sets its threads."""

    url: str
    clients: int
    threads: int
    duration_s: float
    headers: tuple[str, ...] = ()
    cpus: tuple[int, ...] = ()
    log_file: str = ""  # every request's latency (empty: not written)


def argv(spec: H2loadSpec, *, h2load: str = "h2load") -> list[str]:
    """``[taskset -c CPUS] h2load --h1 -c N -t T -D Dms [-H ...] [--log-file F] URL``."""
    if spec.threads < 1 or spec.clients < spec.threads:
        raise UsageError(
            f"h2load needs at least 1 thread and a client per thread "
            f"({spec.clients} clients, {spec.threads} threads)"
        )
    if not math.isfinite(spec.duration_s) or spec.duration_s <= 0:
        raise UsageError(f"h2load duration must be a positive number of s, not {spec.duration_s}")
    if not spec.url.startswith(("http://", "https://")):
        raise UsageError(f"h2load URL must start with http:// or https://, not {spec.url!r}")
    out = [*(["taskset", "-c", cpulist(spec.cpus)] if spec.cpus else []), h2load, "--h1"]
    out += ["-c", str(spec.clients), "-t", str(spec.threads), "-m", "1"]
    out += ["-D", f"{max(1, round(spec.duration_s * 1000))}ms"]
    for header in spec.headers:
        if "\r" in header or "\n" in header or ":" not in header:
            raise UsageError(f"not a single HTTP header line 'Name: value': {header!r}")
        out += ["-H", header]
    if spec.log_file:
        out.append(f"--log-file={spec.log_file}")
    out.append(spec.url)
    return out


# Buckets the log's latencies (2xx/3xx answers only) as latency.Histogram's JSON, then
# deletes the log. Run on the client by python3 -c, the log's path its one argument.
HIST_SCRIPT = f"""import json, math, os, sys
g = {HIST_GROWTH!r}; b = {{}}; n = 0; s = 0.0; lo = None; hi = 0.0
for line in open(sys.argv[1]):
    f = line.split("\\t")
    if len(f) < 3 or not 200 <= int(f[1]) < 400:
        continue
    us = float(f[2]); i = 0 if us < 1 else int(math.floor(math.log(us) / math.log(g)))
    b[i] = b.get(i, 0) + 1; n += 1; s += us / 1000; hi = max(hi, us / 1000)
    lo = us / 1000 if lo is None else min(lo, us / 1000)
os.remove(sys.argv[1])
print(json.dumps({{"count": n, "sum_ms": s, "min_ms": lo or 0.0, "max_ms": hi, "growth": g,
                  "buckets": {{str(k): v for k, v in sorted(b.items())}}}}))
"""

_TIME_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}
_NUM = r"(\d+(?:\.\d+)?)"
_T = rf"{_NUM}(us|ms|s)"
_RE_FINISHED = re.compile(rf"finished in {_NUM}s, {_NUM} req/s")
_RE_REQUESTS = re.compile(
    r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
    r"(\d+) errored, (\d+) timeout"
)
_RE_STATUS = re.compile(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx")
_RE_TRAFFIC = re.compile(r"traffic: \S+ \((\d+)\) total")
_RE_TIME = re.compile(rf"time for request:\s+{_T}\s+{_T}\s+{_T}\s+{_T}")
_RE_THREAD = re.compile(r"spawning thread #\d+: (\d+) total client")


def _ms(value: str, unit: str) -> float:
    return float(value) * _TIME_MS[unit]


def parse(text: str) -> LoadResult:
    """h2load's text report as a :class:`LoadResult`; :class:`H2loadParseError` names what
    lacks."""
    found = {
        "the 'finished in' line": _RE_FINISHED.search(text),
        "the 'requests:' line": _RE_REQUESTS.search(text),
        "the 'status codes:' line": _RE_STATUS.search(text),
        "the 'traffic:' line": _RE_TRAFFIC.search(text),
        "the 'time for request:' line": _RE_TIME.search(text),
    }
    missing = [name for name, m in found.items() if m is None]
    if missing:
        empty = " (the output is empty)" if not text.strip() else ""
        raise H2loadParseError("h2load output lacks " + ", ".join(missing) + empty)
    fin, req, status, traffic, times = found.values()
    assert fin and req and status and traffic and times
    if int(req[3]) == 0:  # a refused connection prints a report of nothing, and exits 0
        raise H2loadParseError("h2load finished no request (could it connect?)")
    duration = float(fin[1])
    total_bytes = int(traffic[1])
    threads = _RE_THREAD.findall(text)
    return LoadResult(
        requests=int(req[3]),
        duration_s=duration,
        bytes_read=total_bytes,
        rate=float(fin[2]),
        throughput=int(req[4]) / duration if duration > 0 else 0.0,
        transfer_bps=total_bytes / duration if duration > 0 else 0.0,
        latency_min_ms=_ms(times[1], times[2]),
        latency_mean_ms=_ms(times[5], times[6]),
        latency_stdev_ms=_ms(times[7], times[8]),
        latency_max_ms=_ms(times[3], times[4]),
        errors={"errored": int(req[6]), "timeout": int(req[7])},
        non_2xx_3xx=int(status[3]) + int(status[4]),
        threads=len(threads),
        connections=sum(int(n) for n in threads),
    )


def parse_histogram(text: str, requests: int = 0, errors: int = 0) -> LatencyReport:
    """:data:`HIST_SCRIPT`'s JSON as one client's latency report (percentiles at 1%)."""
    try:
        hist = Histogram.from_json(json.loads(text))
    except (ValueError, KeyError, TypeError) as exc:
        raise H2loadParseError(f"h2load's latency histogram is unreadable: {exc}") from exc
    if hist.count == 0:
        raise H2loadParseError("h2load's log holds no answered request")
    cdf = tuple((p, hist.percentile(p)) for p in (50.0, 75.0, 90.0, 95.0, 99.0, 99.9))
    return LatencyReport(
        count=hist.count,
        min_ms=hist.min_ms,
        max_ms=hist.max_ms,
        mean_ms=hist.mean_ms,
        cdf=cdf,
        requests=requests or hist.count,
        errors=errors,
        histogram=hist,
    )


@dataclass(frozen=True)
class H2loadTool:
    """h2load as a :class:`~sizing.load.base.LoadTool` (see the module)."""

    name: str = "h2load"
    capabilities: Capabilities = Capabilities(open_loop=False, full_handshakes=False)
    install: ToolInstall | None = ToolInstall("h2load", ("nghttp2-client",))
    built: ToolBuild | None = None
    ships: tuple[str, ...] = ()
    version: str | None = None  # the client's packaged h2load, read from it
    build: str | None = None
    planning_rate_per_core: int = 0  # closed loop: it offers what the server answers
    max_rate_lag: float = 0.0

    def spec(self, req: LoadRequest) -> H2loadSpec:
        if not req.keepalive:
            raise UsageError("h2load cannot close each connection: it makes no TPS windows")
        return H2loadSpec(
            url=req.url,
            clients=req.connections,
            threads=req.threads,
            duration_s=req.duration_s,
            headers=req.headers,
            cpus=req.cpus,
            log_file=f"{req.tool_dir}/h2load-requests.log" if req.window else "",
        )

    def summary(self, req: LoadRequest) -> list[str]:
        return argv(self.spec(req))

    def command(self, req: LoadRequest) -> Command:
        spec = self.spec(req)
        if not spec.log_file:
            return Command(argv(spec))
        hist = ["python3", "-c", HIST_SCRIPT, spec.log_file]
        return Command(argv(spec), then=[hist, ["h2load", "--version"]])

    def parse(self, out: CommandOutput) -> LoadResult:
        return parse(out.stdout)

    def latency_report(self, out: CommandOutput) -> LatencyReport:
        if not out.then:
            raise H2loadParseError("h2load's latency histogram did not run")
        got = self.parse(out)
        report = parse_histogram(out.then[0].stdout, got.requests, got.failed)
        if report.count > got.requests:  # h2load appends: a log an earlier window left
            raise H2loadParseError(
                f"h2load's log holds {report.count} answers, more than its {got.requests}"
            )
        return report

    def read_version(self, out: CommandOutput) -> str | None:
        return first_version(out.then, r"h2load nghttp2/(\S+)") or self.version


H2LOAD = H2loadTool()
