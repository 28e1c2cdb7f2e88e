"""A catalog is a list of servers, not a map of core counts (issue 59).

The bank's catalog offers a Lenovo SR630 V3 (2 × 16 Intel cores) and an HPE DL325 Gen11
(1 × 32 AMD cores): the same 32 cores, two machines at two prices. Without CPUs named it
was refused ("32 cores listed twice"); with the AMD CPU named the HPE silently dropped out
of the answer and its --json. Each case runs through ``sizing recommend`` as typed, on
tests/labdb.py's simulated PowerEdge lab (Xeon Gold 6248, bare metal and an ESXi guest).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from tests.labdb import GOLD, build_lab

runner = CliRunner()

BANK = """\
kind: catalog
name: Bank quote
source: bank RFP 2026-11
date: 2026-11-20
currency: EUR
amortisation_months: 60
power: {price_per_kwh: 0.21}
support: {share_of_hardware_per_year: 0.08}
exchange_rates:
  USD: {rate: 0.92, source: ECB reference rate, date: 2026-11-19}
licences:
  esxi: {name: vSphere Foundation, per: core, price: 125, term: yearly,
         min_cores_per_socket: 16, min_per_order: 72}
  kvm: {name: Proxmox VE, per: socket, price: 510, term: yearly}
  all: {name: NGINX Plus, per: server, price: 2500, currency: USD, term: yearly}
servers:
  - {name: Lenovo SR630 V3 16c, cores: 16, sockets: 1, price: 7200, watts: 280}
  - {name: Lenovo SR630 V3, cores: 32, sockets: 2, price: 10900, watts: 420CPU}
  - {name: Lenovo SR650 V3, cores: 64, sockets: 2, price: 18800, watts: 600}
  - {name: HPE DL325 Gen11, cores: 32, sockets: 1, price: 9400, watts: 360AMD}
