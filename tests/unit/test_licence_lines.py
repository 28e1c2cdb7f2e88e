"""Several licences on one platform (issue 44): a key holds a list of named licence lines
that all apply, and ``all`` holds the lines every platform pays (an NGINX Plus
subscription per instance, bare metal included). Each checked by hand: ESXi per core plus
NGINX Plus per server on a 2 × 16-core fleet, bare metal with NGINX Plus only, one line's
order minimum beside another line; the fleet search with several order minimums proved
exact against SciPy's integer-program solver; the names in every output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sizing.catalog import load_catalog
from sizing.cli import app
from sizing.engine.costs import CostCatalog, Licence, ServerOffer
from sizing.engine.fleet import Minimum, Offer, cheapest, order_cost
from sizing.errors import InputError
from tests.unit.test_commercial_terms import _milp

HEAD = "amortisation_months: 36\n"
R660 = "  - {name: PowerEdge R660, cores: 32, sockets: 2, price: 11800, watts: 480}\n"
VSPHERE = "{name: vSphere Foundation, per: core, price: 135, term: yearly, min_cores_per_socket: 16"
NGINX_PLUS = "{name: NGINX Plus, per: server, price: 2500, term: yearly}"


def _catalog(tmp_path: Path, text: str) -> CostCatalog:
    p = tmp_path / "catalog.yml"
    p.write_text(text, encoding="utf-8")
    return load_catalog(p)


def _problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(InputError) as info:
        _catalog(tmp_path, text)
    return info.value.problems


def _lines(cost: Any) -> dict[str, float]:
    return {x.name: x.cost for x in cost.licences}


def test_esxi_per_core_and_nginx_plus_per_server_on_two_2_x_16_core_servers(
    tmp_path: Path,
) -> None:
    """By hand, 3 years: vSphere 2 servers × 2 CPUs × 16 cores × $135 × 3 = $25,920; NGINX
    Plus 2 instances × $2,500 × 3 = $15,000; the licence is both, $40,920."""
    cat = _catalog(
        tmp_path,
        HEAD + f"licences:\n  esxi: [{VSPHERE}}}]\n  all: [{NGINX_PLUS}]\nservers:\n" + R660,
    )
    assert cat.licence_units("esxi", 32) == (32, 1)
    cost = cat.fleet_cost("esxi", {32: 2})
    assert _lines(cost) == {"vSphere Foundation": 25920.0, "NGINX Plus": 15000.0}
    assert cost.licence == pytest.approx(40920.0)
    assert cost.total == pytest.approx(2 * 11800 + 40920.0)
    assert cost.licence_key == "esxi" and not cost.no_hypervisor_licence
    assert cat.basis_for("esxi").endswith("hardware + licence (vSphere Foundation + NGINX Plus)")


def test_bare_metal_with_nginx_plus_only_pays_no_hypervisor_licence(tmp_path: Path) -> None:
    cat = _catalog(
        tmp_path,
        HEAD + f"licences:\n  esxi: {VSPHERE}}}\n  all: {NGINX_PLUS}\nservers:\n" + R660,
    )
    cost = cat.fleet_cost("baremetal", {32: 2})
    assert _lines(cost) == {"NGINX Plus": 15000.0}  # 2 × $2,500 × 3 years
    assert cost.no_hypervisor_licence and cost.licence_key == ""
    assert "no hypervisor licence (bare metal) + licence (NGINX Plus)" in cat.basis_for("baremetal")
    assert cat.scope("baremetal").left_out == ("support not priced", "power not priced")
    # a platform no key names (KVM here) pays every platform's line alone
    assert _lines(cat.fleet_cost("kvm", {32: 1})) == {"NGINX Plus": 7500.0}
    # the whole catalog, platform by platform, in words
    assert cat.basis_for(None).endswith(
        "licences (ESXi: vSphere Foundation + NGINX Plus; bare metal: no hypervisor licence, "
        "NGINX Plus; any other platform: NGINX Plus)"
    )


def test_one_lines_order_minimum_beside_another_line(tmp_path: Path) -> None:
    """vSphere bills at least 72 cores an order; NGINX Plus beside it has no minimum. 2 ×
    R660 bill 64 cores: vSphere pays 72 × $135 × 3 = $29,160 ($3,240 more), NGINX Plus
    pays its 2 instances, $15,000, untouched."""
    cat = _catalog(
        tmp_path,
        HEAD + f"licences:\n  esxi: [{VSPHERE}, min_per_order: 72}}, {NGINX_PLUS}]\n"
        "servers:\n" + R660,
    )
    cost = cat.fleet_cost("esxi", {32: 2})
    assert _lines(cost) == {"vSphere Foundation": 29160.0, "NGINX Plus": 15000.0}
    assert cat.order_topups("esxi", {32: 2}) == {"vSphere Foundation": 3240.0}
    assert cost.licence == pytest.approx(29160.0 + 15000.0)
    # three servers bill 96 cores: above the minimum, nothing added
    assert cat.order_topups("esxi", {32: 3}) == {"vSphere Foundation": 0.0}


def test_the_order_minimum_of_the_second_line_changes_the_cheapest_fleet() -> None:
    """By hand: a per-core line at $10 a unit (no minimum) and a per-instance line at $50
    billing at least 3 instances an order. A small server ($80, 1 core unit, 1 instance:
    $140) carries 1; a large one ($260, 4 core units, 1 instance: $350) carries 3; the need
    is 3. Without the minimum one large (350) beats three small (420); with it the large
    pays 2 instances short (350 + 100 = 450) and three small, 420, are the cheapest."""
    small, large = Offer(80 + 10 * 1 + 50, 1.0), Offer(260 + 10 * 4 + 50, 3.0)
    core = Minimum(10.0, (1.0, 4.0), 0.0)
    instance = Minimum(50.0, (1.0, 1.0), 3.0)
    alone = cheapest([small, large], 3.0, minimums=[core])
    assert alone is not None and alone.counts == (0, 1) and alone.cost == pytest.approx(350.0)
    got = cheapest([small, large], 3.0, minimums=[core, instance])
    assert got is not None and got.counts == (3, 0) and got.cost == pytest.approx(420.0)
    assert order_cost([small, large], [0, 1], [core, instance]) == pytest.approx(450.0)


offer_st = st.builds(
    Offer, price=st.floats(100.0, 20000.0, allow_nan=False), share=st.floats(0.05, 2.0)
)
line_st = st.tuples(
    st.floats(10.0, 3000.0),  # unit price
    st.lists(st.integers(0, 64), min_size=4, max_size=4),  # units of each offer
    st.integers(0, 200),  # the order's minimum
)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    offers=st.lists(offer_st, min_size=1, max_size=4),
    need=st.floats(0.2, 12.0),
    lines=st.lists(line_st, min_size=2, max_size=3),
    rule=st.sampled_from(["none", "n+1", "2n"]),
)
def test_the_fleet_search_is_exact_with_several_licence_lines(
    offers: list[Offer],
    need: float,
    lines: list[tuple[float, list[int], int]],
    rule: str,
) -> None:
    n = len(offers)
    mins = [Minimum(p, tuple(float(u) for u in us[:n]), float(least)) for p, us, least in lines]
    # an offer's price includes every line's units (as a catalog's server cost does)
    priced = [
        Offer(o.price + sum(m.price * m.units[i] for m in mins), o.share)
        for i, o in enumerate(offers)
    ]
    got = cheapest(priced, need, n_plus_1=rule == "n+1", mirrored=rule == "2n", minimums=mins)
    assert got is not None
    assert got.cost == pytest.approx(order_cost(priced, list(got.counts), mins))
    if got.exact:
        assert got.cost == pytest.approx(_milp(priced, need, mins, rule), rel=1e-7)


def test_the_single_mapping_form_and_a_catalog_built_in_code_still_work(tmp_path: Path) -> None:
    cat = _catalog(
        tmp_path, HEAD + "licences: {esxi: {per: socket, price: 1000}}\nservers:\n" + R660
    )
    cost = cat.server_cost("esxi", 32)
    assert (cost.licence, cost.licence_key) == (2000.0, "esxi")
    assert _lines(cost) == {"ESXi licence": 2000.0}  # an unnamed line is called by its key
    built = CostCatalog(
        servers=(ServerOffer(32, 11800.0, sockets=2),),
        licences={"hypervisor": Licence("socket", 500.0), "all": (Licence("server", 99.0),)},
    )
    assert _lines(built.server_cost("kvm", 32)) == {
        "Hypervisor licence": 1000.0,
        "licence for every platform": 99.0,
    }


@pytest.mark.parametrize(
    ("licences", "line"),
    [
        (
            "{esxi: [{per: core, price: 1}, {per: server, price: 2}]}",
            "licences.esxi.0.name: required when esxi has several licences (what each one "
            "licenses, shown in every answer)",
        ),
        (
            f"{{esxi: [{NGINX_PLUS}], all: [{NGINX_PLUS}]}}",
            "licences.esxi.0.name: 'NGINX Plus' is named twice among the licences esxi pays "
            "(all apply: give each line its own name)",
        ),
        (
            "{all: [{name: NGINX Plus, per: server, price: 1, nam: x}]}",
            "licences.all.0.nam: unknown field; did you mean name? (expected: per, price, term, "
            "min_cores_per_socket, min_per_order, currency, discount, source, name)",
        ),
        (
            "{all: {per: server, price: 1, min_per_ordr: 3}}",
            "licences.all.min_per_ordr: unknown field; did you mean min_per_order? (expected: "
            "per, price, term, min_cores_per_socket, min_per_order, currency, discount, source, "
            "name)",
        ),
        (
            "{exsi: {per: core, price: 1}}",
            "licences.exsi: 'exsi' is not allowed; input should be 'baremetal', 'hypervisor', "
            "'kubernetes', 'esxi', 'kvm', 'libvirt', 'vsphere', 'virtualized-host' or 'all' "
            "(did you mean esxi?)",
        ),
        ("{esxi: []}", "licences.esxi: List should have at least 1 item after validation, not 0"),
        (
            "{all: [{name: NGINX Plus, per: server, price: 1, min_cores_per_socket: 4}]}",
            "licences.all.0.min_cores_per_socket: only a per-core licence has one",
        ),
    ],
)
def test_licence_lines_are_refused_with_the_field_and_the_expected_words(
    tmp_path: Path, licences: str, line: str
) -> None:
    assert line in _problems(tmp_path, f"{HEAD}licences: {licences}\nservers:\n{R660}")


# -- through the CLI (reference data, an empty database) -------------------------------

CATALOG = (
    "kind: catalog\nname: two licences\nsource: illustrative list prices of a sample proposal, "
    "not a quote\n" + HEAD + "support: {share_of_hardware_per_year: 0.1}\n"
    "power: {price_per_kwh: 0.16}\n"
    f"licences:\n  esxi: [{VSPHERE}, min_per_order: 72}}]\n"
    "  all: [{name: NGINX Plus, per: server, price: 2500, term: yearly, "
    "source: 'illustrative NGINX Plus price, not a quote'}]\n"
    "servers:\n  - {name: PowerEdge R460, cores: 12, sockets: 1, price: 6200, watts: 300}\n"
)
ARGS = ["recommend", "--rps", "350000", "--tps", "12000", "--headroom", "25", "--years", "3"]


def _run(tmp_path: Path, *extra: str) -> tuple[dict[str, Any], str]:
    p = tmp_path / "two.yml"
    p.write_text(CATALOG, encoding="utf-8")
    args = [*ARGS, "--catalog", str(p), "--db", str(tmp_path / "e.sqlite"), *extra]
    got = CliRunner().invoke(app, [*args, "--json"])
    assert got.exit_code == 0, got.output
    text = CliRunner().invoke(app, args)
    assert text.exit_code == 0, text.output
    assert max(len(x) for x in text.stdout.splitlines()) <= 100
    doc: dict[str, Any] = json.loads(got.stdout)
    return doc, " ".join(text.stdout.split())


def test_esxi_names_each_line_and_its_cost_in_the_terminal_json_plan_and_assumptions(
    tmp_path: Path,
) -> None:
    """5 × R460 on ESXi: vSphere 5 × 16 cores = 80 ≥ 72: 80 × $135 × 3 = $32,400; NGINX
    Plus 5 × $2,500 × 3 = $37,500; each year $10,800 and $12,500."""
    doc, text = _run(tmp_path, "--platform", "esxi")
    best = doc["recommendation"]
    assert (best["servers"], best["cores_per_server"]) == (5, 12)
    lines = {x["name"]: x["cost"] for x in best["cost"]["licences"]}
    assert lines == {"vSphere Foundation": 32400.0, "NGINX Plus": 37500.0}
    assert best["cost"]["licence"] == pytest.approx(69900.0)
    for row in doc["cash_flow"]["rows"]:
        assert row["licences"] == [
            {"name": "vSphere Foundation", "cost": 10800.0},
            {"name": "NGINX Plus", "cost": 12500.0},
        ]
    said = {a["item"]: a for a in doc["assumptions"]}
    assert said["NGINX Plus (every platform's licence)"] == {
        "item": "NGINX Plus (every platform's licence)",
        "value": "$2,500 per server a year",
        "source": "illustrative NGINX Plus price, not a quote",
    }
    assert said["vSphere Foundation (ESXi licence)"]["value"].startswith("$135 per core a year")
    assert said["Bare metal licence"]["value"] == "no hypervisor licence; pays NGINX Plus"
    assert (
        "licence vSphere Foundation (esxi, per core, at least 16 a socket, at least 72 cores an "
        "order, yearly) $32,400 + licence NGINX Plus (every platform, per server, yearly) "
        "$37,500" in text
    )
    assert "year vSphere Foundation NGINX Plus" in text  # the plan's licences, line by line
    assert "1 $10,800 $12,500" in text


def test_bare_metal_says_no_hypervisor_licence_and_the_nginx_plus_line(tmp_path: Path) -> None:
    doc, text = _run(tmp_path, "--platform", "baremetal", "--allow-extrapolation")
    best = doc["recommendation"]
    n = best["servers"]
    assert best["platform"] == "baremetal"
    assert best["cost"]["licences"] == [
        {"name": "NGINX Plus", "key": "all", "cost": 2500.0 * 3 * n}
    ]
    assert best["cost"]["no_hypervisor_licence"] is True
    assert "hardware + no hypervisor licence (bare metal) + licence (NGINX Plus) +" in text
    assert "+ no hypervisor licence + licence NGINX Plus (every platform, per server" in text
    assert "no licence priced" not in text
