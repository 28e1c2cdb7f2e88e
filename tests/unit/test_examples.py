"""Issue 62: the files the docs' commands read exist in the repository, are synthetic, and
are what examples/generate.py writes (the demand file as this sizing's `sizing demand`
writes it), so a page's example cannot drift from the file it names."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from sizing.paths import ROOT
from tests.offline import check_offline
from tests.unit.test_docs import ALL

EXAMPLES = ROOT / "examples"


def test_the_example_files_are_what_the_generator_writes() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "generate.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_the_example_logs_hold_no_routable_address() -> None:
    # synthetic: every client address is in RFC 5737's documentation ranges
    for name in ("access.log", "access-rich.log"):
        addrs = {line.split(" ", 1)[0] for line in (EXAMPLES / name).read_text().splitlines()}
        assert addrs and all(re.fullmatch(r"(198\.51\.100|203\.0\.113)\.\d+", a) for a in addrs)


def test_every_file_a_documented_command_names_exists() -> None:
    # a repository path (not .cache/examples/..., which examples/simulated.py writes)
    path = re.compile(r"(?<![\w./])(?:examples|profiles)/[\w./-]+")
    named = {w for e in ALL for w in path.findall(e.command)}
    assert named, "no page names an example file"
    assert sorted(w for w in named if not (ROOT / w).exists()) == []


def test_the_shipped_vcenter_inventory_without_a_vcenter_is_one_line() -> None:
    """docs/inventories.md's ``examples/inventories/vc`` read with no vSphere simulator to
    answer (offline: unshare -n): one line naming the plugin's file, exit 3, no traceback."""
    out = check_offline(
        """
        import os, sys
        os.chdir(sys.argv[1])
        from typer.testing import CliRunner
        from sizing.cli import app
        env = {"VMWARE_USER": "user", "VMWARE_PASSWORD": "pass"}
        res = CliRunner().invoke(app, ["inventory", "check", "examples/inventories/vc"], env=env)
        print(res.exit_code)
        print(res.stderr, end="")
        """,
        str(ROOT),
    )
    code, _, err = out.partition("\n")
    assert code == "3" and err.count("\n") == 1, out
    assert err.startswith(
        "error: examples/inventories/vc/vcenter.vmware.yml: inventory plugin"
        " community.vmware.vmware_vm_inventory: Unknown error while connecting to vCenter"
        " or ESXi API at 127.0.0.1:18989"
    ), err
    assert "Traceback" not in err and "pass" not in err


def test_every_figure_of_the_simulated_stores_says_it_is_simulated(tmp_path: Path) -> None:
    """docs/ceilings.md and docs/engine.md size on examples/simulated.py's stores: no output
    may show one of their figures as a measurement (issue 62). Every point is flagged
    ``simulated``, and the table, the recommendation and its JSON say so of every figure."""
    from typer.testing import CliRunner

    from sizing.cli import app
    from sizing.store import Store
    from tests.unit.test_docs import SIMULATED

    assert SIMULATED.main(["--out", str(tmp_path)]) == 0
    runner = CliRunner()
    for name in SIMULATED.STORES:
        db = tmp_path / f"{name}.sqlite"
        with Store(db) as store:
            points = [p for run in store.runs() for p in store.points(run.id)]
        assert points and all("simulated" in p.result.flags for p in points)
        assert all(p.result.key.host.startswith("simulated-") for p in points)
        argv = ["--db", str(db), "--source", "measured", "--article-prices"]
        table = runner.invoke(app, ["table", *argv, "--allow-extrapolation"])
        assert table.exit_code == 0, table.output
        rows = [x for x in table.stdout.splitlines() if re.match(r"\s+\d+ {2,}\S", x)]
        # every figure of a row is marked simulated (a lab's wide table goes on in panels
        # whose rows may hold only ratios of them: an HT gain, a guest's overhead)
        assert any("simulated" in x for x in rows), table.stdout
        assert not [x for x in rows if re.search(r"\d [a-z]\b(?! \(simulated\b)", x)], table.stdout
        # and its mark is the made-up one, never m (measured), named in the legend
        assert not [x for x in rows if re.search(r"\d m \(", x)], table.stdout
        assert "d made up for an example, not measured" in " ".join(table.stdout.split())
        # its basis is a simulated one, never called measured (table and recommend alike)
        said = table.stdout + table.stderr
        assert "simulated basis" in said and "measured basis" not in said, said
        demand = ["--tps", "3000"] if name != "contended" else ["--rps", "150000"]
        text = runner.invoke(app, ["recommend", *argv, *demand])
        assert "measured basis" not in text.stdout + text.stderr, text.stdout
        # a guest's share of bare metal's figure (the labs' platform comparison) says
        # simulated too, never "measured in separate runs" or "paired measurement"
        flat = " ".join(text.stdout.split())
        assert "measured in separate runs" not in flat and "paired measurement" not in flat
        assert "also measured" not in flat and "measured host" not in flat, flat
        if name in ("lab", "roles-lab"):
            assert "of bare metal's TLS handshakes (simulated, in separate runs" in flat, flat
        rec = runner.invoke(app, ["recommend", *argv, *demand, "--json"])
        assert rec.exit_code == 0, rec.output
        if name == "ceilings":  # the guide's cover and basis line say made up, never measured
            out = tmp_path / f"{name}.md"
            guide = runner.invoke(app, ["guide", *argv, *demand, "--out", str(out)])
            assert guide.exit_code == 0, guide.output
            md = out.read_text()
            assert "**Simulated figures.**" in md and "Measured on your hosts" not in md
            assert "Sized on figures measured" not in md and "measured with sizing run" not in md
            # no figure of it is marked or worded measured: the summary's, the tables', the
            # appendix's points (the legend lists every kind, the made-up one among them)
            assert "^m^ |" not in md and not re.search(r"\d ?\^m\^", md), md
            assert "(measured)" not in md and "measured, used with a warning" not in md
            assert "^d^ made up for an example (examples/simulated.py), not measured" in md
        doc = json.loads(rec.stdout)
        figures = [f for c in [doc["recommendation"], *doc["alternatives"]] for f in c["figures"]]
        assert figures and all("simulated" in f["flags"] for f in figures)
        assert doc["recommendation"]["basis"].startswith("simulated-r640")
