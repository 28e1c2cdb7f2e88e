"""Nothing in the printed guide runs past the page's right margin at its widest inputs: host
names of 60 characters and more (a lab's FQDNs), a catalog's product names at their longest
(80 characters a server, 60 a licence) and amounts in the millions.

A column that may not wrap (an assumption's item, a host in the validity appendix, a figure
in the limits appendix, a CPU list without spaces) pushed the table past the page's edge:
the sources of the assumptions printed one letter a line over 5 pages, the validity table's
flags and the limits table's ceilings off the page. pdftotext places every word: each must
lie within the page's margins. The lab is tests/labdb.py's simulated one, stored without
the ``simulated`` flag (its words would widen the sizing table's cells), not a measurement.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from tests.labdb import build_lab

runner = CliRunner()

PREFIX = "nginx-edge.frankfurt-hall-b.rack-42.payments.example-bank-"  # 58 characters
MM = 72 / 25.4  # PDF points per millimetre
MARGIN_MM = 18  # templates/guide.css: @page's left and right margins


def _name(text: str, size: int) -> str:
    return (text * 4)[:size].rstrip()


CATALOG = f"""kind: catalog
name: {_name("Quote of a long-named European systems integrator GmbH ", 80)}
source: test prices, not a quote
currency: EUR
amortisation_months: 60
exchange_rates:
  USD: {{rate: 0.92, source: test rate}}
power: {{price_per_kwh: 0.21}}
support: {{share_of_hardware_per_year: 0.08}}
licences:
  esxi: {{name: "{_name("VMware vSphere Foundation Enterprise Plus ", 60)}", per: core,
    price: 12500, term: yearly}}
  kvm: {{name: "{_name("Proxmox Virtual Environment Premium Subscription ", 60)}",
    per: socket, price: 51000, term: yearly}}
  all: {{name: "{_name("NGINX Plus Enterprise Subscription with WAF ", 60)}", per: instance,
    price: 250000, currency: USD, term: yearly}}
servers:
  - {{name: "{_name("Lenovo ThinkSystem SR630 V3 1U Rack Server Premium ", 80)}", cores: 16,
    price: 7200000, watts: 280}}
  - {{name: "{_name("Dell PowerEdge R760 2U Rack Server Intel Xeon Gold ", 80)}", cores: 40,
    sockets: 2, price: 12345678.9, watts: 500, cpu_model: Gold 6248}}
"""


def _outside(pdf: Path) -> list[str]:
    """Every word (with its page) that lies outside the page's left and right margins."""
    xml = subprocess.run(
        ["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    out, page, width = [], 0, 0.0
    word = re.compile(r'<word xMin="([\d.-]+)" yMin="[\d.-]+" xMax="([\d.-]+)"[^>]*>(.*)</word>')
    for line in xml.splitlines():
        if m := re.search(r'<page width="([\d.]+)"', line):
            page, width = page + 1, float(m.group(1))
        elif m := word.search(line):
            x0, x1 = float(m.group(1)), float(m.group(2))
            if x0 < MARGIN_MM * MM - 1 or x1 > width - MARGIN_MM * MM + 1:
                out.append(f"page {page}: {m.group(3)}")
    return out


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_no_word_runs_past_the_margins_at_the_widest_inputs(tmp_path: Path, paper: str) -> None:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    db, catalog, pdf = tmp_path / "lab.sqlite", tmp_path / "wide.yml", tmp_path / "guide.pdf"
    build_lab(db, kvm=True, reps=3, prefix=PREFIX, price_usd=1_234_567.89)
    catalog.write_text(CATALOG, "utf-8")
    argv = ["guide", "--db", str(db), "--catalog", str(catalog), "--rps", "2.5M"]
    argv += ["--tps", "150k", "--years", "5", "--redundancy", "n+1", "--paper", paper]
    made = runner.invoke(app, [*argv, "--out", str(pdf)])
    assert made.exit_code == 0, made.output
    assert _outside(pdf) == []


def _page_text(pdf: Path, page: int) -> str:
    return subprocess.run(
        ["pdftotext", "-f", str(page), "-l", str(page), str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.mark.parametrize("simulated", [False, True])
def test_the_cover_of_a_lab_of_long_host_names_is_one_page(tmp_path: Path, simulated: bool) -> None:
    """Three hosts of each platform (bare metal, ESXi and KVM guests): the cover named every
    one in its table, its basis and again in its banner, and its foot (the provenance marks)
    was pushed onto page 2, below the page's margin."""
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    db, pdf = tmp_path / "lab.sqlite", tmp_path / "guide.pdf"
    flags = ("simulated",) if simulated else ()
    build_lab(db, hosts=3, kvm=True, reps=2, ht=("off",), prefix=PREFIX, flags=flags)
    long_name = "Allgemeine Bank- und Versicherungsgesellschaft für Mittel- und Osteuropa AG"
    made = runner.invoke(
        app,
        ["guide", "--db", str(db), "--out", str(pdf), "--customer", long_name]
        + ["--prepared-by", "Dr. Maximilian Alexander von Hohenzollern, Solutions Architect"],
    )
    assert made.exit_code == 0, made.output
    first, second = (" ".join(_page_text(pdf, n).split()) for n in (1, 2))
    assert "Generated by sizing" in first
    assert "Generated by sizing" not in second
    assert "and 2 more (the methodology names each)" in first
