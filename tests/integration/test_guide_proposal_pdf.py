"""The PDF's numbers add up, read back from the PDF itself (pdftotext): every capacity the
guide shows as "servers × one server = total" multiplies, one server's figure is the one the
recommendation is sized on (the low end of its interval), each option's cost per year times
the years is its total, and its hardware line multiplies (issue 44). Checked on a lab guide
(tests/labdb.py: simulated figures, a PowerEdge host and its ESXi guest) and on a guide of
the bundled reference data alone. WeasyPrint, matplotlib and poppler are real.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from tests.labdb import build_lab
from tests.unit.test_proposal import CUSTOMER, DEMAND

pytestmark = [
    pytest.mark.integration,
    pytest.mark.noload,
    pytest.mark.skipif(not shutil.which("pdftotext"), reason="poppler-utils is not installed"),
]
pytest.importorskip("weasyprint")
pytest.importorskip("matplotlib")

runner = CliRunner()


def _num(text: str) -> float:
    return float(text.replace(",", "").replace("$", ""))


@pytest.fixture(scope="module", params=["lab", "reference"])
def pdf_text(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp(request.param)
    db, cat, out = root / "db.sqlite", root / "customer.yml", root / "guide.pdf"
    if request.param == "lab":
        build_lab(db)
    cat.write_text(CUSTOMER, encoding="utf-8")
    argv = ["guide", *DEMAND, "--db", str(db), "--catalog", str(cat), "--out", str(out)]
    res = runner.invoke(app, argv)
    assert res.exit_code == 0, res.stderr
    # -layout keeps a table's row on one line; the plain order keeps a wrapped cell whole
    texts = [
        subprocess.run(
            ["pdftotext", *mode, str(out), "-"],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
        for mode in (["-layout"], [])
    ]
    return " ".join(texts[0].split()) + " | " + " ".join(texts[1].split())


def test_every_capacity_shown_multiplies_to_its_total(pdf_text: str) -> None:
    # the recommendation's box: "RPS capacity 3 servers × 425,544 = 1,276,632 requests/s"
    # (a floor beyond the measured cores, or a client-bound figure, reads "= ≥1,309,408")
    box = re.findall(r"(\d+) servers? × ([\d,]+) = ≥?([\d,]+) (requests/s|handshakes/s)", pdf_text)
    assert {unit for *_, unit in box} == {"requests/s", "handshakes/s"}
    for n, one, total, _ in box:
        assert int(n) * _num(one) == _num(total)
    # the box's "as sized" figures are the ones it multiplies
    sized = re.findall(r"server, as sized ≥?([\d,]+): (?:the low end|a lower bound)", pdf_text)
    assert sorted(sized) == sorted(one for _, one, _, _ in box)
    # the capacity table: option, figure, servers counted on, one server, total
    rows = re.findall(
        r"(Bare metal|ESXi|KVM) (RPS|TLS handshakes/s) (\d+) ([\d,]+) ([\d,]+)", pdf_text
    )
    assert rows
    for _, _, n, one, total in rows:
        assert int(n) * _num(one) == _num(total)
    shown = {(what, one) for _, what, _, one, _ in rows}
    for _, one, _, unit in box:  # the recommended option's row is the box's figure
        assert ("RPS" if unit == "requests/s" else "TLS handshakes/s", one) in shown


def test_each_option_adds_up(pdf_text: str) -> None:
    # "Bare metal (recommended) 4 × PowerEdge R460 (12 cores), HT on $12,428.59 $37,285.76"
    options = re.findall(r"HT (?:on|off) \$([\d,.]+) \$([\d,.]+)", pdf_text)
    assert options
    for per_year, total in options:
        assert _num(per_year) * 3 == pytest.approx(_num(total), abs=0.02)
    for n, price, total in re.findall(r"(\d+) × \$([\d,]+) = \$([\d,]+)", pdf_text):
        assert int(n) * _num(price) == _num(total)
    for term in ("$135 per core a year, at least 16 cores per CPU", "300 W at load"):
        assert term in pdf_text
    assert "0.16 USD per kWh" in pdf_text and "8,760 hours a year" in pdf_text
