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
