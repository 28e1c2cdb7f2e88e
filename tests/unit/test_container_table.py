"""The measured container leg in `sizing table`, `results --bases` and `recommend`: its own
basis and series, never pooled with bare metal, never called Kubernetes. The lab's
figures are simulated (tests/labdb.py), its guests re-labelled as containers."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner

from sizing.cli import app
from sizing.records import PointMeta
from sizing.records.window import CpuWindow
from sizing.report.data.format import CONTAINER_NOTE
from sizing.store import Store
from tests.labdb import environment, lab_points, store_run

runner = CliRunner()


def _container_lab(db: Path) -> None:
    """r640-01's bare metal and a container on it (the lab's ESXi guest, re-labelled)."""
    points = []
    for r, samples in lab_points(hosts=1, ht=("off",)):
        if r.key.platform == "vsphere":
            meta = r.metadata.to_json()
            meta["platform_settings"] = {"container_host": "r640-01", "cpuset_cpus": "0"}
            key = replace(r.key, host="nginx-ctr1", platform="container")
            r = replace(r, key=key, metadata=PointMeta.parse(meta))
        points.append((r, samples))
    env = environment(1)
    env["nginx-ctr1"] = {k: v for k, v in env.pop("nginx-esxi1").items() if k != "hypervisor"}
    with Store(db) as store:
        store_run(
            store,
            points,
            env,
            inventory="lab",
            argv=["sizing", "run"],
            tool_version="0",
            options={},
        )


def test_container_bases_tables_and_answers_are_their_own(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    _container_lab(db)
    bases = runner.invoke(app, ["results", "--bases", "--db", str(db)])
    assert bases.exit_code == 0, bases.output
    assert "nginx-ctr1/container/" in bases.output and "r640-01/baremetal/" in bases.output
    table = runner.invoke(app, ["table", "--db", str(db)], env={"COLUMNS": "100"})
    assert table.exit_code == 0, table.output
    assert "RPS container HT off" in table.output and "RPS baremetal HT off" in table.output
    flat = " ".join(table.output.split())
    assert CONTAINER_NOTE in flat
    # the measured container beside the article's Kubernetes table, each labelled
    beside = runner.invoke(
        app,
        ["table", "--basis", "nginx-ctr1,reference/kubernetes", "--db", str(db)],
        env={"COLUMNS": "100"},
    )
    assert beside.exit_code == 0, beside.output
    assert "RPS container HT off" in beside.output and "RPS kubernetes HT off" in beside.output
    assert "NGINX Ingress Controller" in beside.output
    assert CONTAINER_NOTE in " ".join(beside.output.split())
    answer = runner.invoke(
        app,
        [
            "recommend",
            "--rps",
            "100000",
            "--platform",
            "container",
            "--article-prices",
            "--db",
            str(db),
        ],
    )
    assert answer.exit_code == 0, answer.output
    flat = " ".join(answer.output.split())
    assert "Sized on nginx-ctr1/container/" in flat
    assert "passed over: r640-01/baremetal/static-128b (has no container RPS figures)" in flat
    assert "kubernetes" not in flat.split("Sized on")[1].split("Cost:")[0].lower()


def test_a_container_leg_is_answered_only_when_asked(tmp_path: Path) -> None:
    """Ask, do not switch: with no measured bare metal that qualifies, the default answer
    is the article's bare metal, not the container (another architecture, as Kubernetes
    is), with the reason; ``--platform container`` sizes on it; the table still shows it."""
    db = tmp_path / "r.sqlite"
    only_container = []
    for r, samples in lab_points(hosts=1, ht=("off",)):
        if r.key.platform != "vsphere":
            continue
        meta = r.metadata.to_json()
        meta["platform_settings"] = {"container_host": "r640-01", "cpuset_cpus": "0"}
        key = replace(r.key, host="nginx-ctr1", platform="container")
        only_container.append((replace(r, key=key, metadata=PointMeta.parse(meta)), samples))
    env = environment(1)
    env["nginx-ctr1"] = {k: v for k, v in env.pop("nginx-esxi1").items() if k != "hypervisor"}
    with Store(db) as store:
        store_run(
            store,
            only_container,
            env,
            inventory="lab",
            argv=["sizing", "run"],
            tool_version="0",
            options={},
        )
    default = runner.invoke(app, ["recommend", "--rps", "100000", "--db", str(db)])
    assert default.exit_code == 0, default.output
    flat = " ".join(default.output.split())
    assert "Sized on reference/baremetal" in flat, flat
    assert "a container leg: sized only when asked (--platform container)" in flat
    asked = runner.invoke(
        app,
        [
            "recommend",
            "--rps",
            "100000",
            "--platform",
            "container",
            "--article-prices",
            "--db",
            str(db),
        ],
    )
    assert asked.exit_code == 0, asked.output
    assert "Sized on nginx-ctr1/container/" in " ".join(asked.output.split())
    table = runner.invoke(app, ["table", "--db", str(db)], env={"COLUMNS": "100"})
    assert table.exit_code == 0, table.output
    assert "RPS container HT off" in table.output and "RPS kubernetes HT off" in table.output


def test_the_guide_of_a_static_file_container_run_draws_its_cpu_chart(tmp_path: Path) -> None:
    """A run of the static-file profiles only (the container example's): every figure is
    charted by what it sizes (RPS or TPS, from its unit), and the container's as a
    container, not a hypervisor's guest (this crashed the guide: no 'rps' profile)."""
    from sizing.report.data.runs import cpu_points
    from sizing.sources import read_runs

    db = tmp_path / "r.sqlite"
    points = []
    for r, samples in lab_points(hosts=1, ht=("off",), reps=3, cores=(1, 2)):
        name = {"rps": "static-rps", "tps": "static-tps"}[r.key.profile]
        if r.key.platform == "vsphere":
            r = replace(r, key=replace(r.key, host="nginx-ctr1", platform="container"))
        busy = CpuWindow(busy=97.0)  # what a run stores of the server's CPUs, per window
        samples = [
            (i, replace(x, metadata=replace(x.metadata, server_cpu=busy))) for i, x in samples
        ]
        points.append((replace(r, key=replace(r.key, profile=name)), samples))
    env = environment(1)
    env["nginx-ctr1"] = {k: v for k, v in env.pop("nginx-esxi1").items() if k != "hypervisor"}
    with Store(db) as store:
        store_run(
            store,
            points,
            env,
            inventory="lab",
            argv=["sizing", "run"],
            tool_version="0",
            options={},
        )
    charted = cpu_points(read_runs(db, []))
    assert {c.profile for c in charted} == {"rps", "tps"}
    assert {c.platform for c in charted} == {"baremetal", "container"}
    out = tmp_path / "g.pdf"
    guide = runner.invoke(app, ["guide", "--db", str(db), "--out", str(out)])
    assert guide.exit_code == 0, guide.output
    assert out.stat().st_size > 10_000


def test_a_guide_on_measured_and_published_bases_says_which_is_which(tmp_path: Path) -> None:
    """``--basis <container>,reference/kubernetes``: the summary says what was measured on
    which host, and that the Kubernetes figures are published, not measured there."""
    db = tmp_path / "r.sqlite"
    _container_lab(db)
    out = tmp_path / "g.md"
    got = runner.invoke(
        app,
        ["guide", "--db", str(db), "--basis", "nginx-ctr1,reference/kubernetes", "--out", str(out)],
    )
    assert got.exit_code == 0, got.output
    text = " ".join(out.read_text().split())
    assert "Sized on figures measured with sizing on nginx-ctr1: Container;" in text, text[:2000]
    assert "Beside them, the published reference data" in text
    assert "not measured on your hardware: Kubernetes" in text


def test_a_containers_overhead_is_a_column_of_the_table_and_a_row_of_the_guide(
    tmp_path: Path,
) -> None:
    """The container is one more guest kind (sizing.engine.overhead): its overhead against
    its own host's bare metal is in ``sizing table`` (figure, interval, unpaired), in the
    table's ``--json`` and in the guide's overhead table and headlines, labelled as the
    container's (never as a hypervisor's), with the figure ``sizing results`` shows."""
    db = tmp_path / "r.sqlite"
    _container_lab(db)
    table = runner.invoke(app, ["table", "--db", str(db)], env={"COLUMNS": "100"})
    assert table.exit_code == 0, table.output
    rows = [line for line in table.output.splitlines() if line.lstrip().startswith("1 ")]
    assert "RPS overhead container" in table.output and "TPS overhead container" in table.output
    results = runner.invoke(app, ["results", "--json", "--db", str(db)])
    compared = json.loads(results.output)["runs"][0]["comparisons"]
    one = next(c for c in compared if c["b"] == "nginx-ctr1 container 1c ht=off rps")
    assert one["a"] == "r640-01 baremetal 1c ht=off rps" and not one["paired"]
    shown = f"{one['pct']:.1f}% ["
    assert any(shown in row and row.endswith("unpaired") for row in rows), (shown, rows)
    doc = runner.invoke(app, ["table", "--json", "--db", str(db)])
    cells = [c for b in json.loads(doc.output)["blocks"] for r in b["rows"] for c in r["cells"]]
    assert {c["platform"] for c in cells if c["overhead_pct"] is not None} == {"container"}
    out = tmp_path / "g.md"
    basis = "r640-01/baremetal/static-128b,nginx-ctr1/container/static-128b"
    guide = runner.invoke(
        app, ["guide", "--article-prices", "--db", str(db), "--basis", basis, "--out", str(out)]
    )
    assert guide.exit_code == 0, guide.output
    text = out.read_text()
    assert f"| RPS (container) | off | 1 | {one['pct']:.1f}%" in text
    assert "Container overhead, RPS" in text and "Virtualization overhead, RPS" not in text
