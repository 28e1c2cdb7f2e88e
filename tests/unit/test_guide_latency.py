"""The guide's "Latency under steady load": data preparation, charts and tables.

TEST FIXTURE: every latency, rate, CPU share and steal figure below is invented for these
tests; none is a measurement. The points are shaped as :func:`sizing.measure.fixedrate.measure`
stores them (its metadata keys, its ``latency`` samples, its knee and jump rules, which
are called here rather than copied) and written through the real Store API, then read
back by the guide's own reader.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from sizing.app.guide import prepare
from sizing.knee import LatencyPoint, knee
from sizing.measure.rates import mean_point, soak_jumps
from sizing.model import PointKey, PointResult, Sample, Status
from sizing.option_text import parse_slo
from sizing.records import PointMeta, SampleMeta, SoakRep
from sizing.report.data import Guide, GuideRequest, latency_ms
from sizing.report.render.charts import render_charts
from sizing.report.render.html import render_html, render_markdown
from sizing.sizing_request import Inputs, SizingRequest
from sizing.store import Store
from tests.unit.test_guide_data import fill_store

# A repetition at one rate: (mean, p50, p95, p99, max) in ms, server busy %, steal %.
Rep = tuple[float, float, float, float, float, float, float]

# TEST FIXTURE: bare metal, 1 core, swept 1,000-5,000/s with --slo p95=10ms; the search
# probed 4,200 and 4,100. The p95 spans 0.4 to 48 ms, mean from 0.3: a log-scale chart.
FIXTURE_BM1: dict[int, list[Rep]] = {
    1000: [(0.31, 0.28, 0.42, 0.60, 3.1, 21.0, 0.0)],
    2000: [(0.33, 0.30, 0.47, 0.71, 3.4, 41.0, 0.0)],
    3000: [(0.38, 0.33, 0.61, 0.95, 4.2, 62.0, 0.0)],
    4000: [(0.90, 0.52, 2.40, 6.10, 12.0, 83.0, 0.0)],
    5000: [(19.5, 12.0, 48.0, 95.0, 210.0, 99.0, 0.0)],
    4200: [(2.40, 1.10, 11.8, 22.0, 41.0, 88.0, 0.0)],
    4100: [(1.60, 0.80, 8.70, 16.0, 30.0, 86.0, 0.0)],
}
FIXTURE_BM1_SWEPT = [1000, 2000, 3000, 4000, 5000]
FIXTURE_BM1_PROBES = [4200.0, 4100.0]
# TEST FIXTURE: hypervisor (libvirt), 1 core, --soak: 3 repetitions per rate; the third
# repetition at 2,000/s had 6% steal and a p95 jump.
FIXTURE_HV1: dict[int, list[Rep]] = {
    1000: [
        (0.40, 0.36, 0.55, 0.80, 4.0, 24.0, 0.1),
        (0.41, 0.37, 0.56, 0.82, 4.1, 24.0, 0.1),
        (0.40, 0.36, 0.54, 0.79, 3.9, 25.0, 0.2),
    ],
    2000: [
        (0.45, 0.40, 0.62, 0.90, 4.4, 46.0, 0.2),
        (0.46, 0.41, 0.63, 0.92, 4.6, 47.0, 0.1),
        (1.90, 0.90, 5.80, 12.0, 25.0, 55.0, 6.0),
    ],
    3000: [
        (0.55, 0.48, 0.80, 1.20, 5.0, 70.0, 0.3),
        (0.56, 0.49, 0.82, 1.30, 5.2, 71.0, 0.2),
        (0.55, 0.48, 0.81, 1.25, 5.1, 70.0, 0.3),
    ],
}
# TEST FIXTURE: bare metal, 2 cores: latency stayed flat over the sweep (no knee).
FIXTURE_BM2: dict[int, list[Rep]] = {
    1000: [(0.30, 0.27, 0.40, 0.58, 3.0, 11.0, 0.0)],
    2000: [(0.31, 0.28, 0.41, 0.60, 3.2, 21.0, 0.0)],
    3000: [(0.32, 0.29, 0.43, 0.62, 3.3, 31.0, 0.0)],
}


def _lp(rate: int, rep: Rep) -> LatencyPoint:
    mean, p50, p95, p99, mx, busy, steal = rep
    return LatencyPoint(
        rate=float(rate),
        mean_ms=mean,
        p50_ms=p50,
        p95_ms=p95,
        p99_ms=p99,
        max_ms=mx,
        achieved=float(rate) * 0.999,
        error_ratio=0.0,
        p90_ms=p95 * 0.8,
        server_busy=busy,
        server_steal=steal,
    )


def latency_result(
    platform: str,
    cores: int,
    reps_by_rate: dict[int, list[Rep]],
    *,
    swept: Sequence[int] | None = None,
    slo: str | None = None,
    probes: Sequence[float] = (),
    capacity: float | None = None,
    emulated: bool = False,
) -> tuple[PointResult, list[tuple[int, Sample]]]:
    """A latency point and its samples as :func:`sizing.measure.fixedrate.measure` returns them."""
    swept = list(swept or sorted(reps_by_rate))
    reps = max(len(v) for v in reps_by_rate.values())
    samples: list[tuple[int, Sample]] = []
    series: dict[float, list[SoakRep]] = {}
    index = 1  # window 0 was the warm-up
    for rate, rep_list in reps_by_rate.items():
        for n, rep in enumerate(rep_list, start=1):
            lp = _lp(rate, rep)
            meta = {
                **asdict(lp),
                "sent_rate": rate * 0.999,
                "lag": 0.001,
                "requests": rate * 10,
                "errors": 0,
                "status_codes": {"200": rate * 10},
                "error_messages": [],
                "client_cpu_busy": {"gen1": 30.0},
                "server_cpu": {"busy": rep[5], "steal": rep[6]},
                "clients": 1,
                "problems": [],
            }
            phase = "sweep" if rate in swept else "search"
            samples.append(
                (
                    index,
                    Sample(
                        "latency",
                        lp.p95_ms,
                        "ms",
                        SampleMeta.parse(
                            {
                                **meta,
                                "phase": phase,
                                "warmup": False,
                                "repetition_at_rate": n,
                                "duration_s": 10.0,
                            }
                        ),
                    ),
                )
            )
            index += 1
            series.setdefault(lp.rate, []).append(
                SoakRep(
                    n,
                    lp.mean_ms,
                    lp.p50_ms,
                    lp.p95_ms,
                    lp.p99_ms,
                    lp.max_ms,
                    lp.server_steal,
                    lp.server_busy,
                    0.001,
                )
            )
    pts = [mean_point([_lp(r, x) for x in reps_by_rate[r]]) for r in sorted(reps_by_rate)]
    k = knee(pts)
    flags = ["emulated"] if emulated else []
    if slo is None and k is None:
        flags.append("no-knee")
    value = capacity if slo else (k.rate if k else max(p.rate for p in pts))
    jumps = {f"{r:g}": soak_jumps(s) for r, s in series.items() if soak_jumps(s)}
    parsed = parse_slo(slo) if slo else None
    metadata: dict[str, Any] = {
        "host": "srv1",
        "platform": platform,
        "cores": cores,
        "ht": "off",
        "profile": "latency",
        "url": "https://10.0.0.1:8443/1k",
        "target": "srv1",
        "file_size": 1024,
        "scheme": "https",
        "tls_key": "ecdsa-p256",
        "tls_ciphers": "ECDHE-ECDSA-AES256-GCM-SHA384",
        "role": "server",
        "mode": "fixed-rate",
        "generator": "vegeta",
        "tool": "vegeta",
        "tool_version": "v12.12.0",
        "sizing_version": "0.1.0",
        "duration_s": 10.0,
        "repetitions_per_rate": reps,
        "soak_s": 33.0 * 3 if reps > 1 else None,
        "rates": swept,
        "server_cpus": "1",
        "worker_cpus": "1",
        "clients": ["gen1"],
        "platform_settings": {},
        "curve": [asdict(p) for p in pts],
        "knee_rate": k.rate if k else None,
        "slo": str(parsed) if parsed else None,
        "slo_label": parsed.label if parsed else None,
        "slo_search": None
        if parsed is None
        else {
            "capacity": capacity,
            "bracket": [capacity, max(probes)],
            "probes": list(probes),
            "probe_count": len(probes),
            "converged": True,
            "reason": "",
            "sweep_capacity": 4000.0,
        },
        "soak_series": (
            {f"{r:g}": [asdict(x) for x in s] for r, s in series.items()} if reps > 1 else None
        ),
        "soak_jumps": jumps or None,
        "nginx_version": "1.22.1",
        "kernel": "6.1.0-test",
        "cpu_model": "Test CPU Model 9000",
        "hypervisor": None,
        "openssl_version": "3.0.11",
    }
    result = PointResult(
        PointKey("srv1", platform, cores, "off", "latency"),
        Status.MEASURED,
        "; ".join(
            ["latency stayed flat over the whole sweep: the knee lies above it"]
            if "no-knee" in flags
            else []
        ),
        value=value,
        unit="requests/s",
        repetitions=reps,
        flags=tuple(flags),
        metadata=PointMeta.parse(metadata),
    )
    return result, samples


def fill_latency(store: Store, run_id: int) -> None:
    """The TEST FIXTURE latency points of this module, stored as the runner stores them."""
    store.add_point(
        run_id,
        *latency_result(
            "baremetal",
            1,
            FIXTURE_BM1,
            swept=FIXTURE_BM1_SWEPT,
            slo="p95=10ms",
            probes=FIXTURE_BM1_PROBES,
            capacity=4100.0,
        ),
    )
    store.add_point(run_id, *latency_result("libvirt", 1, FIXTURE_HV1))
    store.add_point(run_id, *latency_result("baremetal", 2, FIXTURE_BM2))
    # a failed point keeps its partial curve; the guide leaves it out
    failed, _ = latency_result("baremetal", 4, FIXTURE_BM2)
    store.add_point(
        run_id,
        PointResult(failed.key, Status.FAILED, "nginx died", metadata=failed.metadata),
        [],
    )


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "sizing.sqlite"
    with Store(path) as store:
        fill_store(store)  # the throughput points of test_guide_data
        run_id = store.start_run(
            inventory="/lab/inventories/lab.yml",
            argv=["sizing", "run", "--profile", "latency"],
            tool_version="0.1.0",
            options={"soak_s": 99.0},
        )
        fill_latency(store, run_id)
        store.finish_run(run_id, "complete")
    return path


def _guide(db: Path) -> Guide:
    request = GuideRequest(date="2024-01-02", sizing=SizingRequest(inputs=Inputs(db=db)))
    return prepare(request).guide


# -- data preparation --------------------------------------------------------------------


def test_latency_series_come_from_the_stored_points(db: Path) -> None:
    lat = _guide(db).latency
    assert lat is not None
    labels = [s.label for s in lat.series]
    assert labels == ["Bare metal, 1 core", "Bare metal, 2 cores", "Hypervisor, 1 core"]
    bm1 = lat.series[0]
    assert bm1.rates == (1000.0, 2000.0, 3000.0, 4000.0, 4100.0, 4200.0, 5000.0)
    assert bm1.p95_ms[0] == 0.42 and bm1.mean_ms[-1] == 19.5
    assert bm1.server_busy[2] == 62.0
    assert bm1.knee_rate == 4000.0  # sizing.knee's rule: 4,100/s is past 5 ms of p95
    assert (bm1.slo, bm1.slo_stat, bm1.slo_limit_ms, bm1.slo_capacity) == (
        "p95=10ms",
        "p95",
        10.0,
        4100.0,
    )
    hv1 = lat.series[2]
    assert hv1.platform == "hypervisor" and hv1.slo is None
    assert hv1.p95_ms[1] == pytest.approx((0.62 + 0.63 + 5.80) / 3)  # the soak mean


def test_summary_table_has_knee_and_slo_capacity(db: Path) -> None:
    lat = _guide(db).latency
    assert lat is not None
    rows = {r[0].text: [c.text for c in r] for r in lat.summary.rows}
    assert rows["Bare metal, 1 core"][2:] == [
        "1,000–5,000 (5 rates)",
        "4,000",
        "p95 ≤ 10 ms",
        "4,100",
    ]
    assert rows["Bare metal, 2 cores"][3] == "above 3,000"  # no knee in the sweep
    assert rows["Hypervisor, 1 core"][4:] == ["–", "–"]
    assert lat.summary.rows[0][5].source == "measured"


def test_rates_table_has_every_statistic(db: Path) -> None:
    lat = _guide(db).latency
    assert lat is not None
    bm1 = lat.rates[0]
    assert bm1.headers[2:7] == ("Mean (ms)", "p50 (ms)", "p95 (ms)", "p99 (ms)", "Max (ms)")
    by_rate = {r[0].text: [c.text for c in r] for r in bm1.rows}
    assert by_rate["1,000"][2:9] == ["0.31", "0.28", "0.42", "0.60", "3.10", "21.0%", "–"]
    assert by_rate["4,000"][8] == "knee"
    assert by_rate["4,100"][8] == "SLO capacity"
    assert by_rate["5,000"][4:7] == ["48.0", "95.0", "210"]
    assert any("4,200, 4,100" in n for n in bm1.notes)  # the search's probes
    hv1 = lat.rates[2]
    assert any("repeated 3 times" in n for n in hv1.notes)
    assert [latency_ms(v) for v in (0.123, 12.34, 1234.0)] == ["0.12", "12.3", "1,234"]


def test_soak_table_only_where_latency_or_steal_jumped(db: Path) -> None:
    lat = _guide(db).latency
    assert lat is not None
    (soak,) = lat.soak  # the hypervisor point; the others repeated each rate once
    assert soak.title.startswith("Soak repetitions with jumps: Hypervisor, 1 core")
    rows = [[c.text for c in r] for r in soak.rows]
    assert [r[:2] for r in rows] == [["2,000", "1"], ["2,000", "2"], ["2,000", "3"]]
    assert rows[2][7:] == ["6.0%", "steal"] and rows[0][8] == "–"


def test_latency_points_stay_out_of_the_throughput_data(db: Path) -> None:
    g = _guide(db)
    assert {c.profile for c in g.cpu_points} == {"rps", "tps"}
    assert all(f.profile in ("rps", "tps") for f in g.choice.figures)
    assert g.to_dict()["latency"]["summary"]["rows"][0][0] == "Bare metal, 1 core"


def test_no_latency_points_no_section(tmp_path: Path) -> None:
    path = tmp_path / "sizing.sqlite"
    with Store(path) as store:
        fill_store(store)
    g = _guide(path)
    assert g.latency is None
    assert render_charts(g, only=["latency", "latency-cpu"]) == []
    assert "Latency under steady load" not in render_markdown(g)


# -- charts and rendering ----------------------------------------------------------------


def test_latency_chart_svg_has_axes_knee_and_slo(db: Path) -> None:
    charts = {c.id: c for c in render_charts(_guide(db), only=["latency", "latency-cpu"])}
    svg = charts["latency"].svg
    assert svg.startswith("<svg")
    for text in (
        "Offered rate (requests/s)",
        "Latency (ms), logarithmic scale",
        "knee",
        "SLO: p95 ≤ 10 ms",
        "Bare metal, 1 core",
        "Hypervisor, 1 core",
    ):
        assert text in svg, text
    cpu = charts["latency-cpu"]
    assert "Server CPU busy (% of nginx" in cpu.svg and "Offered rate (requests/s)" in cpu.svg
    assert "1 core" in cpu.title
    assert "Bare metal, 2 cores" not in cpu.svg  # one core only


def test_latency_chart_linear_when_the_range_is_narrow(tmp_path: Path) -> None:
    path = tmp_path / "sizing.sqlite"
    with Store(path) as store:
        run_id = store.start_run(
            inventory="lab.yml", argv=["sizing"], tool_version="0.1.0", options={}
        )
        store.add_point(run_id, *latency_result("baremetal", 2, FIXTURE_BM2))
    (chart,) = render_charts(_guide(path), only=["latency"])
    assert "Latency (ms)" in chart.svg and "logarithmic" not in chart.svg
    assert "SLO" not in chart.svg


def test_markdown_and_html_carry_the_tables(db: Path) -> None:
    g = _guide(db)
    md = render_markdown(g)
    assert "## 4. Latency under steady load" in md and "## 5. Methodology" in md
    assert "| 1,000 | 999 | 0.31 ^m^ | 0.28 ^m^ | 0.42 ^m^ |" in md
    assert "Soak repetitions with jumps: Hypervisor, 1 core" in md
    assert "<svg" not in md
    charts = render_charts(g)
    html = render_html(g, charts)
    assert 'id="latency"' in html and 'id="fig-latency"' in html
    assert 'id="fig-latency-cpu"' in html
    assert '<span class="num">5</span>Latency under steady load' in html
    assert '<span class="num">6</span>Methodology' in html


def test_chart_data_carries_the_curve_knee_and_slo() -> None:
    from sizing.report.data.latency import latency_chart_data
    from tests.unit.test_engine_slo import CURVE, latency_point

    p = latency_point(
        2,
        CURVE,
        knee_rate=3000.0,
        slo="p95=10ms",
        slo_search={"capacity": 3420.0},
        soak_jumps={"3000": [17]},
    )
    (series,) = latency_chart_data([(4, p)])
    assert series.rates == (1000.0, 2000.0, 3000.0, 4000.0)
    assert series.p95_ms[-1] == 40.0 and series.mean_ms[0] == 1.0
    assert series.knee_rate == 3000.0 and series.slo_capacity == 3420.0
    assert series.platform == "baremetal" and series.cores == 2
    assert series.soak_jumps == {"3000": (17,)}
