"""A command's start loads only what it uses: importing the CLI (every command's options)
loads no engine, inventory reader, planner, store, measuring code, renderer of figures,
pydantic, Ansible or plotting library; each command imports its own when it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.labdb import build_lab

HEAVY = (
    "sizing.engine",
    "sizing.inventory",
    "sizing.plan",
    "sizing.measure",
    "sizing.sweep",
    "sizing.store",
    "sizing.report.data",
    "ansible",
    "pydantic",
    "matplotlib",
    "weasyprint",
)


def test_importing_the_cli_loads_no_command_s_machinery() -> None:
    code = (
        "import sys, sizing.cli\n"
        f"print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


# what sizing recommend never needs: planning, inventories, hosts, measuring, the drivers
NOT_FOR_RECOMMEND = (
    "sizing.plan",
    "sizing.inventory",
    "sizing.provision",
    "sizing.measure",
    "sizing.sweep",
    "sizing.load.",
    "sizing.demand",
    "sizing.catalog.models",
    "sizing.report.render.points",
    # issue 60: a stored or bundled profile is read without pydantic (sizing.profile_facts)
    "sizing.profiles",
    "pydantic",
    "ansible",
    "jinja2",
    "matplotlib",
    "weasyprint",
)


def test_recommend_on_a_measured_database_loads_no_planning_or_host_code(
    tmp_path: Path,
) -> None:
    """issue 60: half of recommend's imports were planning and inventory code it never
    used (the points table's renderer reached the pre-flight's checks, and with them the
    planner and the inventory reader); recommend on a lab's database now loads none."""
    db = tmp_path / "lab.db"
    build_lab(db, inventory="/lab/inventories/lab.yml", price_usd=5800.0)  # priced: it sizes
    code = (
        "import sys, io, contextlib, sizing.cli\n"
        f"sys.argv = ['sizing', 'recommend', '--rps', '20000', '--db', {str(db)!r}]\n"
        "out = io.StringIO()\n"
        "try:\n"
        "    with contextlib.redirect_stdout(out):\n"
        "        sizing.cli.main()\n"
        "except SystemExit as e:\n"
        "    assert not e.code, (e.code, out.getvalue())\n"
        "assert 'Recommended:' in out.getvalue(), out.getvalue()\n"
        f"print(sorted(m for m in sys.modules if m.startswith({NOT_FOR_RECOMMEND!r})))\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert got.stdout.strip() == "[]", got.stdout
