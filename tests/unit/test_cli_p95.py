"""``sizing recommend --rps N --p95 X`` sizes from ONE latency workload (``--basis``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.model import PointKey, PointResult, Status
from sizing.records import PointMeta
from sizing.store import Store

runner = CliRunner()


def latency(
    profile: str, cores: int, curve: list[tuple[float, float]], **meta: object
) -> PointResult:
    return PointResult(
        PointKey("lab1", "baremetal", cores, "off", profile),
        Status.MEASURED,
        value=1.0,
        unit="requests/s",
        metadata=PointMeta.parse(
            {
                "mode": "fixed-rate",
                **meta,
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
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "sizing.sqlite"
    monkeypatch.setenv("SIZING_DB", str(path))
    with Store(path) as store:
        run_id = store.start_run(inventory="t", argv=["sizing"], tool_version="0", options={})
        for cores in (1, 2):
            store.add_point(
                run_id,
                latency(
                    "latency",
                    cores,
                    [(1000.0, 2.0), (2000.0 * cores, 4.0), (9000.0, 90.0)],
                    role="proxy",
                    scheme="https",
                    file_size=1024,
                ),
                [],
            )
            store.add_point(
                run_id,
                latency(
                    "latency-http",
                    cores,
                    [(1000.0, 1.0), (60000.0, 2.0)],
                    role="web",
                    scheme="http",
                    file_size=1024,
                ),
                [],
            )
        store.finish_run(run_id, "complete")
    return path


def test_several_latency_workloads_need_basis(db: Path) -> None:
    res = runner.invoke(app, ["recommend", "--rps", "3000", "--p95", "10ms"])
    assert res.exit_code != 0
    assert (
        "choose one with --basis: latency-http/web/http/1024B, latency/proxy/https/1024B"
        in res.stderr
    )


def _note(stderr: str, start: str) -> str:
    """The note that starts with ``start``, its wrapped lines (indented) joined."""
    text = " ".join(x.strip() if x.startswith(" ") else "\n" + x for x in stderr.splitlines())
    return next(x for x in text.splitlines() if x.startswith(start))


def test_basis_names_the_workload_and_lower_bounds_are_said(db: Path) -> None:
    res = runner.invoke(
        app,
        [
            "recommend",
            "--rps",
            "3000",
            "--p95",
            "10ms",
            "--article-prices",
            "--basis",
            "latency/proxy",
        ],
    )
    assert res.exit_code == 0, res.stderr
    line = _note(res.stderr, "sizing RPS as")
    assert "of latency workload latency/proxy/https/1024B" in line
    assert "baremetal 1c HT off 2,000/s" in line and "lower bound" not in line
    res = runner.invoke(
        app,
        [
            "recommend",
            "--rps",
            "3000",
            "--p95",
            "10ms",
            "--article-prices",
            "--basis",
            "latency-http",
        ],
    )
    assert res.exit_code == 0, res.stderr
    line = _note(res.stderr, "sizing RPS as")
    assert ">= 60,000/s" in line and "only a lower bound: no knee reached" in line
    bad = runner.invoke(app, ["recommend", "--rps", "3000", "--p95", "10ms", "--basis", "x"])
    assert bad.exit_code != 0 and "names no latency workload" in bad.stderr


def test_p95_names_one_basis_and_says_what_capacity_means(db: Path) -> None:
    res = runner.invoke(
        app,
        [
            "recommend",
            "--rps",
            "3000",
            "--p95",
            "10ms",
            "--article-prices",
            "--basis",
            "latency/proxy",
        ],
    )
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    basis = [x for x in lines if x.startswith(("Basis:", "Sized on"))]
    assert basis and all("latency/proxy/https/1024B" in x for x in basis)  # no contradiction
    flat = " ".join(res.stdout.split())  # wrapped to 100 columns
    assert "of the rate at which p95 stays within 10 ms" in flat
    assert "of their CPU" not in flat


def test_p95_with_tps_or_reference_only_is_refused_in_one_line(db: Path) -> None:
    res = runner.invoke(app, ["recommend", "--rps", "3000", "--tps", "10", "--p95", "10ms"])
    assert res.exit_code == 2 and "size --tps in a second command" in res.stderr
    res = runner.invoke(
        app,
        [
            "recommend",
            "--rps",
            "3000",
            "--p95",
            "10ms",
            "--source",
            "reference",
            "--db",
            "/nonexistent/never-read.sqlite",
        ],
    )
    assert res.exit_code == 2 and "the reference data has none" in res.stderr


def test_p95_sizes_a_latency_workload_of_the_role_asked(db: Path) -> None:
    """The latency workload's role (its id's second part) against --role: the same is
    named, another refused in one line, or flagged with --allow-other-workload."""
    base = ["recommend", "--rps", "3000", "--p95", "10ms", "--article-prices"]
    base += ["--basis", "latency/proxy"]
    res = runner.invoke(app, [*base, "--role", "proxy"])
    assert res.exit_code == 0, res.stderr
    assert "workload: reverse proxy (proxy), as asked with --role" in " ".join(res.stdout.split())
    res = runner.invoke(app, [*base, "--role", "api-jwt"])
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "latency workload latency/proxy/https/1024B is not API gateway" in res.stderr
    res = runner.invoke(app, [*base, "--role", "api-jwt", "--allow-other-workload"])
    assert res.exit_code == 0, res.stderr
    flat = " ".join(res.stdout.split())
    assert "OTHER WORKLOAD" in flat and "this fleet is too small" in flat
