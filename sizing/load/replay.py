"""The replay generator: vegeta, closed loop, over a weighted list of targets (issue 57).

A customer's workload is replayed as one vegeta attack with ``-rate=0 -max-workers=N``
(N workers sending back to back: closed loop, like wrk) over a target list in vegeta's http
format, read once and taken round robin. The list carries the mix:

* **sizes**: one target per size class, repeated in proportion to its share;
* **requests per connection**: a share ``p`` of the list's entries carry ``Connection:
  close`` (Go's transport and nginx both close after that response), drawn independently
  of everything else, so a connection's length is geometric with mean ``1/p``. A geometric
  shape is what this generator can make: a customer's distribution of another shape is
  matched in its mean, and the comparison of shapes says how far apart they are;
* **TLS and resumption**: targets over ``http://`` and ``https://`` in the customer's
  share of connections (every scheme has the same close share, so connections split as
  requests do); the TLS ones go to two listeners, one that resumes sessions (tickets and a
  cache) and one that does not, in the customer's resumption share. vegeta's
  ``-session-tickets`` keeps a client session cache, so it resumes where the server lets it.

The list is shuffled with a fixed seed: the same mix gives the same list, byte for byte.
The report is vegeta's JSON report (:mod:`sizing.load.vegeta_report`), read as closed-loop
figures (a :class:`~sizing.load.result.LoadResult` of the answered requests), so the
throughput guards read it as they read wrk's.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from sizing.errors import UsageError
from sizing.load.base import Capabilities, LoadRequest, ToolBuild, ToolInstall, window_timeout
from sizing.load.latency import LatencyReport
from sizing.load.result import LoadResult
from sizing.load.vegeta_report import BUILT, VERSION, VegetaParseError, parse
from sizing.loadproto import Command, CommandOutput
from sizing.topology import cpulist

__all__ = ["LIST_LENGTH", "REPLAY", "ReplayTarget", "ReplayTool", "target_list"]

# Entries of a target list: shares resolved to 1/300, a mean of up to 300 requests per
# connection. A window's command carries the list to the client inside the window
# runner's one-argument JSON spec, which Linux caps at 128 KiB (MAX_ARG_STRLEN): 300
# entries are at most 16 KiB (a 2,000-entry list failed a batch of 4 windows). Headers
# every request carries (the JWT) go once, on vegeta's command line (-header).
LIST_LENGTH = 300
SEED = 57
CLOSE = "Connection: close"


@dataclass(frozen=True)
class ReplayTarget:
    """One kind of request of the mix, and its share of all requests."""

    url: str
    share: float
    headers: tuple[str, ...] = ()


def _counts(shares: Sequence[float], n: int) -> list[int]:
    """``n`` entries split in proportion to ``shares`` (largest remainders)."""
    total = sum(shares)
    if total <= 0:
        raise UsageError("a replay needs at least one target with a share above 0")
    exact = [s / total * n for s in shares]
    counts = [int(e) for e in exact]
    order = sorted(range(len(shares)), key=lambda i: exact[i] - counts[i], reverse=True)
    for i in order[: n - sum(counts)]:
        counts[i] += 1
    return counts


def target_list(
    targets: Sequence[ReplayTarget], n: int = LIST_LENGTH, close_share: float = 0.0
) -> str:
    """The targets in vegeta's http format, each repeated in proportion to its share and
    shuffled with a fixed seed (blank lines between targets); ``round(close_share * n)``
    entries carry ``Connection: close`` (at least one when the share is above 0), spread
    over the targets in proportion to their entries."""
    for t in targets:
        if not t.url.startswith(("http://", "https://")) or any(c in t.url for c in " \r\n"):
            raise UsageError("a replay target must be an http:// or https:// URL")
        for h in t.headers:
            if "\r" in h or "\n" in h or ":" not in h:
                raise UsageError("a replay header must be one 'Name: value' line")
    counts = _counts([t.share for t in targets], n)
    closes = min(n, max(1, round(close_share * n))) if close_share > 0 else 0
    # the closes in proportion to each target's entries, so that every scheme and
    # listener has the same close share (its connections then split as its requests do)
    closing = _counts([float(c) for c in counts], closes) if closes else [0] * len(counts)
    entries = [(i, k < closing[i]) for i, c in enumerate(counts) for k in range(c)]
    random.Random(SEED).shuffle(entries)
    blocks = [
        "\n".join([f"GET {targets[i].url}", *targets[i].headers, *([CLOSE] if close else [])])
        for i, close in entries
    ]
    return "\n\n".join(blocks) + "\n"


def _pin(cpus: tuple[int, ...]) -> list[str]:
    return ["taskset", "-c", cpulist(cpus)] if cpus else []


@dataclass(frozen=True)
class ReplayTool:
    """vegeta closed loop over a weighted target list, resuming TLS sessions: the
    generator of the customer-workload points (``generator: vegeta-replay``)."""

    name: str = "vegeta-replay"
    capabilities: Capabilities = Capabilities(
        open_loop=False,
        full_handshakes=True,
    )
    install: ToolInstall | None = None  # the vegeta binary sizing builds and copies
    built: ToolBuild | None = BUILT
    ships: tuple[str, ...] = ()
    version: str | None = VERSION
    build: str | None = None
    planning_rate_per_core: int = 7_000  # vegeta's (benchmarks/generators)
    max_rate_lag: float = 0.02

    def argv(self, req: LoadRequest) -> list[str]:
        """``[taskset] vegeta attack -rate=0 -max-workers=N ... -session-tickets``."""
        if req.connections < 1:
            raise UsageError("a replay needs at least 1 connection")
        for h in req.headers:
            if "\r" in h or "\n" in h or ":" not in h:
                raise UsageError("a replay header must be one 'Name: value' line")
        ms = max(1, round(req.duration_s * 1000))
        timeout = round(window_timeout(req.duration_s) * 1000)
        return [
            *_pin(req.cpus),
            f"{req.tool_dir}/vegeta",
            "attack",
            "-rate=0",
            f"-max-workers={req.connections}",
            f"-workers={req.connections}",
            f"-duration={ms}ms",
            f"-timeout={timeout}ms",
            "-http2=false",
            "-keepalive=true",
            "-redirects=-1",
            "-insecure",
            "-session-tickets",
            *(f"-header={h}" for h in req.headers),
            f"-output={req.tool_dir}/vegeta-replay.bin",
        ]

    def command(self, req: LoadRequest) -> Command:
        if not req.targets:
            raise UsageError("vegeta-replay needs a target list (a workload to replay)")
        results = f"{req.tool_dir}/vegeta-replay.bin"
        report = [f"{req.tool_dir}/vegeta", "report", "-type=json", results]
        return Command(self.argv(req), stdin=req.targets, then=[report])

    def summary(self, req: LoadRequest) -> list[str]:
        return self.argv(req)

    def parse(self, out: CommandOutput) -> LoadResult:
        """vegeta's JSON report as closed-loop figures: every response counted (code 0,
        a transport error, is an error; other codes outside 2xx/3xx are non-2xx)."""
        if not out.then:
            raise VegetaParseError("vegeta's report did not run")
        got = parse(out.then[0].stdout)
        answered = got.requests - got.total_errors
        duration = got.duration_s + got.wait_s
        # vegeta's own report, answered requests over the attack and its wait (every field
        # it has kept, so none a LoadResult gains later is dropped here)
        return replace(
            got,
            requests=answered,
            duration_s=duration,
            rate=answered / duration if duration > 0 else 0.0,
            transfer_bps=got.bytes_read / duration if duration > 0 else 0.0,
            success_ratio=None,
            wait_s=0.0,
            latency_count=None,
        )

    def latency_report(self, out: CommandOutput) -> LatencyReport:
        return parse(out.then[0].stdout if out.then else "").latency_report()

    def read_version(self, out: CommandOutput) -> str | None:
        return self.version


REPLAY = ReplayTool()
