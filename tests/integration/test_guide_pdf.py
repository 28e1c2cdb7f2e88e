"""``sizing guide`` to PDF, checked with real tools: pdftotext, pdffonts, pdfinfo, pdftoppm.

The results database is built through the Store API with TEST FIXTURE values (invented
throughputs, intervals and CPU shares; see tests/unit/test_guide_data.py): this is a
rendering test, not a measurement. WeasyPrint and matplotlib are real.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.store import Store
from tests.unit.test_guide_data import fill_store

pytestmark = [
    pytest.mark.integration,
    pytest.mark.noload,
    pytest.mark.skipif(
        not all(shutil.which(t) for t in ("pdftotext", "pdffonts", "pdfinfo", "pdftoppm")),
        reason="poppler-utils is not installed",
    ),
]
weasyprint = pytest.importorskip("weasyprint")
pytest.importorskip("matplotlib")

runner = CliRunner()
SECTIONS = (
    "Executive summary",
    "Sizing table",
    "Charts",
    "Methodology",
    "Validity of the measurements",
    "Provenance of every figure",
)


def _tool(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=120).stdout


@pytest.fixture(scope="module")
def measured_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("guide")
    db = tmp / "sizing.sqlite"
    with Store(db) as store:
        fill_store(store)
    out = tmp / "guide.pdf"
    res = runner.invoke(
        app,
        ["guide", "--db", str(db), "--out", str(out), "--rps", "150000", "--customer", "ACME"],
    )
    assert res.exit_code == 0, res.stderr
    assert re.search(r"wrote .*guide\.pdf \(\d+ pages\)", res.stderr)
    return out


def test_pdf_text_has_the_sections_and_the_table(measured_pdf: Path) -> None:
    text = _tool("pdftotext", "-layout", str(measured_pdf), "-")
    for title in SECTIONS:
        assert title in text
    # the sizing table's figures (fixture values) and the reference Kubernetes figures
    for figure in ("50,000", "98,000", "190,000", "1,630", "80,000", "2,950", "$1,300"):
        assert figure in text
    assert "ACME" in text and "lab" in text  # the cover: customer and inventory
    assert "client-bound" in text and "needs 8 server cores" in text  # validity appendix
    assert "Test CPU Model 9000" in text and "wrk 4.1.0" in text  # methodology
    assert "emulated" in text
    # chart text is kept as text in the SVG: the axes' labels are in the PDF
    assert "CPU cores per server" in text
    assert "Server CPU busy" in text


def test_pdf_fonts_are_embedded_and_pages_numbered(measured_pdf: Path) -> None:
    fonts = _tool("pdffonts", str(measured_pdf)).splitlines()[2:]
    assert fonts, "no fonts in the PDF"
    assert all(line.split()[-5] == "yes" for line in fonts), fonts  # the emb column
    assert any("DejaVu" in line for line in fonts)
    info = _tool("pdfinfo", str(measured_pdf))
    pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))  # type: ignore[union-attr]
    assert pages >= 8
    assert "A4" in info or "595.28 x 841.89" in info
    text = _tool("pdftotext", "-f", "3", "-l", "3", str(measured_pdf), "-")
    assert f"Page 3 of {pages}" in text


def test_pdf_pages_render(measured_pdf: Path, tmp_path: Path) -> None:
    from PIL import Image

    _tool(
        "pdftoppm", "-r", "40", "-png", "-f", "1", "-l", "2", str(measured_pdf), str(tmp_path / "p")
    )
    assert len(list(tmp_path.glob("p-*.png"))) == 2
    # The charts page is far from blank: its vector charts cover a good share of it.
    page = str(_page_of(measured_pdf, "Figure 1."))
    _tool(
        "pdftoppm",
        "-r",
        "40",
        "-png",
        "-singlefile",
        "-f",
        page,
        "-l",
        page,
        str(measured_pdf),
        str(tmp_path / "charts"),
    )
    img = Image.open(tmp_path / "charts.png").convert("L")
    dark = sum(img.histogram()[:200])
    assert dark > 0.03 * img.width * img.height


def _page_of(pdf: Path, needle: str) -> int:
    for page in range(1, 12):
        if needle in _tool("pdftotext", "-f", str(page), "-l", str(page), str(pdf), "-"):
            return page
    raise AssertionError(f"{needle!r} not found")


def test_reference_only_guide_on_letter_paper(tmp_path: Path) -> None:
    out = tmp_path / "ref.pdf"
    res = runner.invoke(
        app,
        ["guide", "--db", str(tmp_path / "none.sqlite"), "--out", str(out), "--paper", "letter"],
    )
    assert res.exit_code == 0, res.stderr
    # the guide's steps come first on stderr (a log shows how far it is), then its basis
    assert "\nbasis: reference/baremetal, reference/esxi — reference: no" in res.stderr
    text = _tool("pdftotext", "-layout", str(out), "-")
    assert "Reference data only." in text
    assert "Sized on the published reference data" in text
    assert "reference/baremetal" in text  # by its id in the engineers' appendix
    for figure in ("48,000", "300,000", "280,000", "5,100", "$2,200"):
        assert figure in text
    assert "612 x 792" in _tool("pdfinfo", str(out))


def test_html_is_self_contained(tmp_path: Path) -> None:
    out = tmp_path / "guide.html"
    res = runner.invoke(app, ["guide", "--source", "reference", "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    html = out.read_text(encoding="utf-8")
    assert html.count("<svg") >= 3 and "@page" in html and "size: A4" in html
    assert 'src="http' not in html and "<link" not in html
