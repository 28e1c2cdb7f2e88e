"""The commercial terms real proposals use (issue 44), each checked by hand: a per-core
licence's per-CPU minimum and its per-order minimum, a per-server (instance) licence, a
licence in its own currency at a stated rate, discounts per line and per catalog, 2N
fleets, growth over the years (the cash flow adds up to its total), misspelt keys refused
with the expected words; and the fleet search under an order minimum or 2N proved exact
against SciPy's integer-program solver."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sizing import paths
from sizing.catalog import load_catalog
from sizing.cli import app
from sizing.engine.costs import CostCatalog
from sizing.engine.fleet import Minimum, Offer, cheapest, identical, order_cost
from sizing.errors import InputError

PROPOSAL = paths.PROFILES / "catalog-proposal-example.yml"
HEAD = "amortisation_months: 36\n"
R460 = "  - {name: PowerEdge R460, cores: 12, sockets: 1, price: 6200, watts: 300}\n"


def _catalog(tmp_path: Path, text: str) -> CostCatalog:
    p = tmp_path / "catalog.yml"
    p.write_text(text, encoding="utf-8")
    return load_catalog(p)


def _problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(InputError) as info:
        _catalog(tmp_path, text)
    return info.value.problems


# -- licences --------------------------------------------------------------------------


def test_a_per_core_licence_pays_16_cores_a_cpu_on_a_2_x_12_core_server(tmp_path: Path) -> None:
    cat = _catalog(
        tmp_path,
        HEAD + "licences: {esxi: {per: core, price: 135, term: yearly, min_cores_per_socket: 16}}\n"
        "servers:\n  - {cores: 24, sockets: 2, price: 9000}\n",
    )
    assert cat.licence_units("esxi", 24) == (32,)  # 2 CPUs x 16, not 24
    assert cat.server_cost("esxi", 24).licence == pytest.approx(32 * 135 * 3)  # 12,960


def test_the_72_core_order_minimum_is_the_orders_not_each_servers(tmp_path: Path) -> None:
    cat = _catalog(
        tmp_path,
        HEAD + "licences:\n  esxi: {per: core, price: 135, term: yearly, "
        "min_cores_per_socket: 16, min_per_order: 72}\nservers:\n" + R460,
    )
    # 4 x R460: 4 x 16 = 64 cores billed, below 72: the order pays 72 cores, 3 years
    assert cat.fleet_cost("esxi", {12: 4}).licence == pytest.approx(72 * 135 * 3)  # 29,160
    # 5 x R460: 80 cores, above the minimum: 80 cores
    assert cat.fleet_cost("esxi", {12: 5}).licence == pytest.approx(80 * 135 * 3)  # 32,400
    # one server's own cost never carries the order's minimum
    assert cat.server_cost("esxi", 12).licence == pytest.approx(16 * 135 * 3)


def test_a_licence_per_server_an_nginx_plus_instance(tmp_path: Path) -> None:
    cat = _catalog(
        tmp_path,
        HEAD + "licences: {baremetal: {per: server, price: 2500, term: yearly}}\n"
        "servers:\n  - {cores: 64, sockets: 2, price: 19500}\n",
    )
    assert cat.licence_units("baremetal", 64) == (1,)
    assert cat.server_cost("baremetal", 64).licence == pytest.approx(2500 * 3)


def test_a_licence_in_euros_is_converted_at_the_stated_rate(tmp_path: Path) -> None:
    cat = _catalog(
        tmp_path,
        HEAD + "exchange_rates: {EUR: {rate: 1.08, source: ECB, date: 2026-11-02}}\n"
        "licences: {kvm: {per: socket, price: 510, currency: EUR, term: yearly}}\n"
        "servers:\n  - {cores: 32, sockets: 2, price: 11800}\n",
    )
    # 510 EUR x 1.08 = 550.80 USD per socket a year; 2 sockets x 3 years = 3,304.80
    assert cat.licences["kvm"][0].price == pytest.approx(550.80)
    assert cat.server_cost("kvm", 32).licence == pytest.approx(3304.80)
    assert cat.exchange_rates["EUR"] == (1.08, "ECB, 2026-11-02")


def test_a_licence_in_another_currency_without_a_rate_is_one_clear_line(tmp_path: Path) -> None:
    problems = _problems(
        tmp_path,
        "licences: {kvm: {per: socket, price: 510, currency: EUR}}\nservers:\n" + R460,
    )
    assert problems == [
        "licences.kvm.currency: EUR is not the catalog's USD: state exchange_rates: "
        "{EUR: {rate: <1 EUR in USD>, source: ...}}"
    ]


def test_discounts_per_line_and_per_catalog(tmp_path: Path) -> None:
    cat = _catalog(
        tmp_path,
        HEAD + "discount: 0.10\n"
        "licences:\n  esxi: {per: core, price: 135, term: yearly, discount: 0.25}\n"
        "  kvm: {per: socket, price: 500, term: yearly}\n"
        "servers:\n" + R460 + "  - {cores: 32, sockets: 2, price: 11800, discount: 0.20}\n",
    )
    small, large = cat.offer(12), cat.offer(32)
    assert small is not None and large is not None
    assert small.price == pytest.approx(6200 * 0.90)  # the catalog's 10%: 5,580
    assert large.price == pytest.approx(11800 * 0.80)  # its own 20%: 9,440
    assert cat.licences["esxi"][0].price == pytest.approx(135 * 0.75)  # its own 25%: 101.25
    assert cat.licences["kvm"][0].price == pytest.approx(500 * 0.90)  # the catalog's: 450
    assert small.list_price == 6200


# -- misspelt keys ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "exchange_rate: {}\nservers:\n" + R460,
            "exchange_rate: unknown field; did you mean exchange_rates? (expected: kind, name, "
            "currency, source, date, servers, licences, support, power, amortisation_months, "
            "ceilings, discount, exchange_rates)",
        ),
        (
            "licences: {esxi: {per: core, price: 1, min_per_ordr: 72}}\nservers:\n" + R460,
            "licences.esxi.min_per_ordr: unknown field; did you mean min_per_order? (expected: "
            "per, price, term, min_cores_per_socket, min_per_order, currency, discount, source, "
            "name)",
        ),
        (
            "exchange_rates: {EUR: {rate: 1.08, sorce: x}}\nservers:\n" + R460,
            "exchange_rates.EUR.sorce: unknown field; did you mean source? (expected: rate, "
            "source, date)",
        ),
        (
            "servers:\n  - {cores: 12, price: 6200, discont: 0.1}\n",
            "servers.0.discont: unknown field; did you mean discount? (expected: cores, price, "
            "sockets, watts, name, cpu_model, discount, source)",
        ),
    ],
)
def test_a_misspelt_key_is_refused_with_the_expected_words(
    tmp_path: Path, text: str, line: str
) -> None:
    assert line in _problems(tmp_path, text)


def test_a_discount_of_100_percent_or_more_is_refused(tmp_path: Path) -> None:
    problems = _problems(tmp_path, "discount: 1\nservers:\n" + R460)
    assert problems and problems[0].startswith("discount: ")


# -- the fleet search: exact under an order minimum and 2N -----------------------------

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True)


def _milp(offers: list[Offer], need: float, mins: list[Minimum], rule: str) -> float:
    """The same problem for SciPy's MILP (HiGHS): x integer, one continuous shortfall s per
    order minimum (s ≥ least − Σ units·x, s ≥ 0, costing its price); 2N: one half y at
    twice the price and units; N+1: one solve per largest type k."""
    np = pytest.importorskip("numpy")
    opt = pytest.importorskip("scipy.optimize")
    n, k_min = len(offers), len(mins)
    twice = 2.0 if rule == "2n" else 1.0
    c = np.array([o.price * twice for o in offers] + [m.price for m in mins])
    m = np.array([o.share for o in offers] + [0.0] * k_min)
    integrality = np.array([1] * n + [0] * k_min)

    def solve(rows: list[tuple[object, float]], lb: object, ub: object) -> float:
        cons = [opt.LinearConstraint(np.array(a)[None, :], lo, np.inf) for a, lo in rows]
        res = opt.milp(
            c,
            constraints=cons,
            integrality=integrality,
            bounds=opt.Bounds(lb, ub),
            options={"mip_rel_gap": 0.0},
        )
        return float(res.fun) if res.success else math.inf

    order_rows = []
    for j, mm in enumerate(mins):
        a = [u * twice for u in mm.units] + [1.0 if i == j else 0.0 for i in range(k_min)]
        order_rows.append((a, mm.least))
    if rule != "n+1":
        return solve([(m, need), *order_rows], 0, np.inf)
    best = math.inf
    for k in range(n):
        small = np.array([o.share <= offers[k].share for o in offers] + [True] * k_min)
        lb = np.zeros(n + k_min)
        lb[k] = 1
        ub = np.where(small, np.inf, 0.0)
        best = min(best, solve([(m * small, need + offers[k].share), *order_rows], lb, ub))
    return best


offer_st = st.builds(
    Offer, price=st.floats(100.0, 20000.0, allow_nan=False), share=st.floats(0.05, 2.0)
)


@SETTINGS
@given(
    offers=st.lists(offer_st, min_size=1, max_size=4),
    need=st.floats(0.2, 12.0),
    unit_price=st.floats(10.0, 3000.0),
    units=st.lists(st.integers(0, 64), min_size=4, max_size=4),
    least=st.integers(0, 200),
    rule=st.sampled_from(["none", "n+1", "2n"]),
)
def test_the_fleet_search_is_exact_under_an_order_minimum_and_2n(
    offers: list[Offer],
    need: float,
    unit_price: float,
    units: list[int],
    least: int,
    rule: str,
) -> None:
    u = tuple(float(x) for x in units[: len(offers)])
    # an offer's price includes its own licence units (as a catalog's server cost does)
    priced = [Offer(o.price + unit_price * x, o.share) for o, x in zip(offers, u, strict=True)]
    mins = [Minimum(unit_price, u, float(least))]
    got = cheapest(priced, need, n_plus_1=rule == "n+1", mirrored=rule == "2n", minimums=mins)
    assert got is not None
    counts = list(got.counts)
    carried = sum(o.share * x for o, x in zip(priced, counts, strict=True))
    if rule == "n+1":
        carried -= max(o.share for o, x in zip(priced, counts, strict=True) if x > 0)
    if rule == "2n":
        assert all(x % 2 == 0 for x in counts)  # every server has its twin
        carried /= 2
    assert carried >= need - 1e-6
    assert got.cost == pytest.approx(order_cost(priced, counts, mins))
    best = _milp(priced, need, mins, rule)
    if got.exact:
        assert got.cost == pytest.approx(best, rel=1e-7)


def test_an_order_minimum_can_make_fewer_larger_servers_cheaper() -> None:
    """By hand: a small server at 100 + 1 licence unit, a large one (three times the share)
    at 290 + 4 units; a unit costs 10, an order pays at least 8, the need is 3. On the
    per-server costs three small (3 x 110) and one large (330) tie; with the minimum three
    small pay 330 + 5 units short (50) = 380, one large 330 + 4 short (40) = 370."""
    small, large = Offer(100 + 10, 1.0), Offer(290 + 40, 3.0)
    mins = [Minimum(10.0, (1.0, 4.0), 8.0)]
    got = cheapest([small, large], 3.0, minimums=mins)
    assert got is not None and got.counts == (0, 1) and got.cost == pytest.approx(370.0)
    assert order_cost([small, large], [3, 0], mins) == pytest.approx(380.0)


def test_2n_doubles_the_identical_fleet() -> None:
    assert identical(Offer(1.0, 0.3), 1.0 / 0.75, mirrored=True) == 2 * math.ceil(
        (1 / 0.75) / 0.3
    )  # 5 a side, 10 in all
    assert identical(Offer(1.0, 0.3), 1.0 / 0.75, n_plus_1=True) == 6


# -- through the CLI: growth and 2N on the scenario (reference data, empty database) ---


def _recommend(tmp_path: Path, *extra: str) -> dict[str, Any]:
    args = ["recommend", "--rps", "350000", "--tps", "12000", "--headroom", "25"]
    args += ["--catalog", str(PROPOSAL), "--db", str(tmp_path / "empty.sqlite"), *extra]
    got = CliRunner().invoke(app, [*args, "--json"])
    assert got.exit_code == 0, got.output
    doc: dict[str, Any] = json.loads(got.stdout)
    return doc


def test_growth_buys_for_year_1_and_adds_servers_and_the_rows_add_up(tmp_path: Path) -> None:
    doc = _recommend(tmp_path, "--platform", "esxi", "--years", "3", "--growth", "30%")
    plan = doc["cash_flow"]
    rows = plan["rows"]
    assert [r["year"] for r in rows] == [1, 2, 3]
    assert [r["demand_rps"] for r in rows] == [350000, 455000, 591500]  # +30% a year
    # the fleet never shrinks, and what is bought is what is added
    fleets = [r["servers"] for r in rows]
    assert fleets == sorted(fleets) and fleets[-1] > fleets[0]
    assert sum(b["count"] for r in rows for b in r["bought"]) == fleets[-1]
    # each year by hand: the catalog's prices (R460 $6,200, 300 W; ESXi $135 a core a year,
    # 16 cores a CPU, 72 an order; support 10% a year; power $0.16/kWh, 8,760 h a year)
    for r in rows:
        n = r["servers"]
        bought = sum(b["count"] for b in r["bought"])
        assert r["hardware"] == pytest.approx(6200 * bought)
        assert r["licence"] == pytest.approx(135 * max(16 * n, 72))
        assert r["support"] == pytest.approx(0.10 * 6200 * n)
        assert r["power"] == pytest.approx(0.300 * 8760 * 0.16 * n, abs=0.01)
        parts = r["hardware"] + r["licence"] + r["support"] + r["power"]
        assert r["total"] == pytest.approx(parts, abs=0.011)
    assert plan["total"] == pytest.approx(sum(r["total"] for r in rows), abs=0.02)
    assert plan["last_year_fleet"] == rows[-1]["fleet"]
    said = {a["item"]: a for a in doc["assumptions"]}
    assert said["Growth"]["source"] == "--growth"
    assert said["Period"] == {
        "item": "Period",
        "value": "36 months (3 years)",
        "source": "--years 3",
    }


def test_without_growth_the_years_add_up_to_the_fleets_total_cost(tmp_path: Path) -> None:
    doc = _recommend(tmp_path, "--years", "3")
    plan = doc["cash_flow"]
    assert plan["total"] == pytest.approx(doc["cheapest_fleet"]["total_cost"], abs=0.02)
    assert [len(r["bought"]) for r in plan["rows"]] == [1, 0, 0]  # all bought in year 1


def test_2n_pairs_every_server_and_counts_one_half(tmp_path: Path) -> None:
    doc = _recommend(tmp_path, "--years", "3", "--redundancy", "2n")
    best = doc["recommendation"]
    assert doc["demand"]["redundancy"] == "2n"
    assert best["servers"] % 2 == 0 and best["counted_servers"] == best["servers"] // 2
    one = _recommend(tmp_path, "--years", "3")["recommendation"]
    assert (best["platform"], best["cores_per_server"]) == (
        one["platform"],
        one["cores_per_server"],
    )
    assert best["servers"] == 2 * one["servers"]  # the same demand, each half alone
    fleet = doc["cheapest_fleet"]
    assert all(s["count"] % 2 == 0 for s in fleet["servers"])


def test_the_terminal_shows_the_plan_the_assumptions_and_2n_in_100_columns(
    tmp_path: Path,
) -> None:
    args = ["recommend", "--rps", "350000", "--tps", "12000", "--headroom", "25"]
    args += ["--catalog", str(PROPOSAL), "--db", str(tmp_path / "empty.sqlite")]
    out = CliRunner().invoke(app, [*args, "--years", "3", "--growth", "30%"]).stdout
    assert "Year by year (3 years, the demand growing 30% a year;" in out
    assert "Total over 3 years: $" in out
    flat = " ".join(out.split())
    assert (
        "vSphere Foundation (ESXi licence): $135 per core a year, at least 16 cores per CPU, at "
        "least 72 cores" in flat
    )
    assert (
        "Proxmox VE (KVM licence): EUR 510 per socket a year: $550.80 per socket a year at 1 "
        "EUR = 1.08" in flat
    )
    assert "Bare metal licence: no hypervisor licence" in out
    assert "no licence priced for baremetal" not in out
    pairs = CliRunner().invoke(app, [*args, "--redundancy", "2n"]).stdout
    assert "2N (HA pairs)" in pairs and "the other half down" in pairs
    for text in (out, pairs):
        assert max(len(x) for x in text.splitlines()) <= 100


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        (["--growth", "30%"], "--growth needs a period of whole years: give --years N"),
        (["--years", "0"], "--years must be a whole number from 1 to 20, not 0"),
        (["--growth", "-5"], "--growth must be between 0% and 1,000% a year, not -5%"),
    ],
)
def test_bad_terms_are_one_clear_line(tmp_path: Path, extra: list[str], line: str) -> None:
    got = CliRunner().invoke(
        app,
        ["recommend", "--rps", "1000", "--db", str(tmp_path / "e.sqlite"), *extra],
    )
    assert got.exit_code != 0 and line in got.stderr and "Traceback" not in got.output


def test_the_order_minimum_through_recommend(tmp_path: Path) -> None:
    """4 × R460 on ESXi bill 4 × 16 = 64 cores, below the 72-core order minimum: the order
    pays 72 × $135 × 3 years = $29,160, $3,240 more than the servers' own licences."""
    args = ["recommend", "--rps", "250000", "--tps", "9000", "--headroom", "25"]
    args += ["--catalog", str(PROPOSAL), "--db", str(tmp_path / "e.sqlite")]
    got = CliRunner().invoke(app, [*args, "--platform", "esxi", "--json"])
    doc = json.loads(got.stdout)
    best = doc["recommendation"]
    assert (best["servers"], best["cores_per_server"]) == (4, 12)
    assert best["cost"]["licence"] == pytest.approx(72 * 135 * 3)
    assert best["total_cost"] == pytest.approx(4 * best["cost_per_server"] + 8 * 135 * 3)
    text = CliRunner().invoke(app, [*args, "--platform", "esxi"]).stdout
    assert "+ $3,240 to vSphere Foundation's order minimum of 72 cores" in " ".join(text.split())


def test_a_server_cheaper_per_server_but_paying_fewer_units_does_not_dominate() -> None:
    """By hand: a at 100 + 10 units (200), b at 190 with no units, the same share; units at
    10, at least 10 an order. On the per-server cost b is cheaper (190 < 200) and would
    drop a; with the order, a alone pays 200 and b alone 190 + 10 units short (100) =
    290: a is the cheapest."""
    a, b = Offer(200.0, 1.0), Offer(190.0, 1.0)
    mins = [Minimum(10.0, (10.0, 0.0), 10.0)]
    got = cheapest([a, b], 1.0, minimums=mins)
    assert got is not None and got.counts == (1, 0) and got.cost == pytest.approx(200.0)