"""
DEMAND = ["--rps", "400000", "--tps", "8000", "--redundancy", "2n", "--years", "5"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("bank") / "lab.sqlite"
    build_lab(db)
    return db


def _catalog(tmp_path: Path, lenovo_cpu: str, amd_cpu: str) -> Path:
    text = BANK.replace("420CPU", "420" + lenovo_cpu).replace("360AMD", "360" + amd_cpu)
    path = tmp_path / "bank.yml"
    path.write_text(text, encoding="utf-8")
    return path


def _recommend(lab: Path, catalog: Path) -> tuple[str, dict[str, object]]:
    argv = ["recommend", *DEMAND, "--db", str(lab), "--catalog", str(catalog)]
    text = runner.invoke(app, argv)
    assert text.exit_code == 0, text.output
    got = runner.invoke(app, [*argv, "--json"])
    assert got.exit_code == 0, got.output
    return " ".join(text.stdout.split()), json.loads(got.stdout)


def _named(doc: dict[str, object]) -> set[str]:
    """Every server the JSON names: in a fleet, sized, or refused by name."""
    names: set[str] = set()
    for c in [doc["recommendation"], *doc["alternatives"]]:  # type: ignore[list-item]
        names.add(c["server_name"])  # type: ignore[index]
    fleet = doc["cheapest_fleet"]
    for part in fleet["servers"] if fleet else []:  # type: ignore[index]
        names.add(part["server_name"])
    for r in doc["rejected"]:  # type: ignore[attr-defined]
        names.add(r["server"])
    return names


def test_two_servers_of_one_core_count_are_both_priced(lab: Path, tmp_path: Path) -> None:
    text, doc = _recommend(lab, _catalog(tmp_path, "", ""))
    assert {"Lenovo SR630 V3", "HPE DL325 Gen11"} <= _named(doc)
    # the dearer of the two 32-core servers is named, with both prices
    passed = [r for r in doc["rejected"] if r["server"] == "Lenovo SR630 V3"]  # type: ignore[attr-defined]
    assert passed and "HPE DL325 Gen11 (1 × 32 cores)" in passed[0]["reason"]
    assert "Lenovo SR630 V3 (2 × 16 cores): EUR" in text


def test_a_server_of_another_cpu_is_refused_by_name(lab: Path, tmp_path: Path) -> None:
    text, doc = _recommend(lab, _catalog(tmp_path, "", ", cpu_model: AMD EPYC 9354P"))
    refused = [r for r in doc["rejected"] if r["server"] == "HPE DL325 Gen11"]  # type: ignore[attr-defined]
    assert refused, doc["rejected"]
    assert all("add an AMD EPYC 9354P host to the inventory" in r["reason"] for r in refused)
    assert "add an AMD EPYC 9354P host to the inventory" in text
    # the lab's run measures the Gold 6248: never named as the run that sizes the AMD one
    assert "To size the HPE DL325 Gen11" not in text
    assert all(f"measured on {GOLD}" in r["reason"] for r in refused)


def test_the_same_server_twice_is_still_refused(tmp_path: Path, lab: Path) -> None:
    path = tmp_path / "twice.yml"
    path.write_text(
        "kind: catalog\nservers:\n  - {cores: 8, price: 2000, name: A}\n"
        "  - {cores: 8, price: 2100, name: A}\n",
        encoding="utf-8",
    )
    got = runner.invoke(
        app, ["recommend", "--rps", "1000", "--db", str(lab), "--catalog", str(path)]
    )
    assert got.exit_code != 0
    assert "servers.1.name: 8 cores listed twice" in got.stderr
    assert "Traceback" not in got.output


def _money(text: str) -> float:
    return float(text.rsplit("EUR ", 1)[1].replace(",", ""))


def test_the_bank_guide_adds_up_and_says_one_thing(lab: Path, tmp_path: Path) -> None:
    """The guide's cost table, headline, difference and 2N words on the bank's case."""
    cat = _catalog(tmp_path, "", "")
    argv = [*DEMAND, "--growth", "20%", "--db", str(lab), "--catalog", str(cat)]
    md = runner.invoke(app, ["guide", *argv, "--format", "md", "--out", "-"])
    assert md.exit_code == 0, md.output
    doc = json.loads(runner.invoke(app, ["recommend", *argv, "--json"]).stdout)
    term = " ".join(runner.invoke(app, ["recommend", *argv]).stdout.split())
    lines = md.stdout.splitlines()
    start = lines.index(next(x for x in lines if x.startswith("### What each option costs")))
    body = lines[start + 4 :]
    body = body[: body.index("")]  # the table ends at its first blank line
    table = [x.strip("|").split(" | ") for x in body]
    rows = {r[0].strip(): [c.strip() for c in r[1:]] for r in table}
    # every column's parts add up to its total; NGINX Plus under its own name
    assert "NGINX Plus licence" in rows and rows["Hypervisor licence"][0].startswith("none")
    for col in range(2):
        parts = [_money(v[col]) for k, v in rows.items() if k != "Total" and "EUR" in v[col]]
        assert sum(parts) == pytest.approx(_money(rows["Total"][col]), abs=0.015)
    # one headline figure: the plan's total, the same in the summary, the box and the JSON
    plan_total = doc["cash_flow"]["total"]
    flat = " ".join(md.stdout.split())
    assert f"for EUR {plan_total:,.2f} over 5 years" in flat
    assert f"for EUR {doc['recommended']['total_cost']:,.2f}" not in flat
    # the difference between options: the guide's and the terminal's are one figure
    extra = doc["platforms"]["extra_cost"]
    assert extra == pytest.approx(
        doc["platforms"]["guest"]["total"] - doc["platforms"]["baremetal"]["total"], abs=0.015
    )
    said = f"costs EUR {extra:,.2f} more"
    assert said in flat and said in term
    # 2N is one half of the fleet, not a spare
    assert "one spare" not in flat
    assert "(one half of the" in flat


def test_a_measured_kvm_guest_is_in_every_table_of_platforms(tmp_path: Path) -> None:
    """The lab with ESXi and KVM guests: KVM in the guide's sizing tables, its options and
    the comparison, and in the terminal's "a guest carries" lines."""
    db = tmp_path / "kvm.sqlite"
    build_lab(db, kvm=True)
    argv = ["--rps", "400000", "--db", str(db), "--catalog", str(_catalog(tmp_path, "", ""))]
    md = runner.invoke(app, ["guide", *argv, "--format", "md", "--out", "-"])
    assert md.exit_code == 0, md.output
    heads = [x for x in md.stdout.splitlines() if x.startswith("| Hardware cost | CPU cores")]
    assert heads and all("RPS – KVM" in h and "RPS – ESXi" in h for h in heads)
    options = md.stdout.split("### The options side by side")[1].split("###")[0]
    assert "| KVM |" in options and "| ESXi |" in options
    text = runner.invoke(app, ["recommend", *argv]).stdout
    flat = " ".join(text.split())
    # each guest's share named and under its own platform's line (issue 62: it was "a guest
    # carries of bare metal's RPS", under the KVM line with ESXi's shares)
    lines = text.splitlines()
    for name, article in (("KVM", "a"), ("ESXi", "an")):
        share = f"    {article} {name} guest carries"
        (at,) = [i for i, x in enumerate(lines) if x.startswith(share)]
        above = [x for x in lines[:at] if re.match(r"  \S[^:]*: ", x)]
        assert above[-1].startswith(f"  {name}: "), (name, above[-1])
        assert re.match(rf"    {article} {name} guest carries \d+%", lines[at])
    assert "of bare metal's RPS" in flat


