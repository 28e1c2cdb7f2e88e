"""Total cost of ownership a buyer can check: licences by platform family, per-core minimums,
support, prices of 0 refused, every part of a cost and what is left out, and the customer's
catalog (model names, source, date) in every answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing import paths
from sizing.catalog import load_catalog, load_reference
from sizing.cli import app
from sizing.engine import Demand, latest, recommend
from sizing.engine.costs import CostCatalog, Licence, ServerOffer, Support
from sizing.errors import InputError
from sizing.model import COST_FAMILIES, HYPERVISOR_PLATFORMS, Figure, Platform, cost_family


def _catalog(tmp_path: Path, text: str) -> CostCatalog:
    p = tmp_path / "catalog.yml"
    p.write_text(text, encoding="utf-8")
    return load_catalog(p)


def _problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(InputError) as info:
        _catalog(tmp_path, text)
    return info.value.problems


SERVERS = "servers:\n  - {cores: 4, price: 1300, sockets: 1, watts: 120}\n"


def test_every_hypervisor_platform_is_of_the_hypervisor_family() -> None:
    for name in (*HYPERVISOR_PLATFORMS, "hypervisor", Platform.LIBVIRT, Platform.VSPHERE):
        assert cost_family(name) == "hypervisor", name
    assert cost_family("baremetal") == "baremetal"
    assert cost_family("kubernetes") == "kubernetes"
    # a container or VM that believes it is bare metal runs on something unknown
    assert cost_family("virtualized-host") == ""
    # a measured container is its own family: a catalog may price its licence (support)
    assert cost_family("container") == "container"
    assert set(COST_FAMILIES.values()) == {"baremetal", "hypervisor", "kubernetes", "container"}


@pytest.mark.parametrize("platform", ["esxi", "kvm", "hypervisor"])
def test_a_family_licence_prices_every_platform_of_the_family(
    tmp_path: Path, platform: str
) -> None:
    cat = _catalog(tmp_path, "licences: {hypervisor: {per: socket, price: 1000}}\n" + SERVERS)
    cost = cat.server_cost(platform, 4)
    assert (cost.licence, cost.licence_key) == (1000, "hypervisor")
    assert "no licence priced for" not in " ".join(cost.left_out)
    bare = cat.server_cost("baremetal", 4)
    # bare metal pays no hypervisor licence: said as such, never as a cost left out
    assert bare.licence == 0 and not any("licence" in x for x in bare.left_out)
    assert "no hypervisor licence (bare metal)" in cat.scope("baremetal").priced


def test_a_platform_licence_overrides_its_family(tmp_path: Path) -> None:
    cat = _catalog(
        tmp_path,
        "licences:\n  hypervisor: {per: socket, price: 1000}\n"
        "  vsphere: {per: socket, price: 1500}\n" + SERVERS,
    )
    assert set(cat.licences) == {"hypervisor", "esxi"}  # vsphere is the inventory's esxi
    assert cat.server_cost("esxi", 4).licence == 1500
    assert cat.server_cost("esxi", 4).licence_key == "esxi"
    assert cat.server_cost("kvm", 4).licence == 1000


def test_min_cores_per_socket_counts_the_cores_paid_for(tmp_path: Path) -> None:
    cat = _catalog(
        tmp_path,
        "licences: {hypervisor: {per: core, price: 50, term: once, min_cores_per_socket: 16}}\n"
        "servers:\n  - {cores: 4, price: 1300}\n  - {cores: 32, price: 9000, sockets: 2}\n"
        "  - {cores: 48, price: 12000, sockets: 2}\n",
    )
    assert cat.server_cost("esxi", 4).licence == 50 * 16  # 4 cores on one socket: pays 16
    assert cat.server_cost("esxi", 32).licence == 50 * 32  # 2 × 16: the minimum exactly
    assert cat.server_cost("esxi", 48).licence == 50 * 48  # above the minimum: every core
    lic = Licence(per="core", price=50, term="yearly", min_cores_per_socket=16)
    assert lic.cost(cores=8, sockets=2, months=36) == 50 * 32 * 3


def test_support_is_a_share_of_hardware_per_year(tmp_path: Path) -> None:
    cat = _catalog(
        tmp_path,
        "amortisation_months: 36\nsupport: {share_of_hardware_per_year: 0.1}\n" + SERVERS,
    )
    cost = cat.server_cost("baremetal", 4)
    assert cost.support == pytest.approx(1300 * 0.1 * 3)
    assert cost.total == pytest.approx(1300 + 390)
    assert "support" in cat.basis and "support not priced" not in cost.left_out
    assert Support(0.2).cost(1000.0, 6) == pytest.approx(100.0)


def test_every_unpriced_part_is_named() -> None:
    cat = CostCatalog(servers=(ServerOffer(4, 1300.0),), price_per_kwh=0.1, amortisation_months=12)
    assert cat.server_cost("kvm", 4).left_out == (
        "no licence priced for kvm",
        "support not priced",
        "power not priced for the 4-core server (no watts stated)",
    )
    plain = CostCatalog(servers=(ServerOffer(4, 1300.0),))
    assert plain.server_cost("baremetal", 4).left_out == (
        "support not priced",
        "power not priced",
    )


def test_the_catalogs_scope_is_what_every_server_cost_says() -> None:
    """The guide's "Costs include" and "Left out of the costs" and every answer's "left
    out" are the same words: a catalog's scope, of one server or of them all."""
    cat = CostCatalog(
        servers=(ServerOffer(4, 1300.0, watts=120.0), ServerOffer(8, 2300.0, name="R460")),
        licences={"hypervisor": Licence("core", 150.0, term="yearly")},
        price_per_kwh=0.12,
        amortisation_months=36,
    )
    for platform in ("baremetal", "esxi", "kubernetes"):
        for offer in cat.servers:
            said = cat.server_cost(platform, offer.cores).left_out
            assert cat.scope(platform, offer).left_out == said, (platform, offer)
    assert cat.scope("esxi", cat.servers[0]).priced == (
        "hardware (the catalog's server price)",
        "platform licence (hypervisor)",
        "power over 36 months at 0.12 USD/kWh",
    )
    whole = cat.scope()
    # the whole catalog says each platform's licences in words (bare metal pays none)
    said = "platform licences (Hypervisor: per core, yearly; bare metal: no hypervisor licence)"
    assert said in whole.priced
    assert "power over 36 months at 0.12 USD/kWh" in whole.priced  # the 4-core states watts
    assert whole.left_out == (
        "support not priced",
        "power not priced for the R460 (8 cores) server (no watts stated)",
    )
    plain = CostCatalog(servers=(ServerOffer(4, 1300.0, watts=120.0),))
    assert plain.scope().priced == ("hardware (the catalog's server price)",)
    assert plain.scope().left_out == ("no licence priced", "support not priced", "power not priced")


