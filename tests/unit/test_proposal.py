"""The proposal a CFO reads (issue 44): the guide's executive summary puts the options side
by side, states every price, licence term, wattage, hour count and rate with its source,
shows each capacity as the sizing used it (servers × one server = total), speaks no
engineering, and gives one fleet one HT mode in every rendering (terminal, JSON, guide).

The lab is tests/labdb.py's simulated PowerEdge host and its ESXi guest (1/2/4/8 cores,
HT off/on, 10 runs); the catalog is the issue's customer quote.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.app.guide import prepare
from sizing.cli import app
from sizing.engine import Demand
from sizing.model import BasisPlatform
from sizing.report.data.chapters import Chapter, Heading, Para, Table, chapters
from sizing.report.data.model import Guide, GuideRequest
from sizing.report.render.chartkit import HT_MARKERS, MIN_TICK_GAP_IN, PLATFORM_STYLE, spaced_ticks
from sizing.sizing_request import Inputs, SizingRequest
from tests.labdb import build_lab

runner = CliRunner()

CUSTOMER = """\
kind: catalog
name: Retailer quote
source: Dell quote 2026-11
date: 2026-11-20
amortisation_months: 36
power: {price_per_kwh: 0.16}
support: {share_of_hardware_per_year: 0.10}
licences:
  esxi: {per: core, price: 135, term: yearly, min_cores_per_socket: 16}
servers:
  - {cores: 12, price: 6200, watts: 300, name: PowerEdge R460}
  - {cores: 32, price: 11800, watts: 480, name: PowerEdge R660, sockets: 2}
  - {cores: 64, price: 19500, watts: 650, name: PowerEdge R760, sockets: 2}
"""
DEMAND = ["--rps", "350000", "--tps", "12000", "--headroom", "25", "--redundancy", "n+1"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("lab")
    db, cat = root / "lab.sqlite", root / "customer.yml"
    build_lab(db)
    cat.write_text(CUSTOMER, encoding="utf-8")
    return db, cat


@pytest.fixture(scope="module")
def guide(lab: tuple[Path, Path]) -> Guide:
    db, cat = lab
    demand = Demand(rps=350_000, tps=12_000, headroom=0.25, redundancy="n+1")
    request = GuideRequest(
        date="2026-11-28",
        sizing=SizingRequest(demand=demand, inputs=Inputs(db=db, catalog=cat)),
    )
    return prepare(request).guide


def _text(ch: Chapter) -> str:
    """Every word a chapter prints (its paragraphs, headings, tables and boxes)."""
    out: list[str] = []
    for b in ch.blocks:
        if isinstance(b, Para):
            out.append("".join(r.text for r in b.runs))
        elif isinstance(b, Heading):
            out.append(b.text)
        elif isinstance(b, Table) and b.table is not None:
            t = b.table
            out += [t.title, *t.headers, *t.notes, *(c.text for r in t.rows for c in r)]
        elif b.kind == "recommendation":
            v = b.view  # type: ignore[attr-defined]
            out += [v.headline, *(f"{f.label} {f.value}" for f in (*v.facts, *v.figures))]
    return "\n".join(out)


def test_the_assumptions_state_every_term_with_its_source(guide: Guide) -> None:
    assert guide.assumptions is not None
    rows = {r[0].text: (r[1].text, r[2].text) for r in guide.assumptions.rows}
    assert rows["PowerEdge R460 (1 × 12 cores)"][0] == "$6,200; 300 W at load"
    assert rows["PowerEdge R760 (2 × 32 cores)"][0] == "$19,500; 650 W at load"
    assert rows["ESXi licence"][0] == "$135 per core a year, at least 16 cores per CPU"
    assert rows["Bare metal licence"][0] == "no hypervisor licence"
    assert rows["Power"][0].startswith("0.16 USD per kWh")
    assert "8,760 hours a year" in rows["Power"][0]
    assert rows["Support"][0] == "10% of the hardware price a year"
    assert rows["Period"][0] == "36 months (3 years)"
    assert rows["Discount"][0] == "none: list prices"
    assert rows["Growth"][0].startswith("none")
    assert rows["Currency"][0] == "every amount in USD; no exchange rate"
    for item in ("Headroom", "Redundancy", "Demand"):
        assert item in rows
    assert all(source for _, source in rows.values())
    assert rows["Capacity of one server"][1].startswith("measured with sizing run on r640-01")
    assert rows["ESXi licence"][1] == "catalog Retailer quote: Dell quote 2026-11, 2026-11-20"


def test_capacities_shown_multiply_to_the_totals(guide: Guide) -> None:
    prop, rec = guide.proposal, guide.recommendation
    assert prop is not None and prop.capacity is not None and rec is not None
    for row in prop.capacity.rows:
        counted, one, total = (int(c.text.replace(",", "")) for c in row[2:5])
        assert counted * one == total
    best = rec.result.recommendation
    assert best is not None
    sized = {f.profile: f.conservative for f in best.figures}
    bare = [r for r in prop.capacity.rows if r[0].text == "Bare metal"]
    assert {r[3].text for r in bare} == {f"{v:,.0f}" for v in sized.values()}
    caps = [f.value for f in rec.facts if f.label.endswith("capacity")]
    assert len(caps) == 2
    for text in caps:
        n, one, total = re.match(r"(\d+) servers × ([\d,]+) = ≥?([\d,]+) ", text).groups()  # type: ignore[union-attr]
        assert int(n) * int(one.replace(",", "")) == int(total.replace(",", ""))
    # the figure the box quotes per server is the one it multiplies: the low end, named so
    for f in rec.figures:
        assert f.label.endswith("as sized") and "the low end of its interval" in f.value


def test_the_options_cost_per_year_adds_up(guide: Guide) -> None:
    prop = guide.proposal
    assert prop is not None and prop.options is not None and prop.costs is not None
    priced = [r for r in prop.options.rows if r[2].text != "–"]  # KVM: not priced, said so
    money = [[float(c.text.strip("$").replace(",", "")) for c in r[2:]] for r in priced]
    assert len(money) == 2  # bare metal and ESXi
    for per_year, total in money:
        assert per_year * 3 == pytest.approx(total, abs=0.02)
    parts = {r[0].text: [c.text for c in r[1:]] for r in prop.costs.rows}
    n = _servers(guide)
    assert parts["Hardware"] == [f"{n} × $6,200 = ${n * 6200:,}"] * 2
    # ESXi: n servers × 16 cores × $135 a year × 3 years
    assert parts["Hypervisor licence"] == ["none: no hypervisor", f"${n * 16 * 135 * 3:,}"]


def _servers(guide: Guide) -> int:
    """The recommended fleet's servers (the floor beyond 8 measured cores sets them)."""
    assert guide.recommendation is not None
    best = guide.recommendation.result.recommendation
    assert best is not None
    return best.servers


