"""A command's start loads only what it uses: importing the CLI (every command's options)
loads no engine, inventory reader, planner, store, measuring code, renderer of figures,
pydantic, Ansible or plotting library; each command imports its own when it runs."""

from __future__ import annotations

import subprocess
import sys

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