def test_the_guide_says_the_catalogs_scope_and_what_no_catalog_prices() -> None:
    from sizing.engine import NEVER_PRICED
    from sizing.report.data.about import cost_includes

    cat = CostCatalog(
        servers=(ServerOffer(4, 1300.0),), support=Support(0.1), amortisation_months=36
    )
    yes, no = cost_includes(cat)
    assert yes == "hardware (the catalog's server price), support at 10% of the hardware a year"
    assert no == f"no licence priced, power not priced, {NEVER_PRICED}"
    assert set(cat.server_cost("baremetal", 4).left_out) - {
        "no licence priced for baremetal"
    } <= set(no.split(", "))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("servers: [{cores: 4, price: 0}]\n", "servers.0.price: must be above 0: a server"),
        (
            "licences: {esxi: {per: socket, price: 0}}\n" + SERVERS,
            "licences.esxi.price: must be above 0: a licence that costs nothing is left out",
        ),
        (
            "amortisation_months: 36\npower: {price_per_kwh: 0}\n" + SERVERS,
            "power.price_per_kwh: must be above 0",
        ),
        (
            "amortisation_months: 36\nsupport: {share_of_hardware_per_year: 0}\n" + SERVERS,
            "support.share_of_hardware_per_year: must be above 0",
        ),
        (
            "support: {share_of_hardware_per_year: 0.1}\n" + SERVERS,
            "amortisation_months: required when support is priced",
        ),
        (
            "licences: {esxi: {per: socket, price: 9, min_cores_per_socket: 16}}\n" + SERVERS,
            "licences.esxi.min_cores_per_socket: only a per-core licence has one",
        ),
        (
            "licences: {kvm: {per: socket, price: 9}, libvirt: {per: socket, price: 8}}\n"
            + SERVERS,
            "licences.libvirt: the same platform as licences.kvm",
        ),
    ],
)
def test_prices_that_make_no_sense_are_refused(tmp_path: Path, text: str, problem: str) -> None:
    found = _problems(tmp_path, text)
    assert any(p.startswith(problem) for p in found), found