def test_a_server_naming_no_cpu_is_said_to_be_the_measured_one(lab: Path, tmp_path: Path) -> None:
    text, doc = _recommend(lab, _catalog(tmp_path, "", ", cpu_model: AMD EPYC 9354P"))
    assumed = doc["cpu_assumed"]
    assert assumed["cpu"] == GOLD
    assert set(assumed["servers"]) == {"Lenovo SR630 V3 16c", "Lenovo SR630 V3", "Lenovo SR650 V3"}
    assert f"Taken to be the {GOLD} the figures are of" in text


def test_the_run_named_for_another_cpu_targets_a_host_of_that_cpu(tmp_path: Path) -> None:
    """--cpu with --allow-cpu-translation: the run that would replace the translation
    measures an AMD host, never the lab's Gold 6248 inventory."""
    from sizing.store import Store
    from tests.labgen import store_lab

    db = tmp_path / "gen.sqlite"
    with Store(db) as store:
        store_lab(store)
    cat = _catalog(tmp_path, "", ", cpu_model: AMD EPYC 9354P")
    cat.write_text(
        cat.read_text(encoding="utf-8")
        + "ceilings:\n  - {cpu_model: AMD EPYC 9354P, sign_per_core: 2100, source: sheet}\n",
        encoding="utf-8",
    )
    argv = ["recommend", "--rps", "400000", "--tps", "8000", "--db", str(db), "--catalog"]
    argv += [str(cat), "--cpu", "AMD EPYC 9354P", "--allow-translation", "--allow-cpu-translation"]
    got = runner.invoke(app, [*argv, "--json"])
    assert got.exit_code == 0, got.output
    nxt = json.loads(got.stdout)["measure_next"]
    assert nxt
    for m in nxt:
        assert "-i INVENTORY" in m["command"] and "lab.yml" not in m["command"]
        assert "add an AMD EPYC 9354P host to the inventory" in m["note"]


def test_the_table_names_every_server_in_the_catalogs_currency(lab: Path, tmp_path: Path) -> None:
    """`sizing table` on the bank's catalog: the second 32-core server is named, and the
    cost per 1k RPS is headed in EUR (it was `$/1k RPS`)."""
    argv = ["table", "--db", str(lab), "--catalog", str(_catalog(tmp_path, "", ""))]
    got = runner.invoke(app, argv)
    assert got.exit_code == 0, got.output
    flat = " ".join(got.stdout.split())
    assert "HPE DL325 Gen11 (32 cores) EUR 9,400" in flat
    assert "EUR/1k RPS" in flat and "$" not in got.stdout
