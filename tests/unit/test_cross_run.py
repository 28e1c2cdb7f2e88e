"""Overhead across runs (issue 40): bare metal and an ESXi guest of the same physical host
measured in two runs still compare, unpaired and said so, in ``results`` and
``results --compare``."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.engine.compare import pair_across_runs
from sizing.model import PointKey, PointResult, Status
from sizing.records import PointMeta
from tests.unit.test_sources import ENV, XEON, fill, point

runner = CliRunner()
GOLD = "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"


def result(
    host: str,
    platform: str,
    value: float,
    lo: float,
    hi: float,
    *,
    esxi_host: str = "r640-01",
    cpu: str = GOLD,
) -> PointResult:
    settings = {"hypervisor": "vsphere", "esxi_host": esxi_host} if platform == "vsphere" else {}
    return PointResult(
        PointKey(host, platform, 1, "off", "rps"),
        Status.MEASURED,
        value=value,
        unit="requests/s",
        repetitions=10,
        ci_low=lo,
        ci_high=hi,
        metadata=PointMeta.parse(
            {"cpu_model": cpu, "file_size": 128, "platform_settings": settings}
        ),
    )


def test_a_guest_of_another_run_pairs_with_its_hosts_bare_metal_unpaired() -> None:
    bm = result("r640-01", "baremetal", 100.0, 98.0, 102.0)
    vm = result("nginx-esxi1", "vsphere", 90.0, 89.0, 91.0)
    (pair,) = pair_across_runs({1: [bm], 2: [vm]})
    assert pair.runs == (1, 2) and not pair.paired
    assert pair.overhead_pct == pytest.approx(10.0)
    lo, hi = pair.overhead_ci or (0.0, 0.0)  # from the legs' intervals' ends
    assert lo == pytest.approx((1 - 91 / 98) * 100) and hi == pytest.approx((1 - 89 / 102) * 100)


def test_only_its_own_host_same_cpu_and_never_when_its_own_run_has_the_bare_metal() -> None:
    bm = result("r640-01", "baremetal", 100.0, 98.0, 102.0)
    vm = result("nginx-esxi1", "vsphere", 90.0, 89.0, 91.0)
    assert pair_across_runs({1: [bm, vm]}) == []  # one run: pair_points pairs them
    other = result("nginx-esxi2", "vsphere", 90.0, 89.0, 91.0, esxi_host="r640-02")
    assert pair_across_runs({1: [bm], 2: [other]}) == []
    newer_cpu = result("nginx-esxi1", "vsphere", 90.0, 89.0, 91.0, cpu=XEON)
    assert pair_across_runs({1: [bm], 2: [newer_cpu]}) == []
    newest = result("r640-01", "baremetal", 104.0, 103.0, 105.0)
    (pair,) = pair_across_runs({1: [bm], 2: [vm], 3: [newest]})
    assert pair.runs == (3, 2)  # the newest run that measured that bare metal


def lab(db: Path, split: bool = True) -> None:
    """The issue's lab in two runs: r640-01 bare metal, then its ESXi guest (vm1 here, the
    shared fixtures' guest of the same CPU)."""
    rng = random.Random(40)
    env: dict[str, Any] = {"r640-01": ENV["r640-01"]}

    def legs(host: str, platform: str, k: float, **extra: Any) -> list[Any]:
        return [
            point(
                host,
                platform,
                cores,
                "rps",
                [k * 40_000 * cores * math.exp(rng.gauss(0, 0.02)) for _ in range(10)],
                **extra,
            )
            for cores in (1, 2, 4, 8)
        ]

    bare = legs("r640-01", "baremetal", 1.0)
    guest = {"platform_settings": {"hypervisor": "vsphere", "esxi_host": "r640-01"}}
    vm = legs("vm1", "vsphere", 0.92, **guest)
    vm_env = {"vm1": {**ENV["vm1"], "hypervisor": "vmware"}}
    if split:
        fill(db, env, bare)
        fill(db, vm_env, vm)
    else:
        fill(db, {**env, **vm_env}, bare + vm)


def test_results_and_compare_show_the_overhead_across_runs(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    lab(db)
    text = runner.invoke(app, ["results", "--db", str(db)])
    assert text.exit_code == 0, text.stderr
    assert "bare metal vs hypervisor across runs (unpaired" in text.stdout
    assert "runs 1/2" in text.stdout
    doc = json.loads(runner.invoke(app, ["results", "--db", str(db), "--json"]).stdout)
    over = [c for r in doc["runs"] for c in r["comparisons"] if c["kind"] == "virtualization"]
    assert len(over) == 4 and all(c["runs"] == [1, 2] and not c["paired"] for c in over)
    assert all(c["low_pct"] < c["pct"] < c["high_pct"] for c in over)
    cmp = runner.invoke(app, ["results", "--db", str(db), "--compare", "1", "2"])
    assert cmp.exit_code == 0, cmp.stderr
    assert "across runs" in cmp.stdout and "8c ht=off rps" in cmp.stdout
    cmp_doc = json.loads(
        runner.invoke(app, ["results", "--db", str(db), "--compare", "1", "2", "--json"]).stdout
    )
    assert [c["runs"] for c in cmp_doc["overhead_across_runs"]] == [[1, 2]] * 4


def test_table_says_when_its_overheads_compare_runs(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    lab(db)
    res = runner.invoke(app, ["table", "--db", str(db)])
    assert res.exit_code == 0, res.stderr
    flat = " ".join(res.stdout.split())
    assert "bare metal from run 1, guests from run 2: overheads across runs, unpaired" in flat
    assert "overhead" in flat and "unpaired" in flat
    one = tmp_path / "one.sqlite"
    lab(one, split=False)
    res = runner.invoke(app, ["table", "--db", str(one)])
    assert res.exit_code == 0, res.stderr
    assert "overhead" in res.stdout and "across runs" not in res.stdout
