"""``recommend``, its ``--json`` and ``guide`` are three renderings of one answer.

A table of demands (RPS, TPS, mixed; headroom; N+1; platforms; HT; the bundled catalog
and a customer's catalog with licences, power and a 6-core model) goes through the three
commands as a user types them (Typer's CliRunner), and through the guide's data model
(:func:`sizing.app.guide.prepare`); the fleets, servers, costs and refusals must agree.
One case also goes through the printed PDF's text (``pdftotext``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sizing.app.guide import prepare
from sizing.cli import app
from sizing.cli.sizing_opts import inputs_of, sizing_request
from sizing.report.data.format import amount
from sizing.report.data.model import GuideRequest

runner = CliRunner()

CUSTOMER_CATALOG = """\
kind: catalog
name: Acme price list
source: Acme quote 2026-11
currency: USD
amortisation_months: 36
power: {price_per_kwh: 0.10}
licences:
  hypervisor: {per: socket, price: 1000}
servers:
  - {cores: 2, price: 900, watts: 80, name: Edge 2}
  - {cores: 4, price: 1300, watts: 120, name: Edge 4}
  - {cores: 6, price: 1700, watts: 150, name: Edge 6}
  - {cores: 8, price: 2200, watts: 200, name: Edge 8}
"""

# (arguments as typed, whether they use the customer catalog)
CASES: list[tuple[str, bool]] = [
    ("--rps 200000", False),
    ("--rps 100000 --headroom 0", False),
    ("--rps 500000", False),
    ("--tps 6000", False),
    ("--tps 3800 --platform kubernetes --ht on", False),
    ("--rps 150000 --tps 1000", False),
    ("--rps 100000 --redundancy n+1", False),
    ("--rps 150000 --platform hypervisor", False),
    ("--rps 150000 --platform esxi", False),
    ("--rps 100000 --platform kubernetes", False),
    ("--rps 300000 --headroom 30", False),
    ("--tps 20000", False),
    ("--rps 1000000 --redundancy n+1 --headroom 10", False),
    ("--rps 200000 --platform baremetal --ht off", False),
    ("--tps 5000 --ht on", False),  # refused: HT on is the Kubernetes data's only
    ("--rps 200000 --platform kvm", False),  # refused: the article's hypervisor is ESXi
    ("--rps 100000 --headroom 0 --platform hypervisor", True),
    ("--rps 250000", True),
    ("--rps 250000 --platform esxi", True),
    ("--tps 5000 --redundancy n+1", True),
    ("--rps 200000 --tps 2000 --headroom 25 --platform hypervisor", True),
    ("--rps 50000 --platform baremetal", True),
    ("--rps 400000 --redundancy n+1 --platform esxi", True),
    ("--tps 9000 --headroom 10", True),
]


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("one-answer")
    catalog = root / "acme.yml"
    catalog.write_text(CUSTOMER_CATALOG, encoding="utf-8")
    return {"db": root / "empty.sqlite", "catalog": catalog, "root": root}


def _argv(args: str, customer: bool, where: dict[str, Path]) -> list[str]:
    argv = args.split() + ["--db", str(where["db"])]
    if customer:
        argv += ["--catalog", str(where["catalog"])]
    return argv


def _guide_request(argv: list[str]) -> GuideRequest:
    """The guide's request from the same arguments, through the CLI's own builder."""
    opts: dict[str, Any] = {
        "headroom": "20",
        "platform": "any",
        "ht": "any",
        "redundancy": "none",
        "rps": None,
        "tps": None,
    }
    paths: dict[str, Path | None] = {"db": None, "catalog": None}
    i = 0
    while i < len(argv):
        name, value = argv[i].lstrip("-"), argv[i + 1]
        if name in paths:
            paths[name] = Path(value)
        else:
            opts[name] = value
        i += 2
    inputs = inputs_of("both", None, paths["catalog"], paths["db"], False, False, False, False)
    request = sizing_request(
        p95=None,
        max_servers=None,
        confidence=None,
        cpu=None,
        allow_translation=False,
        inputs=inputs,
        **opts,
    )
    return GuideRequest(date="2026-11-26", sizing=request)


def _fleet_facts(doc: dict[str, Any]) -> dict[str, Any]:
    """What must agree: the cheapest fleet, the identical fleet, what was refused."""
    rec = doc["recommendation"]
    fleet = doc["cheapest_fleet"]
    return {
        "fleet": None
        if fleet is None
        else (round(fleet["total_cost"], 2), json.dumps(fleet.get("servers"), sort_keys=True)),
        "identical": None
        if rec is None
        else (
            rec["platform"],
            rec["ht"],
            rec["cores_per_server"],
            rec["servers"],
            round(rec["total_cost"], 2),
            rec.get("capacity_rps"),
            rec.get("capacity_tps"),
        ),
        "rejected": sorted(r["reason"] for r in doc["rejected"]),
    }


@pytest.mark.parametrize(("args", "customer"), CASES, ids=[c[0] for c in CASES])
def test_recommend_json_and_guide_give_one_answer(
    args: str, customer: bool, where: dict[str, Path]
) -> None:
    argv = _argv(args, customer, where)
    text = runner.invoke(app, ["recommend", *argv])
    as_json = runner.invoke(app, ["recommend", *argv, "--json"])
    assert text.exit_code == as_json.exit_code, (text.stderr, as_json.stderr)
    doc = json.loads(as_json.stdout)

    got = prepare(_guide_request(argv))
    view = got.guide.recommendation
    assert view is not None
    # the guide's answer is recommend's: the same basis, fleets, costs and refusals
    assert got.guide.choice.ids == tuple(b["id"] for b in doc["basis"]["bases"])
    mine = json.loads(json.dumps(view.result.to_dict(), default=str))
    assert _fleet_facts(mine) == _fleet_facts(doc)
    assert got.hint == doc["hint"]
    # bare metal against the hypervisor: the same comparison in the JSON and the guide
    versus = got.guide.versus
    assert (None if versus is None else json.loads(json.dumps(versus.comparison.to_dict()))) == (
        doc["platforms"]
    )

    md = runner.invoke(app, ["guide", *argv, "--format", "md", "--out", "-"])
    assert md.exit_code == 0, md.stderr
    flat_text = " ".join(text.stdout.split())
    flat_md = " ".join(md.stdout.split())
    if doc["recommendation"] is None:
        assert text.exit_code == 1
        assert view.feasible is False
        assert doc["hint"] and doc["hint"][1:40] in " ".join(text.stderr.split())
        return
    assert text.exit_code == 0, text.stderr
    cost = doc["cheapest_fleet"]["total_cost"] if doc["cheapest_fleet"] else None
    cost = cost if cost is not None else doc["recommendation"]["total_cost"]
    shown = amount(cost, doc["currency"])
    assert shown in flat_text, flat_text
    assert shown in flat_md
    assert shown in view.headline


def test_the_printed_guide_says_what_recommend_says(where: dict[str, Path]) -> None:
    """One case through the PDF: the fleet and its cost as `recommend` prints them."""
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    argv = _argv("--rps 250000 --platform esxi", True, where)
    doc = json.loads(runner.invoke(app, ["recommend", *argv, "--json"]).stdout)
    pdf = where["root"] / "g.pdf"
    made = runner.invoke(app, ["guide", *argv, "--out", str(pdf)])
    assert made.exit_code == 0, made.stderr
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    flat_pdf = " ".join(text.split())
    fleet = doc["cheapest_fleet"] or doc["recommendation"]
    assert amount(fleet["total_cost"], doc["currency"]) in flat_pdf
    rec = doc["recommendation"]
    assert re.search(rf"{rec['servers']}\s*×", flat_pdf)