def test_the_executive_summary_speaks_no_engineering(guide: Guide) -> None:
    first = chapters(guide, [])[0]
    assert first.id == "summary" and first.lead and first.num == "1"
    text = _text(first)
    n = _servers(guide)
    assert f"we recommend {n} × PowerEdge R460 (12 cores) on bare metal" in text
    for word in ("USL", "unpaired", "bootstrap", "Universal Scalability", "draws"):
        assert word not in text, word
    for basis in guide.choice.ids:
        assert basis not in text, basis
    # the guest shares per core count are the engineers' appendix
    shares = "What an ESXi guest carries of bare metal's figure on the same server"
    assert shares not in text
    assert shares in _text(chapters(guide, [])[-1])


def test_one_fleet_has_one_ht_mode_in_every_rendering(lab: tuple[Path, Path], guide: Guide) -> None:
    db, cat = lab
    argv = ["recommend", *DEMAND, "--db", str(db), "--catalog", str(cat)]
    doc = json.loads(runner.invoke(app, [*argv, "--json"]).stdout)
    ht = doc["recommendation"]["ht"]
    assert doc["recommendation"]["platform"] == "baremetal"
    assert doc["cheapest_fleet"]["ht"] == ht
    assert doc["platforms"]["baremetal"]["fleet"]["ht"] == ht
    text = " ".join(runner.invoke(app, argv).stdout.split())
    n = doc["recommendation"]["servers"]
    assert re.search(rf"Recommended: {n} × PowerEdge R460 \(12 cores, baremetal, HT {ht}\)", text)
    assert f"Bare metal: {n} servers: {n} × PowerEdge R460 (12 cores) (HT {ht})" in text
    rec = guide.recommendation
    cost = doc["recommendation"]["total_cost"]
    assert rec is not None and rec.headline.endswith(f"HT {ht} for ${cost:,.2f}")
    assert guide.proposal is not None and guide.proposal.options is not None
    bare = next(r for r in guide.proposal.options.rows if r[0].text.startswith("Bare metal"))
    assert bare[1].text.endswith(f"HT {ht}")
    assert f"hyper-threading {ht}" in guide.proposal.lead


def test_tick_labels_never_collide() -> None:
    ticks = [1, 2, 4, 8, 12, 16, 32, 64]
    for span, width in ((64.6, 2.6), (12.6, 2.6), (8.6, 5.8), (64.6, 0.5)):
        kept = spaced_ticks(
            ticks[: 5 if span < 13 else None][: 4 if span < 9 else None], span, width
        )
        gaps = [(b - a) * width / span for a, b in zip(kept, kept[1:], strict=False)]
        assert all(g >= MIN_TICK_GAP_IN - 1e-9 for g in gaps), (span, width, kept)
        assert kept[0] == 1 and kept[-1] == max(t for t in ticks if t < span)
    assert spaced_ticks([1, 2, 4, 8, 12], 12.6, 2.6) == [1, 2, 4, 8, 12]  # all fit


def test_every_platform_has_a_visible_marker() -> None:
    """A platform with no style fell back to a grey "x" with a white edge: invisible."""
    for platform in BasisPlatform:
        assert platform in PLATFORM_STYLE, platform
        assert PLATFORM_STYLE[platform]["marker"] not in ("x", "+", "|", "_", "P", "X")
        assert HT_MARKERS["on"][platform] not in ("x", "+", "|", "_", "P", "X")
