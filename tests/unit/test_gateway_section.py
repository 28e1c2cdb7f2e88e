"""The guide's gateway section: the CPU curve of a gateway fixed-rate point (pure)."""

from __future__ import annotations

from pathlib import Path

from sizing.model import PointKey, PointResult, RunStatus, Status
from sizing.records import PointMeta
from sizing.report.data.gateway import gateway_section
from sizing.sources import read_runs
from sizing.store import Store

CURVE = [  # as stored: every field of a LatencyPoint
    {
        "rate": rate,
        "achieved": got,
        "server_busy": busy,
        "p95_ms": p95,
        "mean_ms": p95 / 2,
        "p50_ms": p95 / 2,
        "p99_ms": p95 * 2,
        "max_ms": p95 * 4,
    }
    for rate, got, busy, p95 in (
        (1000.0, 1000.0, 15.9, 0.36),
        (3000.0, 3000.0, 39.3, 0.75),
        (5000.0, 4999.0, 51.4, 1.48),
    )
]


def _point(profile: str, cpu_curve: bool) -> PointResult:
    meta = {
        "mode": "fixed-rate",
        "role": "api-jwt",
        "cpu_curve": cpu_curve,
        "curve": CURVE,
        "url": "http://127.0.0.1:8080/api/1k",
        "duration_s": 3.0,
    }
    key = PointKey("localhost", "baremetal", 1, "off", profile)
    return PointResult(
        key, Status.MEASURED, "", value=3000.0, unit="calls/s", metadata=PointMeta.parse(meta)
    )


def test_gateway_section_tables_the_cpu_curve_and_leaves_latency_points(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        run = store.start_run(inventory="inv.yml", argv=(), tool_version="t", options={})
        store.add_point(run, _point("api-jwt-cpu", True), [])
        store.add_point(run, _point("latency", False), [])
        store.finish_run(run, RunStatus.COMPLETE, "")
    section = gateway_section(read_runs(db, []))
    assert section is not None and len(section.series) == 1
    s = section.series[0]
    assert s.label == "API gateway with HS256 JWT (njs), Bare metal, 1 core"
    assert s.rates == (1000.0, 3000.0, 5000.0) and s.server_busy == (15.9, 39.3, 51.4)
    (table,) = section.tables
    assert table.headers[2] == "Server CPU busy"
    assert [c.text for c in table.rows[2]] == ["5,000", "4,999", "51.4%", "1.48"]
    assert gateway_section(read_runs(db, [])[:0]) is None


def test_only_the_cpu_curve_profiles_are_cpu_curves() -> None:
    """The latency profiles proxy at fixed rates too, but their figure is latency: their
    points must stay out of the gateway chapter."""
    from sizing import profiles

    curves = {name for name in profiles.available() if profiles.load(name).is_cpu_curve}
    assert curves == {"api-jwt-cpu", "proxy-cpu"}
    assert profiles.load("latency").mode == "fixed-rate" and profiles.load("latency").is_gateway
