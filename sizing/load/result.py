"""One window's load, as every generator's parser returns it: :class:`LoadResult`.

A neutral record in the style of PerfKitBenchmarker's ``Sample``: whatever the tool (wrk,
h2load, oha, vegeta, the vegeta replay), its parser fills the figures the tool gives, in
normalised units (milliseconds, seconds, bytes), and leaves the others at their "not given"
value (None, empty). The measurement reads this type only; whether a generator runs closed
or open loop is its :class:`~sizing.load.base.Capabilities`, never its result's type. Pure,
no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sizing.load.latency import Histogram, LatencyReport

__all__ = ["LoadResult"]


@dataclass(frozen=True)
class LoadResult:
    """One client's figures of one window, normalised: times in ms, lengths in s, bytes.

    ``requests`` counts what the tool counts as finished (answered or failed: wrk's
    ``requests``, h2load's ``done``, oha's and vegeta's every result, the replay's
    answered ones). ``rate`` is the rate requests went at as the tool reports it: sent on
    schedule (open loop) or finished (closed loop, where each is sent when the last is
    answered: wrk's ``Requests/sec``). ``throughput`` is successful (2xx/3xx) responses per
    second. ``non_2xx_3xx`` counts answers the tool calls failed (wrk: status > 399);
    ``errors`` the requests that failed without one, by kind (wrk's ``connect``, ``read``,
    ``write``, ``timeout``; oha's messages; vegeta's code 0 as ``transport``), and
    ``error_messages`` the distinct messages the tool printed.

    ``latency_percentiles_ms`` maps a percentile (0-100) to ms as the tool prints them
    (wrk: 50, 75, 90 and 99 with ``--latency``, else empty); ``cdf`` holds (percentile, ms)
    pairs at a finer grid when the tool gives one (vegeta's hdrplot); ``histogram`` every
    answered request bucketed (oha's ``latency_hist.py``). ``latency_count`` is how many
    requests the latency figures cover.
    """

    requests: int
    duration_s: float
    rate: float
    throughput: float
    latency_mean_ms: float
    latency_max_ms: float
    latency_min_ms: float | None = None
    latency_stdev_ms: float | None = None
    latency_percentiles_ms: dict[float, float] = field(default_factory=dict)
    cdf: tuple[tuple[float, float], ...] = ()
    histogram: Histogram | None = None
    latency_count: int | None = None  # None: the answered requests (requests - failed)
    bytes_read: int = 0
    transfer_bps: float | None = None
    status_codes: dict[str, int] = field(default_factory=dict)
    non_2xx_3xx: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    error_messages: tuple[str, ...] = ()
    success_ratio: float | None = None  # the share of 2xx/3xx answers, when the tool says
    wait_s: float = 0.0  # after the run, waiting for the last answers (vegeta's ``wait``)
    threads: int = 0  # 0: not known
    connections: int = 0

    @property
    def rps(self) -> float:
        """Requests per second, the closed-loop name of :attr:`rate`."""
        return self.rate

    @property
    def total_errors(self) -> int:
        """Requests that failed without an answer, every kind together."""
        return sum(self.errors.values())

    @property
    def failed(self) -> int:
        """Requests without a 2xx/3xx answer: failed answers and errors together."""
        return self.non_2xx_3xx + self.total_errors

    @property
    def error_ratio(self) -> float:
        """failed / requests.

        Not bounded by 1: a server that goes away makes wrk count one write or read
        error per reconnect attempt, many more than completed requests.
        """
        return self.failed / max(self.requests, 1)

    def lag(self, offered: float) -> float:
        """How far :attr:`rate` fell short of ``offered``, as a fraction (0 = on time)."""
        return max(0.0, (offered - self.rate) / offered) if offered > 0 else 0.0

    def latency_report(self) -> LatencyReport:
        """This client's distribution for :func:`sizing.load.latency.merge_latency`: the
        finer ``cdf`` when given, else the percentiles, with the histogram when given."""
        if self.histogram is not None:
            count = self.histogram.count
        elif self.latency_count is not None:
            count = self.latency_count
        else:
            count = self.requests - self.failed
        return LatencyReport(
            count=count,
            min_ms=self.latency_min_ms or 0.0,
            max_ms=self.latency_max_ms,
            mean_ms=self.latency_mean_ms,
            cdf=self.cdf or tuple(sorted(self.latency_percentiles_ms.items())),
            requests=self.requests,
            errors=self.failed,
            histogram=self.histogram,
        )