def test_the_catalog_names_its_models_source_and_date(tmp_path: Path) -> None:
    cat = _catalog(
        tmp_path,
        "name: Acme servers\nsource: Acme quote 2026-11\ndate: 2026-11-03\n"
        "servers:\n  - {cores: 8, price: 4800, name: PowerEdge R660, cpu_model: Xeon Gold}\n"
        "  - {cores: 4, price: 3100, name: PowerEdge R650xs}\n",
    )
    assert cat.date == "2026-11-03"  # YAML's date, kept as written
    assert cat.label == "catalog Acme servers: Acme quote 2026-11, 2026-11-03"
    assert cat.offer(4) is not None and cat.offer(4).label() == "PowerEdge R650xs (4 cores)"
    got = recommend(
        load_reference_figures(), cat, Demand(rps=500_000, headroom=0.2), platforms=["baremetal"]
    )
    best = got.recommendation
    assert best is not None and best.server_name.startswith("PowerEdge")
    assert best.label.startswith(f"{best.servers} × {best.server_name} (")
    assert best.price_source == cat.label
    doc = got.to_dict()
    assert doc["catalog"]["source"] == "Acme quote 2026-11"
    assert doc["catalog"]["date"] == "2026-11-03"
    assert doc["recommendation"]["server_name"] == best.server_name
    assert doc["left_out"] == list(best.breakdown.left_out)


def test_a_fleet_cost_adds_up_part_by_part(tmp_path: Path) -> None:
    cat = _catalog(
        tmp_path,
        "amortisation_months: 36\npower: {price_per_kwh: 0.1}\n"
        "support: {share_of_hardware_per_year: 0.05}\n"
        "licences: {hypervisor: {per: socket, price: 1000}}\n"
        "servers:\n  - {cores: 2, price: 750, watts: 80}\n"
        "  - {cores: 4, price: 1300, watts: 120}\n",
    )
    got = recommend(
        load_reference_figures(), cat, Demand(rps=400_000, headroom=0.2), platforms=["hypervisor"]
    )
    best = got.recommendation
    assert best is not None and best.unit_cost is not None
    b = best.breakdown
    assert b.total == pytest.approx(best.total_cost)
    assert b.licence == pytest.approx(1000 * best.servers)
    assert b.hardware + b.licence + b.support + b.power == pytest.approx(best.total_cost)
    assert b.left_out == ()
    assert got.fleet is not None
    assert got.fleet.breakdown.total == pytest.approx(got.fleet.total_cost)


def load_reference_figures() -> list[Figure]:
    """The reference figures as the engine golden cases take them."""
    return [f for f in latest(load_reference().figures) if f.profile in ("rps", "tps")]


def test_the_example_catalog_prices_every_part() -> None:
    cat = load_catalog(paths.PROFILES / "catalog-tco-example.yml")
    esxi, kvm = cat.server_cost("esxi", 4), cat.server_cost("kvm", 4)
    assert (esxi.licence_key, esxi.licence) == ("esxi", 1000)  # the platform's own entry
    assert (kvm.licence_key, kvm.licence) == ("hypervisor", 50 * 16 * 3)  # 16-core minimum
    assert esxi.left_out == () and esxi.support > 0 and esxi.power > 0
    assert cat.date and cat.source and all(s.name for s in cat.servers)


def _cli(tmp_path: Path, catalog: str, *args: str) -> str:
    path = tmp_path / "catalog.yml"
    path.write_text(catalog, encoding="utf-8")
    db = tmp_path / "sizing.sqlite"
    got = CliRunner().invoke(app, [*args, "--catalog", str(path), "--db", str(db)])
    assert got.exit_code == 0, got.stderr
    return " ".join(got.stdout.split())


TCO = (
    "name: TCO example\nsource: Acme quote 2026-11\ndate: 2026-11-03\n"
    "amortisation_months: 36\npower: {price_per_kwh: 0.10}\n"
    "licences: {hypervisor: {per: socket, price: 1000}}\nservers:\n"
    "  - {cores: 1, price: 750, watts: 60}\n  - {cores: 2, price: 750, watts: 80}\n"
    "  - {cores: 4, price: 1300, watts: 120, name: PowerEdge R650xs}\n"
    "  - {cores: 8, price: 2200, watts: 200, name: PowerEdge R660}\n"
)


