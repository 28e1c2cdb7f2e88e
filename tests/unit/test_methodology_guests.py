"""The guide's methodology as a customer's engineer checks it (issue 40): the ESXi version
and the VM's settings, the guest's vCPUs per point, HT on each pinning line, only the
interval methods used, and a cover that names only the sources used."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from sizing.cli import app
from sizing.model import PointKey, PointResult, Sample, Status
from sizing.records import PointMeta, SampleMeta
from tests.unit.test_sources import ENV, facts, fill, lscpu

runner = CliRunner()
GOLD = "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"


def cpus(cores: int, ht: str) -> list[int]:
    """r640-01's CPUs for a point: core i and, with HT on, its sibling i + 40."""
    return [c for i in range(cores) for c in ((i, i + 40) if ht == "on" else (i,))]


def guest(cores: int, ht: str) -> dict[str, Any]:
    """What the vSphere backend records for a point of nginx-esxi1 on r640-01."""
    n = len(cpus(cores, ht))
    return {
        "cpu_model": GOLD,
        "server_cpus": ",".join(str(i) for i in range(n)),
        "client_cpus": {"client1": "20-39"},
        "platform_settings": {
            "hypervisor": "vsphere",
            "esxi_host": "r640-01",
            "vm": "nginx-esxi1",
            "vcpus": n,
            "esxi_version": "VMware ESXi 8.0.2 build-22380479",
            "host_cpus": cpus(cores, ht),
            "readback": {
                "numCPUs": n,
                "numCoresPerSocket": n,
                "cpuAffinity": cpus(cores, ht),
                "latencySensitivity": "high",
                "cpuReservationMhz": 2500 * n,
                "memoryReservationLockedToMax": True,
                "memoryReservationMb": 8192,
            },
        },
    }


def stored(key: PointKey, values: list[float], meta: dict[str, Any]) -> tuple[Any, Any]:
    """A point as the sweep stores it: its median and its timed repetitions' samples."""
    samples = [
        (i, Sample("requests_per_second", v, "requests/s", SampleMeta.parse({"repetition": i})))
        for i, v in enumerate(values, start=1)
    ]
    ordered = sorted(values)
    median = (ordered[4] + ordered[5]) / 2
    meta = {"file_size": 128, "keepalive": True, "nginx_version": "1.22.1", **meta}
    return PointResult(
        key,
        Status.MEASURED,
        value=median,
        unit="requests/s",
        repetitions=len(values),
        metadata=PointMeta.parse(meta),
    ), samples


def lab(db: Path) -> None:
    """One run: r640-01 bare metal and its ESXi guest, rps at 1/2/4/8 cores, HT off and
    on, 10 repetitions at about 2% noise."""
    rng = random.Random(40)
    pts = []
    for cores in (1, 2, 4, 8):
        for ht in ("off", "on"):
            for host, k in (("r640-01", 1.0), ("nginx-esxi1", 0.92)):
                values = [k * 40_000 * cores * math.exp(rng.gauss(0, 0.02)) for _ in range(10)]
                extra = (
                    guest(cores, ht)
                    if host == "nginx-esxi1"
                    else {
                        "cpu_model": GOLD,
                        "server_cpus": ",".join(map(str, cpus(cores, ht))),
                        "client_cpus": {"client1": "20-39"},
                    }
                )
                platform = "vsphere" if host == "nginx-esxi1" else "baremetal"
                pts.append(stored(PointKey(host, platform, cores, ht, "rps"), values, extra))
    env = {
        "r640-01": facts(GOLD, lscpu(2, 20, 2), smt_control="on"),
        "nginx-esxi1": facts(GOLD, lscpu(1, 8, 1), smt_control="notsupported", hypervisor="vmware"),
        "client1": ENV["r640-02"],
    }
    fill(db, env, pts)


def guide(db: Path, fmt: str) -> str:
    out = db.parent / f"guide.{fmt}"
    res = runner.invoke(app, ["guide", "--db", str(db), "--format", fmt, "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    return " ".join(out.read_text().split())


def test_methodology_shows_the_hypervisor_the_vm_and_each_points_vcpus(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    lab(db)
    md = guide(db, "md")
    assert "VMware ESXi 8.0.2 build-22380479 on r640-01" in md
    assert "latency sensitivity high; CPU reservation 2,500 MHz per vCPU" in md
    assert "memory reservation 8,192 MB, locked to the VM's memory" in md
    assert "1 core, HT on: 2 vCPUs on host CPU 0,40" in md
    assert "8 cores, HT on: 16 vCPUs on host CPU 0,40,1,41" in md
    assert "notsupported inside the guest" in md and "when the run began" in md
    # each pinning line says its HT mode; a guest's vCPUs with the host CPUs under them
    assert "r640-01, 1 core, HT off: nginx on CPU 0," in md
    assert "r640-01, 1 core, HT on: nginx on CPU 0,40," in md
    assert "nginx-esxi1, 1 core, HT on: nginx on vCPU 0,1 (host CPU 0,40)" in md
    # only the interval actually used, and the drift rule
    assert "Student-t" not in md
    assert "interval of the median of 10 runs, 97.9%" in md
    assert "false-discovery rate (Benjamini-Hochberg)" in md


def test_the_cover_names_only_the_sources_used(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    lab(db)
    assert "from the results store. Every figure" in guide(db, "html")
    res = runner.invoke(
        app,
        [
            "guide",
            "--db",
            str(db),
            "--source",
            "reference",
            "--format",
            "html",
            "--out",
            str(tmp_path / "ref.html"),
        ],
    )
    assert res.exit_code == 0, res.stderr
    text = " ".join((tmp_path / "ref.html").read_text().split())
    assert "from the bundled reference data. Every figure" in text
