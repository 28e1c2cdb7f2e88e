"""The terminal's habits (issues 34 and 37): text follows the terminal's width (``COLUMNS``
or the tty's size), never wider than 100 columns; a run logged to a file gets plain
timestamped progress lines; ``guide`` says its long steps. In process."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.app.env import Environment, use
from sizing.cli import app
from sizing.cli.app import columns
from sizing.cli.progress import REPEAT_S, RichProgress, Steps
from tests.unit.test_sources import ENV, XEON, facts, fill, lscpu, point

runner = CliRunner()
STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d "


def reps(v: float) -> list[float]:
    return [v * 0.99, v, v * 1.01]


@pytest.fixture()
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One host with a KVM guest: points, a pairs table and two bases."""
    path = tmp_path / "sizing.sqlite"
    monkeypatch.setenv("SIZING_DB", str(path))
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
    return path


COMMANDS = [
    ["recommend", "--rps", "200000", "--article-prices"],
    ["recommend", "--rps", "200000", "--source", "reference"],
    ["table", "--article-prices"],
    ["results"],
    ["results", "--bases"],
]


def shown(argv: list[str], cols: int | None) -> str:
    env = {"COLUMNS": str(cols)} if cols else {}
    res = runner.invoke(app, argv, env=env)
    assert res.exit_code in (0, 1), res.output
    return res.stdout


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_text_follows_the_terminal_width_up_to_100(db: Path, argv: list[str]) -> None:
    at = {c: shown(argv, c) for c in (80, 100, 120)}
    for cols, text in at.items():
        wide = [x for x in text.splitlines() if len(x) > min(cols, 100)]
        assert not wide, f"{cols} columns:\n" + "\n".join(wide)
    assert at[120] == at[100] == shown(argv, None)  # 100 at most, and when not a terminal
    if any(len(x) > 80 for x in at[100].splitlines()):
        assert at[80] != at[100]  # folded for 80 columns, not merely left as it was


def test_recommend_at_80_columns_keeps_its_words(db: Path) -> None:
    """Folding changes where the sentences break, never what they say (the table of
    alternatives below them is cut, and says so)."""
    argv = ["recommend", "--rps", "200000", "--source", "reference"]
    narrow, full = shown(argv, 80), shown(argv, 100)
    assert "Identical fleets" in full

    def said(text: str) -> str:
        return " ".join(text.split("Identical fleets")[0].split())

    assert said(narrow) == said(full)
    assert len(narrow.splitlines()) > len(full.splitlines())
    table = narrow.split("\nBare metal, ")[0]  # the platforms compared follow the table
    assert table.rstrip().endswith("(… cut at 80 columns: --json gives every column)")


def use_env(tty: bool, monkeypatch: pytest.MonkeyPatch, size: int = 0) -> None:
    stdout = io.StringIO()
    use(Environment(stdout=stdout, stdout_isatty=tty))
    monkeypatch.setattr(stdout, "fileno", lambda: 1, raising=False)
    monkeypatch.setattr(os, "get_terminal_size", lambda fd: os.terminal_size((size, 50)))


@pytest.mark.parametrize(
    ("env_cols", "tty", "size", "width"),
    [
        (None, False, 0, 100),  # a pipe or a file: 100
        (None, True, 80, 80),  # an 80-column terminal
        (None, True, 132, 100),  # a wide one: still 100
        (None, True, 20, 40),  # tables cannot fold below 40
        ("72", True, 132, 72),  # COLUMNS wins over the tty
        ("72", False, 0, 72),  # and is followed in a pipe (the user said so)
        ("wide", True, 90, 90),  # a COLUMNS that is not a number is ignored
    ],
)
def test_columns(
    env_cols: str | None, tty: bool, size: int, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if env_cols is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", env_cols)
    use_env(tty, monkeypatch, size)
    assert columns() == width


def result(cores: int, value: float) -> object:
    got, _ = point("r640-01", "baremetal", cores, "rps", reps(value))
    return got


def test_a_run_not_on_a_terminal_logs_plain_timestamped_lines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from sizing.plan.estimate import TimeBudget

    keys = [result(n, 1.0).key for n in (1, 2)]  # type: ignore[attr-defined]
    with RichProgress(terminal=False) as progress:
        progress.start(2, TimeBudget(points={keys[0]: (60.0, 60.0), keys[1]: (60.0, 60.0)}))
        progress.step("measuring r640-01 1c")
        progress.advance(result(1, 30000.0))  # type: ignore[arg-type]
        progress.step("measuring r640-01 2c")
        progress.advance(result(2, 60000.0))  # type: ignore[arg-type]
        progress.info("run 7 done")
    out, err = capsys.readouterr()
    assert out == ""
    # within 100 columns: a longer line goes on, indented, on the next (issue 62)
    assert all(len(x) <= 100 for x in err.splitlines()), err
    lines = re.sub(r"\n +", " ", err).splitlines()
    assert all(re.match(STAMP, x) for x in lines), err
    said = [x[20:] for x in lines]
    assert said[0] == "2 point(s) to measure, about 2 min 00 s left"  # the plan's estimate
    assert said[1] == "measuring r640-01 1c"
    assert re.fullmatch(
        r"\[1/2, about 1 min 00 s left\] r640-01 baremetal 1c.* measured 30,000 .+", said[2]
    ), said[2]
    assert re.fullmatch(r"\[2/2\] r640-01 baremetal 2c.* measured 60,000 .+", said[4]), said[4]
    assert said[5] == "run 7 done"


def test_a_waiting_step_is_logged_once_per_half_minute(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1000.0]
    monkeypatch.setattr("sizing.cli.progress.time.monotonic", lambda: clock[0])
    progress = RichProgress(terminal=False)
    for s in range(0, 61):
        clock[0] = 1000.0 + s
        progress.step(f"waiting for the results database ({s} s so far)")
    lines = capsys.readouterr().err.splitlines()
    assert [x[20:] for x in lines] == [
        f"waiting for the results database ({s:.0f} s so far)" for s in (0, REPEAT_S, 2 * REPEAT_S)
    ]


def test_steps_are_plain_on_a_terminal_and_timestamped_in_a_log(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Steps("guide", terminal=True)("drawing the charts")
    Steps("guide", terminal=False)("laying out the PDF (a4)")
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "guide: 0 s: drawing the charts"
    assert re.fullmatch(STAMP + r"guide: 0 s: laying out the PDF \(a4\)", lines[1])


def test_guide_says_its_steps(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "guide.html"
    res = runner.invoke(app, ["guide", "--rps", "100k", "--article-prices", "--out", str(out)])
    assert res.exit_code == 0, res.output
    steps = [re.sub(STAMP + r"|\d+ s", "", x) for x in res.stderr.splitlines()]
    assert steps[:2] == ["guide: : results read and sized", "guide: : drawing the charts"]
    assert re.fullmatch(rf"wrote {re.escape(str(out))} in ", steps[-1]), steps[-1]


def test_a_guide_refused_says_one_line_and_no_step(db: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["guide", "--run", "42", "--out", str(tmp_path / "g.md")])
    assert res.exit_code != 0
    assert len(res.stderr.splitlines()) == 1, res.stderr
