"""Run comparison, bare-metal/hypervisor pairing and the overhead interval."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.engine.compare import environment_diff, figure_diff, paired
from sizing.engine.overhead import figure_overhead
from sizing.model import Figure, PointKey, PointResult, Status
from sizing.records import PointMeta, hosts_of
from sizing.store import Store

runner = CliRunner()


def point(platform: str, value: float, lo: float, hi: float, cores: int = 1) -> PointResult:
    return PointResult(
        PointKey("h", platform, cores, "off", "rps"),
        Status.MEASURED,
        value=value,
        unit="requests/s",
        repetitions=3,
        ci_low=lo,
        ci_high=hi,
    )


def test_pairs_and_overhead_interval() -> None:
    pts = [
        point("baremetal", 100.0, 98.0, 102.0),
        point("libvirt", 80.0, 79.0, 81.0),
        point("baremetal", 190.0, 180.0, 200.0, cores=2),
    ]
    (pair,) = paired(pts)
    assert pair.overhead_pct == pytest.approx(20.0)
    lo, hi = pair.overhead_ci or (0, 0)
    assert lo == pytest.approx((1 - 81 / 98) * 100) and hi == pytest.approx((1 - 79 / 102) * 100)
    assert lo < 20.0 < hi


def test_engine_overhead_interval_only_for_measured_pairs() -> None:
    bm = Figure(
        "baremetal", 1, "off", "rps", 100.0, "requests/s", "measured", ci_low=98, ci_high=102
    )
    hv = Figure(
        "hypervisor", 1, "off", "rps", 80.0, "requests/s", "measured", ci_low=79, ci_high=81
    )
    got = figure_overhead(bm, hv)
    assert got is not None and got.pct == pytest.approx(20.0)
    assert got.interval == pytest.approx(((1 - 81 / 98) * 100, (1 - 79 / 102) * 100))
    ref = Figure("hypervisor", 1, "off", "rps", 80.0, "requests/s", "reference")
    assert figure_overhead(bm, ref) is None


def test_environment_and_figure_diff() -> None:
    a = {"web": {"kernel": "6.1", "nginx_version": "1.22.1", "time": 1.0}}
    b = {"web": {"kernel": "6.12", "nginx_version": "1.22.1", "time": 2.0}, "c2": {}}
    diffs = {(d.host, d.key): (d.a, d.b) for d in environment_diff(hosts_of(a), hosts_of(b))}
    assert diffs == {("web", "kernel"): ("6.1", "6.12"), ("c2", "(host)"): ("absent", "present")}
    (f,) = figure_diff([point("baremetal", 100.0, 99, 101)], [point("baremetal", 110.0, 108, 112)])
    assert f.change == pytest.approx(0.10) and f.overlapping is False


def measured_by(tool: str | None, version: str | None, host: str = "h") -> PointResult:
    meta = PointMeta.parse({"tool": tool, "tool_version": version})
    p = point("baremetal", 100.0, 99, 101)
    return replace(p, key=replace(p.key, host=host), metadata=meta)


def test_the_generators_version_is_compared_per_point_never_per_host() -> None:
    """Two runs of one host whose points were measured by different generator versions
    differ in their ``generator``; the hosts' own facts hold no generator's version."""
    hosts = hosts_of({"h": {"kernel": "6.1"}, "g": {"kernel": "6.1"}})
    a = [measured_by("wrk", "4.1.0"), measured_by("wrk", "4.2.0", "g")]
    b = [measured_by("wrk", "4.2.0"), measured_by("wrk", "4.2.0", "g")]
    diffs = [(d.host, d.key, d.a, d.b) for d in environment_diff(hosts, hosts, (a, b))]
    assert diffs == [("h", "generator", "wrk 4.1.0", "wrk 4.2.0")]
    assert environment_diff(hosts, hosts, (a, a)) == []
    # a host measured in one run only is not a generator's difference (figure_diff has it)
    assert environment_diff(hosts, hosts, (a[:1], b[1:])) == []
    assert measured_by(None, "4.1.0").metadata.env.measured_by is None
    assert measured_by("vegeta", None).metadata.env.measured_by == "vegeta"


def test_results_shows_pairs_and_compare(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        for env_kernel in ("6.1", "6.12"):
            run_id = store.start_run(inventory="i", argv=[], tool_version="t", options={})
            store.set_environment(run_id, {"web": {"kernel": env_kernel}})
            store.add_point(run_id, point("baremetal", 100.0, 98.0, 102.0), [])
            store.add_point(run_id, point("vsphere", 90.0, 89.0, 91.0), [])
            store.finish_run(run_id, "complete")
    out = runner.invoke(app, ["results", "--db", str(db)]).stdout
    assert "bare metal vs hypervisor" in out and "10.0% [" in out
    cmp = runner.invoke(app, ["results", "--db", str(db), "--compare", "1", "2"])
    assert cmp.exit_code == 0, cmp.output
    assert "kernel" in cmp.stdout and "6.12" in cmp.stdout


def test_run_platform_filter_rejects_unknown() -> None:
    result = runner.invoke(app, ["run", "--platform", "xen"])
    assert result.exit_code == 2
    assert "--platform: 'xen' is not one of" in result.stderr
