"""The printed guide and the terminal cannot overflow (issue 59): pinned examples.

The PDF is slow to print (about ten seconds), so the property suite
(tests/unit/test_proposal_invariants.py) reads the Markdown guide, and these pinned cases
read the PDF's text (pdftotext): a EUR catalog with a USD licence at a stated rate, 2N,
5 and 10 years, growth up to 100% a year so that the amounts reach 10⁹. Every amount of
``recommend --json`` (the recommended fleet's total, each year's parts and total, the
plan's total, each option's) must appear whole in the PDF's text, and the terminal's lines
must fit 100 columns. The lab is tests/labdb.py's simulated one (not a measurement).
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

from sizing.cli import app
from sizing.report.data.format import amount, currency_sign
from tests.labdb import build_lab
from tests.unit.test_catalog_servers import BANK

runner = CliRunner()

CASES = [
    ["--rps", "400000", "--tps", "8000", "--redundancy", "2n", "--years", "5", "--growth", "20%"],
    [
        "--rps",
        "3000000",
        "--tps",
        "60000",
        "--redundancy",
        "n+1",
        "--years",
        "10",
        "--growth",
        "100%",
    ],
    # a reverse proxy: OpenShift priced beside bare metal, ESXi and KVM (four options)
    [
        "--rps",
        "400000",
        "--tps",
        "8000",
        "--redundancy",
        "2n",
        "--years",
        "5",
        "--growth",
        "20%",
        "--role",
        "proxy",
    ],
]
# OpenShift per socket pair beside the bank's licences (its Kubernetes option)
OPENSHIFT = (
    "  kubernetes: {name: OpenShift, per: socket-pair, price: 2900, term: yearly}\n"
    "  all: {name: NGINX Plus, per: instance,"
)


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("layout")
    db, cat = root / "lab.sqlite", root / "bank.yml"
    build_lab(db, kvm=True, reps=5)
    build_lab(db, kvm=True, reps=5, role="proxy", seed=2)
    text = BANK.replace("420CPU", "420").replace("360AMD", "360")
    cat.write_text(text.replace("  all: {name: NGINX Plus, per: server,", OPENSHIFT), "utf-8")
    return {"root": root, "db": db, "catalog": cat}


def _amounts(doc: dict[str, Any]) -> list[float]:
    """Every amount a reader checks: the recommended total, each year's, each option's."""
    out = [doc["recommended"]["total_cost"]]
    plan = doc["cash_flow"]
    out.append(plan["total"])
    for r in plan["rows"]:
        out += [r["hardware"], r["licence"], r["support"], r["power"], r["total"]]
    platforms = doc["platforms"] or {}
    for side in [platforms.get("baremetal"), platforms.get("guest"), *platforms.get("others", [])]:
        if side and side.get("total") is not None:
            out.append(side["total"])
    return out


def _whole(value: float, currency: str, text: str) -> bool:
    """``value`` in ``text`` as printed, never cut: with or without its currency, and
    neither preceded nor followed by more digits."""
    plain = amount(value, currency).removeprefix(currency_sign(currency))
    return re.search(rf"(?<![\d,.]){re.escape(plain)}(?![\d,]|\.\d)", text) is not None


@pytest.mark.parametrize(
    "args", CASES, ids=["5y-2n-growth20", "10y-n+1-growth100", "5y-2n-proxy-openshift"]
)
def test_every_amount_of_the_json_is_whole_in_the_pdf_and_the_terminal(
    args: list[str], where: dict[str, Path]
) -> None:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    argv = [*args, "--db", str(where["db"]), "--catalog", str(where["catalog"])]
    doc = json.loads(runner.invoke(app, ["recommend", *argv, "--json"]).stdout)
    text = runner.invoke(app, ["recommend", *argv])
    assert text.exit_code == 0, text.output
    for line in text.stdout.splitlines():
        assert len(line) <= 100, line
    pdf = where["root"] / "guide.pdf"
    made = runner.invoke(app, ["guide", *argv, "--out", str(pdf)])
    assert made.exit_code == 0, made.output
    got = subprocess.run(
        ["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    flat = " ".join(got.split())
    term = " ".join(text.stdout.split())
    cur = doc["currency"]
    assert max(_amounts(doc)) > (1e8 if "100%" in args else 1e5)
    for v in _amounts(doc):
        assert _whole(v, cur, flat), (v, amount(v, cur))
        assert _whole(v, cur, term), (v, amount(v, cur))
    # each option's total, printed with its currency (the year table's cells are headed
    # "(EUR)"): on one line with it, a table's cell never wrapping between the two
    for v in _amounts(doc)[:2] + _amounts(doc)[2 + 5 * len(doc["cash_flow"]["rows"]) :]:
        assert amount(v, cur) in got, (v, amount(v, cur))
    # and no amount anywhere (a cell, a sentence) is cut after its currency code
    cut = re.search(rf"(?m)^.{{0,40}}\b{cur}\n-?\d[\d,.]*", got)
    assert cut is None, cut.group(0) if cut else ""
    assert "$" not in flat.replace("$2,500", "")  # the one USD list price, quoted as such
    # the sizing tables of a lab with ESXi and KVM guests: every column on the page (the
    # overheads in a table of their own: they ran off it, the last column cut)
    for head in ("RPS – KVM", "SSL TPS – KVM", "SSL TPS – ESXi"):
        assert head in flat, head
