"""The latency curve a run prints and carries in --json (sizing.report.render.run_text)."""

from __future__ import annotations

from dataclasses import replace

from sizing.records import PointMeta
from sizing.report.render.run_text import latency_curve_json, latency_curve_text

META = PointMeta.parse(
    {
        "generator": "oha",
        "knee_interval": [40000.0, 80000.0],
        "knee_rate": 40000.0,
        "knee_factor": 3.0,
        "knee_limit_ms": 5.0,
        "knee_busy": "at 80,000 requests/s, the first rate past it, the server's CPUs were "
        "100% busy and the busiest client's 55%",
        "curve": [
            {
                "rate": r,
                "achieved": a,
                "mean_ms": m,
                "p50_ms": m,
                "p95_ms": p,
                "p99_ms": p * 2,
                "max_ms": p * 3,
                "error_ratio": 0.0,
                "server_busy": cpu,
                "client_busy": 55.0,
            }
            for r, a, m, p, cpu in [
                (1000.0, 1000.0, 0.2, 0.4, 2.0),
                (40000.0, 39990.0, 0.3, 0.9, 40.0),
                (80000.0, 71000.0, 80.0, 400.0, 100.0),
            ]
        ],
    }
)


def test_the_curve_marks_the_knee_and_its_interval() -> None:
    text = latency_curve_text("localhost 1 core(s) HT off latency", META)
    lines = text.splitlines()
    assert lines[0].startswith("localhost 1 core(s) HT off latency: latency against offered")
    assert "offered/s" in lines[1] and "p95 ms" in lines[1] and "srv CPU" in lines[1]
    assert lines[1].endswith("cli CPU")
    assert lines[3].startswith("    40,000") and lines[3].endswith("<- knee")
    assert lines[4].endswith("100%     55%  <- first bad")
    assert lines[5].startswith("knee: between 40,000 and 80,000 requests/s (p95 above 5.00 ms")
    assert "\nAt 80,000 requests/s, the first rate past it, the server's CPUs" in text
    assert max(len(line) for line in lines) <= 100


def test_json_carries_the_same_curve_and_says_why_there_is_no_knee() -> None:
    doc = latency_curve_json(META)
    assert [r["mark"] for r in doc["curve"]] == ["", "knee", "first-bad"]
    assert doc["curve"][2]["p95_ms"] == 400.0 and doc["knee_interval"] == [40000.0, 80000.0]
    flat = replace(
        META,
        latency=replace(
            META.latency,
            knee_interval=None,
            knee_rate=None,
            knee_busy=None,
            knee_reason="no knee up to 60,000 requests/s, the most the clients can offer",
        ),
    )
    assert latency_curve_text("x", flat).splitlines()[-1] == (
        "no knee: no knee up to 60,000 requests/s, the most the clients can offer"
    )
