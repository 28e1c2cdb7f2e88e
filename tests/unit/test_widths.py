"""Every text table and answer fits a 100-column terminal by default (issue 26): ``table``,
``recommend`` and ``results`` on the reference data and on measured databases (one host
with guests, two hosts that disagree), run in process; ``table --wide`` keeps one table a
block. Every stdout output ends with a newline."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from tests.unit.test_sources import ENV, XEON, facts, fill, lscpu, point

runner = CliRunner()
WIDTH = 100


def reps(v: float) -> list[float]:
    return [v * 0.99, v, v * 1.01]


@pytest.fixture(params=["reference", "guests", "two-hosts"])
def db(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "sizing.sqlite"
    monkeypatch.setenv("SIZING_DB", str(path))
    if request.param == "guests":
        env = {"r640-01": ENV["r640-01"], "vm1": facts(XEON, lscpu(1, 4, 1), hypervisor="kvm")}
        pts = [
            point("r640-01", "baremetal", n, p, reps(v * n))
            for n in (1, 2, 4)
            for p, v in (("rps", 30000.0), ("tps", 900.0))
        ]
        pts += [
            point(
                "vm1",
                "libvirt",
                n,
                "rps",
                reps(26000.0 * n),
                platform_settings={"hypervisor": "r640-01"},
            )
            for n in (1, 2, 4)
        ]
        fill(path, env, pts)
    elif request.param == "two-hosts":
        env = {"r640-01": ENV["r640-01"], "r640-02": ENV["r640-02"]}
        hosts = (("r640-01", 30000.0), ("r640-02", 50000.0))
        pts = [point(h, "baremetal", n, "rps", reps(v * n)) for h, v in hosts for n in (1, 2, 4)]
        fill(path, env, pts)
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["table", "--article-prices"],
        ["recommend", "--rps", "200000", "--article-prices"],
        ["recommend", "--rps", "150000", "--tps", "2000", "--article-prices", "--ht", "any"],
        ["results"],
        ["results", "--bases"],
    ],
    ids=lambda a: " ".join(a),
)
def test_default_text_output_fits_100_columns(db: Path, argv: list[str]) -> None:
    res = runner.invoke(app, argv)
    assert res.exit_code in (0, 1), res.output
    if not res.stdout:
        return
    assert res.stdout.endswith("\n")
    # the database's path is one unbreakable word, as long as the user's (or pytest's) folders
    wide = [line for line in res.stdout.splitlines() if len(line.replace(str(db), "~")) > WIDTH]
    assert not wide, "\n".join(wide)


def test_table_wide_keeps_one_table_per_block(db: Path) -> None:
    narrow = runner.invoke(app, ["table", "--article-prices"]).stdout
    wide = runner.invoke(app, ["table", "--article-prices", "--wide"]).stdout
    assert narrow.count("CPU cores") >= wide.count("CPU cores")
    assert wide.count("CPU cores") == wide.count("\n[") + (1 if wide.startswith("[") else 0)
