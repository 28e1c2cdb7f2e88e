"""The printed guide's pages hold as a lab grows: generated labs of 8, 32 and 64 points
(tests/labgen.py, TEST FIXTURE figures written through the Store API) rendered to PDF by the
real command, then read back with ``pdftotext -bbox-layout``: no word crosses a page's
right edge or runs under its footer, and no figure's title stands on a page without its
caption. A rendering test, not a measurement; it drives no load.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.store import Store
from tests.labgen import store_container_run, store_lab

pytestmark = [
    pytest.mark.integration,
    pytest.mark.noload,
    pytest.mark.skipif(not shutil.which("pdftotext"), reason="poppler-utils is not installed"),
]
pytest.importorskip("weasyprint")
pytest.importorskip("matplotlib")

runner = CliRunner()
MM = 72 / 25.4  # PDF points per millimetre
RIGHT_MARGIN_MM = 15.0  # the page's right margin is 18 mm (the cover's text 20 mm)
FOOTER = re.compile(r"^(NGINX capacity sizing|Page \d+ of \d+)$")
# How each chart's caption begins (sizing/report/render/*_charts.py)
HEADING_PT = 12.0  # a line taller than this is a heading (body text: 10 pt lines, h3: 12.2)
CAPTIONS = ("Filled markers", "Server cost", "(bare metal", "One marker", "Each bar")


@dataclass(frozen=True)
class Line:
    page: int
    text: str
    x_max: float
    y_min: float
    y_max: float


def _pages(pdf: Path) -> tuple[list[tuple[float, float]], list[Line]]:
    """Each page's size and every text line of the PDF, in reading order."""
    html = subprocess.run(
        ["pdftotext", "-bbox-layout", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    root = ET.fromstring(re.sub(r"<!DOCTYPE[^>]*>|xmlns=\"[^\"]*\"", "", html))
    sizes: list[tuple[float, float]] = []
    lines: list[Line] = []
    for n, page in enumerate(root.iter("page"), start=1):
        sizes.append((float(page.get("width", 0)), float(page.get("height", 0))))
        for line in page.iter("line"):
            words = list(line.iter("word"))
            lines.append(
                Line(
                    n,
                    " ".join(w.text or "" for w in words),
                    max(float(w.get("xMax", 0)) for w in words),
                    min(float(w.get("yMin", 0)) for w in words),
                    max(float(w.get("yMax", 0)) for w in words),
                )
            )
    return sizes, lines


def _guide(tmp: Path, **lab: object) -> Path:
    db = tmp / "lab.sqlite"
    with Store(db) as store:
        store_lab(store, **lab)  # type: ignore[arg-type]
        store_container_run(store)  # a machine's own points beside the lab's
    out = tmp / "guide.pdf"
    res = runner.invoke(
        app,
        [
            "guide",
            "--db",
            str(db),
            "--out",
            str(out),
            "--rps",
            "200000",
            "--prepared-by",
            "Test Engineer",
        ],
    )
    assert res.exit_code == 0, res.stderr
    return out


LABS = {
    "8 points": {"hosts": 1, "guests": False, "hts": ("off",)},
    "32 points": {"hosts": 1},
    "64 points": {"hosts": 2},
}


@pytest.mark.parametrize("lab", list(LABS), ids=list(LABS))
def test_every_page_holds_its_text(lab: str, tmp_path: Path) -> None:
    sizes, lines = _pages(_guide(tmp_path, **LABS[lab]))
    assert len(sizes) > 5 and lines
    footer_top = {
        n: min((ln.y_min for ln in lines if ln.page == n and FOOTER.match(ln.text)), default=h)
        for n, (_, h) in enumerate(sizes, start=1)
    }
    for ln in lines:
        width, _ = sizes[ln.page - 1]
        assert ln.x_max <= width - RIGHT_MARGIN_MM * MM, f"right edge, page {ln.page}: {ln}"
        if not FOOTER.match(ln.text):
            assert ln.y_max < footer_top[ln.page], f"under the footer, page {ln.page}: {ln}"
    for n in range(1, len(sizes) + 1):  # a heading (h2, h3: taller lines) never ends a page
        body = [ln for ln in lines if ln.page == n and not FOOTER.match(ln.text)]
        if body:
            assert body[-1].y_max - body[-1].y_min <= HEADING_PT, f"alone on page {n}: {body[-1]}"
    titles = [i for i, ln in enumerate(lines) if re.match(r"Figure \d+\. ", ln.text)]
    # throughput, CPU and ceilings at least (the labs are unpriced: no cost chart; the
    # labs with guests add the overhead chart)
    assert len(titles) >= 3, [lines[i].text for i in titles]
    for i in titles:
        caption = next(ln for ln in lines[i + 1 :] if ln.text.startswith(CAPTIONS))
        assert caption.page == lines[i].page, f"{lines[i].text!r} and its caption apart"
    # the machine's own invalid, virtualized points are named as what they are, never
    # as bare metal, and are not in the body's charts
    text = "\n".join(ln.text for ln in lines)
    assert "localhost, a virtualized host" in text
    assert "Bare metal, 1 core (invalid)" not in text


TOP_MM = 14.0  # the running header (the chapter's title) stands above this
LONE = 3  # a page that is not the last holds at least this many lines of body text


def _body_lines(pdf: Path) -> list[int]:
    """How many lines of body text each page holds (no footer, no running header)."""
    sizes, lines = _pages(pdf)
    return [
        sum(
            1
            for ln in lines
            if ln.page == n and not FOOTER.match(ln.text) and ln.y_min > TOP_MM * MM
        )
        for n in range(1, len(sizes) + 1)
    ]


def _demand(tmp: Path) -> Path:
    """The demand file of the bundled access-log sample (tests/data/logs)."""
    out = tmp / "demand.yml"
    log = Path(__file__).parents[1] / "data" / "logs" / "nasa_access_log_aug95_head.gz"
    res = runner.invoke(app, ["demand", str(log), "--role", "lb", "-o", str(out)])
    assert res.exit_code == 0, res.stderr
    return out


GUIDES = {
    "default": lambda tmp: [],  # the bundled reference data: no run measured yet
    "--demand": lambda tmp: ["--demand", str(_demand(tmp))],
    "a lab's": None,
}


@pytest.mark.parametrize("guide", list(GUIDES))
def test_no_page_holds_a_lone_sentence(guide: str, tmp_path: Path) -> None:
    """Issue 62: page 4 of the default guide, and of the --demand guide, held one sentence
    (the glossary's last, after a forced break). Every page but the last holds at least
    LONE lines of body text."""
    make = GUIDES[guide]
    if make is None:
        pdf = _guide(tmp_path, **LABS["32 points"])
    else:
        pdf = tmp_path / "guide.pdf"
        argv = ["guide", "--db", str(tmp_path / "empty.sqlite"), "--out", str(pdf)]
        res = runner.invoke(app, [*argv, *make(tmp_path)])
        assert res.exit_code == 0, res.stderr
    body = _body_lines(pdf)
    assert len(body) > 5
    lone = {n: k for n, k in enumerate(body[:-1], start=1) if k < LONE}
    assert not lone, f"pages holding fewer than {LONE} lines of text (page: lines): {lone}"