def test_recommend_prints_the_cost_part_by_part_and_the_catalog(tmp_path: Path) -> None:
    out = _cli(
        tmp_path,
        TCO,
        "recommend",
        "--rps",
        "100000",
        "--headroom",
        "0",
        "--platform",
        "hypervisor",
    )
    assert "Recommended: 1 × PowerEdge R650xs (4 cores, esxi, HT off), $2,615.36" in out
    assert (
        "Cost over 36 months: hardware $1,300 + licence (hypervisor, per socket, once) $1,000 "
        "+ power $315.36 = $2,615.36; left out: support not priced." in out
    )
    assert "price: catalog TCO example: Acme quote 2026-11, 2026-11-03" in out
    assert "Servers: 4 cores: PowerEdge R650xs; 8 cores: PowerEdge R660." in out


def test_an_answer_says_only_the_licence_its_own_platform_pays(tmp_path: Path) -> None:
    """The catalog prices a hypervisor licence: a bare-metal fleet's cost never claims it
    (its cost line says none applies), a hypervisor fleet's names it."""
    bare = _cli(tmp_path, TCO, "recommend", "--rps", "100000", "--platform", "baremetal")
    said = "total cost of ownership over 36 months: hardware + no hypervisor licence (bare metal)"
    assert said + " + power;" in bare, bare
    assert "licence (hypervisor)" not in bare and "no licence priced" not in bare
    esxi = _cli(tmp_path, TCO, "recommend", "--rps", "100000", "--platform", "esxi")
    whole = "total cost of ownership over 36 months: hardware + licence (hypervisor) + power;"
    assert whole in esxi, esxi


def test_table_prints_models_costs_and_what_is_left_out(tmp_path: Path) -> None:
    out = _cli(tmp_path, TCO, "table", "--source", "reference")
    assert "PowerEdge R660" in out and "PowerEdge R650xs" in out
    assert "cost of one esxi server:" in out
    assert "4c hardware $1,300 + licence $1,000 + power $315.36 = $2,615.36" in out
    assert "prices: catalog TCO example: Acme quote 2026-11, 2026-11-03" in out
    assert "left out of the costs: support not priced, no licence priced for kubernetes" in out
    doc = json.loads(
        CliRunner()
        .invoke(
            app,
            [
                "table",
                "--source",
                "reference",
                "--catalog",
                str(tmp_path / "catalog.yml"),
                "--db",
                str(tmp_path / "sizing.sqlite"),
                "--json",
            ],
        )
        .stdout
    )
    assert doc["catalog"]["date"] == "2026-11-03"
    cell = next(
        c
        for r in doc["rows"]
        for c in r["cells"]
        if c["platform"] == "esxi" and c["cores"] == 4 and c["profile"] == "rps"
    )
    assert cell["cost"]["licence"] == 1000 and cell["server_name"] == "PowerEdge R650xs"
    assert cell["cost"]["total"] == pytest.approx(2615.36)


def test_a_server_that_states_no_watts_has_its_power_said_not_priced_never_zero() -> None:
    """A server whose price came from an inventory (sizing_price_usd) states no watts: in
    a catalog that prices power, the proposal's Power row said "EUR 0" for it."""
    from sizing.engine.answer import Configuration
    from sizing.engine.costs import CostBreakdown
    from sizing.report.data.proposal import Option, _power_cell

    def config(cores: int, watts: float | None, name: str = "") -> Configuration:
        return Configuration(
            platform="baremetal", ht="off", cores_per_server=cores, servers=2,
            counted_servers=2, cost_per_server=1000.0, total_cost=2000.0,
            capacity_rps=1e5, capacity_tps=None, utilization=0.5, extrapolated=False,
            offer=ServerOffer(cores, 1000.0, watts=watts, name=name),
        )  # fmt: skip

    def option(*parts: Configuration, power: float) -> Option:
        breakdown = CostBreakdown(hardware=4000.0, power=power)
        return Option(
            "baremetal", tuple((p, 2) for p in parts), 4, breakdown.total, breakdown, True
        )

    assert _power_cell(option(config(8, 300.0), power=1577.88), "EUR") == "EUR 1,577.88"
    unpriced = _power_cell(option(config(8, None, "R460"), power=0.0), "EUR")
    assert unpriced == "not priced for the R460 server (no watts stated)"
    mixed = _power_cell(option(config(8, 300.0), config(4, None), power=788.94), "EUR")
    assert mixed == "EUR 788.94; not priced for the 4-core server (no watts stated)"
