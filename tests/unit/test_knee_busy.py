"""What was busy where latency left its flat part: the knee's floor, the sentence a latency
run prints beside its knee, the ``client-bound`` flag, and that flag making an SLO figure a
lower bound (sizing.knee, sizing.measure.fixedrate, sizing.engine.slo)."""

from __future__ import annotations

from dataclasses import asdict

from sizing.engine.slo import slo_figures
from sizing.knee import KNEE_FLOOR_MS, LatencyPoint, knee, knee_interval, knee_limit
from sizing.measure.curve_verdicts import busy_at, client_saturated
from sizing.model import PointKey, PointResult, Status
from sizing.option_text import parse_slo
from sizing.records import PointMeta


def lp(rate: float, p95: float, server: float | None, client: float | None) -> LatencyPoint:
    return LatencyPoint(
        rate=rate,
        mean_ms=p95 / 2,
        p50_ms=p95 / 3,
        p95_ms=p95,
        p99_ms=p95 * 2,
        max_ms=p95 * 4,
        server_busy=server,
        client_busy=client,
    )


# The shape this 2-core box gave a 1-core HTTPS proxy (docs/latency.md): sub-ms p95 tripling at 40%
# server CPU, long before the spike.
SUB_MS = [
    lp(1000, 0.36, 12, 14),
    lp(2000, 0.39, 17, 21),
    lp(4000, 0.59, 27, 32),
    lp(8000, 0.99, 41, 46),
    lp(11314, 1.85, 58, 67),
    lp(16000, 37.2, 71, 85),
]


def test_a_sub_millisecond_p95_tripling_is_not_the_knee() -> None:
    assert knee_limit(SUB_MS) == KNEE_FLOOR_MS == 5.0
    assert knee_interval(SUB_MS) == (11314, 16000)
    k = knee(SUB_MS)
    assert k is not None and k.rate == 11314
    slow = [lp(100, 4.0, 10, 10), lp(200, 4.2, 20, 10), lp(400, 13.0, 99, 10)]
    assert knee_limit(slow) == 12.0  # 3x the low-load p95 when that is above the floor


def test_the_sentence_says_whose_cpu_ran_out() -> None:
    said = busy_at(SUB_MS, 16000, "oha")
    assert said.startswith(
        "at 16,000 requests/s, the first rate past it, the server's CPUs "
        "were 71% busy and the busiest client's 85%: latency rose before"
    )
    assert not client_saturated(SUB_MS, 16000)
    hot = [*SUB_MS[:-1], lp(16000, 37.2, 71, 97)]
    assert client_saturated(hot, 16000)
    assert "the clients saturated (oha and any upstream" in busy_at(hot, 16000, "oha")
    full = [*SUB_MS[:-1], lp(16000, 37.2, 99, 50)]
    assert busy_at(full, 16000, "oha").endswith("the busiest client's 50%")
    assert busy_at(SUB_MS, None, "oha") == "" and busy_at(SUB_MS, 123, "oha") == ""


def _point(flags: tuple[str, ...]) -> PointResult:
    key = PointKey("localhost", "baremetal", 1, "off", "latency")
    curve = [asdict(p) for p in SUB_MS]
    return PointResult(
        key,
        Status.MEASURED,
        "",
        value=11314.0,
        unit="requests/s",
        flags=flags,
        metadata=PointMeta.parse({"mode": "fixed-rate", "curve": curve}),
    )


def test_a_client_bound_point_gives_only_a_lower_bound() -> None:
    slo = parse_slo("p95=10ms")
    (plain,) = slo_figures([(1, _point(()))], slo)
    assert plain.value == 11314 and not plain.lower_bound
    (bound,) = slo_figures([(1, _point(("client-bound",)))], slo)
    assert bound.value == 11314 and bound.lower_bound and "client-bound" in bound.flags
