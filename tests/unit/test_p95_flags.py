"""``recommend --p95``: a figure's flags travel with it on the latency path (issue 59).

``recommend --rps 50000 --p95 10ms --basis latency/proxy/https/1024B --article-prices``,
without --include-virtualized, sized on a container's latency figure and called it
``baremetal``, with ``flags: []`` in --json (``erratic``, ``drift`` and
``virtualized-host`` dropped). The store here holds what a container's latency sweep
leaves (a ``baremetal`` point flagged ``virtualized-host``), written through the Store
API; its latency curve is invented for the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.model import PointKey, PointResult, Status
from sizing.records import PointMeta
from sizing.store import Store

runner = CliRunner()
ARGV = ["--rps", "50000", "--p95", "10ms", "--basis", "latency/proxy/https/1024B"]


def _point(cores: int, flags: tuple[str, ...]) -> PointResult:
    curve = [(5000.0 * cores, 2.0), (30000.0 * cores, 6.0), (60000.0 * cores, 80.0)]
    return PointResult(
        PointKey("localhost", "baremetal", cores, "off", "latency"),
        Status.MEASURED,
        value=1.0,
        unit="requests/s",
        flags=flags,
        metadata=PointMeta.parse(
            {
                "mode": "fixed-rate",
                "role": "proxy",
                "scheme": "https",
                "file_size": 1024,
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
            }
        ),
    )


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "sizing.sqlite"
    with Store(path) as store:
        run_id = store.start_run(inventory="local", argv=["sizing"], tool_version="0", options={})
        store.add_point(run_id, _point(1, ("virtualized-host", "erratic", "drift")), [])
        store.add_point(run_id, _point(2, ("virtualized-host",)), [])
        store.finish_run(run_id, "complete")
    return path


def test_a_container_latency_figure_is_not_sized_as_bare_metal(db: Path) -> None:
    got = runner.invoke(app, ["recommend", *ARGV, "--article-prices", "--db", str(db)])
    assert got.exit_code != 0
    assert "--include-virtualized" in got.stderr
    assert "Traceback" not in got.output


def test_asked_for_it_is_labelled_and_its_flags_travel(db: Path) -> None:
    argv = ["recommend", *ARGV, "--article-prices", "--include-virtualized", "--db", str(db)]
    got = runner.invoke(app, [*argv, "--json"])
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    for c in [doc["recommendation"], *doc["alternatives"]]:
        assert c["platform"] == "virtualized-host", c
        assert "virtualized-host" in c["flags"]
        assert c["cores_per_server"] != 1 or "erratic" in c["flags"]
    # the erratic 1-core point is refused, never sized on
    assert all(c["cores_per_server"] != 1 for c in [doc["recommendation"], *doc["alternatives"]])
    text = " ".join(runner.invoke(app, argv).stdout.split())
    assert "baremetal" not in text.split("Recommended:")[1].split(")")[0]
    assert "virtualized-host" in text


def test_a_sweep_point_shows_no_interval_of_its_rates(tmp_path: Path) -> None:
    """A fixed-rate sweep's point was shown as "29,344 req/s ±0.0% (96.1%)", flagged
    erratic with no reason: its windows (one per offered rate) were taken for repetitions."""
    from sizing.model import Sample
    from sizing.records import SampleMeta

    path = tmp_path / "sweep.sqlite"
    rates = [5000.0, 10000.0, 15000.0, 20000.0, 25000.0, 29344.0]
    samples = [
        (
            i,
            Sample(
                "requests_per_second",
                r,
                "requests/s",
                SampleMeta.parse({"repetition": i, "warmup": False, "rate": r, "p95_ms": 2.0}),
            ),
        )
        for i, r in enumerate(rates, start=1)
    ]
    point = _point(1, ())
    point = PointResult(
        point.key,
        point.status,
        value=29344.0,
        unit=point.unit,
        repetitions=1,
        metadata=point.metadata,
    )
    with Store(path) as store:
        run_id = store.start_run(inventory="local", argv=["sizing"], tool_version="0", options={})
        store.add_point(run_id, point, samples)
        store.finish_run(run_id, "complete")
    got = runner.invoke(app, ["results", "--db", str(path)])
    assert got.exit_code == 0, got.output
    line = next(x for x in got.stdout.splitlines() if "localhost 1c" in x)
    assert "29,344" in line
    assert "%)" not in line and "±" not in line, line
    assert "erratic" not in line, line
    # nor a trend: the windows rise with the offered rate, as a sweep's do (drift was
    # read from them as if they were repetitions drifting up)
    assert "drift" not in line, line
    doc = json.loads(runner.invoke(app, ["results", "--db", str(path), "--json"]).stdout)
    text = json.dumps(doc)
    assert '"interval_coverage": null' in text or "interval_coverage" not in text
