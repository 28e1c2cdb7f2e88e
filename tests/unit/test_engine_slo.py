"""Sizing by latency: RPS at p95 <= X from latency points (sizing.engine.slo)."""

from __future__ import annotations

from sizing.engine.slo import capacity, slo_figures, slo_profile_name
from sizing.knee import Slo
from sizing.model import PointKey, PointResult, Status
from sizing.records import PointMeta


def latency_point(cores: int, curve: list[tuple[float, float]], **meta: object) -> PointResult:
    return PointResult(
        PointKey("h1", "baremetal", cores, "off", "latency"),
        Status.MEASURED,
        value=1.0,
        unit="requests/s",
        metadata=PointMeta.parse(
            {
                "mode": "fixed-rate",
                "curve": [
                    {
                        "rate": r,
                        "mean_ms": p / 2,
                        "p50_ms": p / 3,
                        "p95_ms": p,
                        "p99_ms": p * 2,
                        "max_ms": p * 3,
                    }
                    for r, p in curve
                ],
                **meta,
            }
        ),
    )


CURVE = [(1000.0, 2.0), (2000.0, 4.0), (3000.0, 9.0), (4000.0, 40.0)]


def test_capacity_from_the_curve_or_the_search() -> None:
    slo = Slo("p95", 10.0)
    assert capacity(latency_point(1, CURVE), slo) == 3000.0
    assert capacity(latency_point(1, CURVE), Slo("p95", 5.0)) == 2000.0
    searched = latency_point(1, CURVE, slo_label="p95<=10ms", slo_search={"capacity": 3420.0})
    assert capacity(searched, slo) == 3420.0  # searched for exactly this objective
    assert capacity(searched, Slo("p95", 5.0)) == 2000.0  # another one: from the curve


def test_slo_figures_are_rps_figures_newest_wins() -> None:
    slo = Slo("p95", 10.0)
    figs = slo_figures(
        [
            (1, latency_point(1, CURVE)),
            (2, latency_point(1, [(1000.0, 1.0), (5000.0, 8.0)])),
            (2, latency_point(2, CURVE)),
        ],
        slo,
    )
    by_cores = {f.cores: f for f in figs}
    assert by_cores[1].value == 5000.0 and by_cores[1].origin.startswith("run 2")
    assert all(f.profile == "rps" and f.source == "measured" for f in figs)
    assert slo_profile_name(slo) in by_cores[2].origin


def test_other_points_and_emulated_ones_are_left_out() -> None:
    slo = Slo("p95", 10.0)
    rps = PointResult(PointKey("h1", "baremetal", 1, "off", "rps"), Status.MEASURED, value=9.0)
    emu = latency_point(1, CURVE)
    emu = PointResult(emu.key, emu.status, value=1.0, flags=("emulated",), metadata=emu.metadata)
    assert slo_figures([(1, rps), (1, emu)], slo) == []
    assert len(slo_figures([(1, emu)], slo, include_emulated=True)) == 1


def test_one_latency_workload_and_lower_bounds() -> None:
    from sizing.engine.slo import latency_workload, latency_workloads

    slo = Slo("p95", 10.0)
    proxy = latency_point(1, CURVE, role="proxy", scheme="https", file_size=1024)
    static = latency_point(
        1, [(1000.0, 1.0), (9000.0, 2.0)], role="web", scheme="http", file_size=102400
    )
    assert latency_workload(proxy) == "latency/proxy/https/1024B"
    assert latency_workloads([(1, proxy), (2, static)]) == {
        "latency/proxy/https/1024B": 1,
        "latency/web/http/102400B": 1,
    }
    [fig] = slo_figures([(1, proxy), (2, static)], slo, workload="latency/proxy/https/1024B")
    assert fig.value == 3000.0 and fig.basis == "latency/proxy/https/1024B"
    assert not fig.lower_bound  # 4,000/s missed the objective: a real capacity
    [flat] = slo_figures([(1, proxy), (2, static)], slo, workload="latency/web/http/102400B")
    assert flat.value == 9000.0 and flat.lower_bound  # met at the highest rate measured
