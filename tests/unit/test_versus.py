"""Bare metal or the hypervisor for the customer's demand, after a lab run: the comparison
the tool exists for leads the guide's summary and follows `recommend`'s answer, with the
hypervisor's licence charged and the measured share a guest carries."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.app.guide import prepare
from sizing.cli import app
from sizing.engine import Demand
from sizing.report.data.model import GuideRequest
from sizing.sizing_request import Inputs, SizingRequest
from tests.labdb import build_lab

runner = CliRunner()

CATALOG = """\
kind: catalog
name: Acme price list
source: Acme quote 2026-11
amortisation_months: 36
power: {price_per_kwh: 0.12}
licences:
  hypervisor: {per: core, price: 150, term: yearly}
servers:
  - {cores: 8, price: 4100, watts: 350, name: PowerEdge R460}
  - {cores: 16, price: 7900, watts: 450, name: PowerEdge R660}
  - {cores: 32, price: 14500, watts: 650, name: PowerEdge R760, sockets: 2}
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("lab")
    db, cat = root / "lab.sqlite", root / "acme.yml"
    build_lab(db)
    cat.write_text(CATALOG, encoding="utf-8")
    return db, cat


def test_recommend_compares_bare_metal_and_esxi_with_the_licence_charged(
    lab: tuple[Path, Path],
) -> None:
    db, cat = lab
    got = runner.invoke(
        app, ["recommend", "--rps", "500000", "--db", str(db), "--catalog", str(cat), "--json"]
    )
    assert got.exit_code == 0, got.stderr
    cmp = json.loads(got.stdout)["platforms"]
    bm, esxi = cmp["baremetal"], cmp["guest"]
    assert esxi["platform"] == "esxi"
    # $150 a core a year over 36 months on every 8-core guest host: $3,600 a server
    assert esxi["fleet"]["cost"]["licence"] == pytest.approx(3600.0 * esxi["servers"])
    assert bm["fleet"]["cost"]["licence"] == 0
    assert cmp["extra_cost"] == pytest.approx(esxi["total_cost"] - bm["total_cost"])
    shares = {(o["profile"], o["ht"], o["cores"]): o["guest_share"] for o in cmp["overheads"]}
    assert set(shares) >= {("rps", "off", n) for n in (1, 2, 4, 8)}
    assert all(0.7 < v < 0.95 for v in shares.values())  # the lab's guests carry 82% / 93%
    text = " ".join(
        runner.invoke(
            app, ["recommend", "--rps", "500000", "--db", str(db), "--catalog", str(cat)]
        ).stdout.split()
    )
    assert (
        "On ESXi the same demand needs" in text
        and "more than on bare metal (total cost of ownership" in text
    )


def test_the_guide_leads_with_the_same_comparison(lab: tuple[Path, Path]) -> None:
    db, cat = lab
    request = GuideRequest(
        date="2026-11-26",
        customer="Example Corp",
        sizing=SizingRequest(demand=Demand(rps=500_000), inputs=Inputs(db=db, catalog=cat)),
    )
    guide = prepare(request).guide
    assert guide.versus is not None
    sentence = guide.versus.sentence
    assert sentence.startswith("On ESXi the same demand needs")
    assert "the hypervisor's licence comes to $10,800" in sentence  # 3 × 8 cores × $150 × 3
    assert "core for core a guest carries" in sentence
    cli = json.loads(
        runner.invoke(
            app, ["recommend", "--rps", "500000", "--db", str(db), "--catalog", str(cat), "--json"]
        ).stdout
    )
    assert json.loads(json.dumps(guide.versus.comparison.to_dict())) == cli["platforms"]


def test_with_growth_the_sentence_says_its_difference_is_the_plans_totals(
    lab: tuple[Path, Path],
) -> None:
    """With --growth the sides are compared on their year-by-year plans: the sentence says
    so (its server counts are the first year's), and its difference is the difference of
    the two plans' printed totals, not of the one-fleet lines above it."""
    db, cat = lab
    argv = ["recommend", "--rps", "500000", "--db", str(db), "--catalog", str(cat)]
    argv += ["--years", "4", "--growth", "30%"]
    got = runner.invoke(app, [*argv, "--json"])
    assert got.exit_code == 0, got.stderr
    cmp = json.loads(got.stdout)["platforms"]
    text = " ".join(runner.invoke(app, argv).stdout.split())
    sentence = text[text.index("On ESXi the same demand") :]
    assert " in the first year and costs " in sentence
    assert "than on bare metal over 4 years of demand growing 30% a year" in sentence
    money = float(sentence.split("costs $", 1)[1].split(" ", 1)[0].replace(",", ""))
    totals = re.findall(r"year by year: .*?total \$([\d,.]+)", text)
    assert len(totals) >= 2
    bare, esxi = (float(t.replace(",", "")) for t in totals[:2])
    assert money == pytest.approx(abs(esxi - bare), abs=0.01)
    assert money == pytest.approx(abs(cmp["extra_cost"]), abs=0.01)
    assert "the hypervisor's licence comes to $" in sentence and " of it;" in sentence
