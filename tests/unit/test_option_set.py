"""recommend, table and guide take their options from one set, declared once
(``sizing/cli/option_set.py``): each command's --help shows the options it takes, and no
command module lists them again."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from sizing.cli import app
from sizing.cli.option_set import FIGURES, OPTIONS, REQUEST, RUNS, WORKLOAD, SizingArgs

ROOT = Path(__file__).resolve().parents[2]


def _flags(command: str) -> set[str]:
    out = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "100"}).output
    return set(re.findall(r"(--[a-z0-9-]+)", out))


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def test_each_command_shows_the_options_it_takes() -> None:
    flags = {n: _flag(n) for n in OPTIONS}
    flags.update(source="--source", allow_extrapolation="--allow-extrapolation")
    got = {c: _flags(c) for c in ("recommend", "table", "guide")}
    for name in FIGURES + WORKLOAD:
        assert all(flags[name] in got[c] for c in got), name
    for name in REQUEST:
        assert flags[name] in got["recommend"] and flags[name] in got["guide"], name
        assert flags[name] not in got["table"], name
    assert "--run" in got["guide"] and "--run" not in got["recommend"]
    assert set(OPTIONS) == set(SizingArgs.__dataclass_fields__)
    assert set(OPTIONS) == set(FIGURES) | set(REQUEST) | set(RUNS) | set(WORKLOAD)


def test_the_options_are_listed_once() -> None:
    for module in ("engine_cmds.py", "guide_cmd.py"):
        text = (ROOT / "sizing" / "cli" / module).read_text()
        for opt in ("RpsOpt", "SourceOpt", "HeadroomOpt", "ctx.params"):
            assert opt not in text, (module, opt)
