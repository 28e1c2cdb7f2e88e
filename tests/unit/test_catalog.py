"""Cost catalogs and the reference dataset: loading, and precise errors for bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from sizing.catalog import DEFAULT_CATALOG, REFERENCE, load_catalog, load_reference
from sizing.errors import ExitStatus, InputError


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "catalog.yml"
    p.write_text(text, encoding="utf-8")
    return p


def problems(path: Path) -> list[str]:
    with pytest.raises(InputError) as info:
        load_catalog(path)
    assert info.value.code is ExitStatus.INPUT
    assert info.value.path == str(path)
    return info.value.problems


def test_default_catalog_holds_the_article_prices() -> None:
    cat = load_catalog()
    assert {s.cores: s.price for s in cat.servers} == {1: 750, 2: 750, 4: 1300, 8: 2200}
    assert cat.currency == "USD" and cat.basis == "hardware only"
    assert load_catalog(DEFAULT_CATALOG) == cat


def test_full_catalog(tmp_path: Path) -> None:
    cat = load_catalog(
        write(
            tmp_path,
            """
name: lab
currency: EUR
amortisation_months: 36
power: {price_per_kwh: 0.25}
licences:
  hypervisor: {per: core, price: 50, term: yearly}
servers:
  - {cores: 16, price: 5000, sockets: 2, watts: 300, name: big}
""",
        )
    )
    cost = cat.server_cost("hypervisor", 16)
    assert cost.hardware == 5000
    assert cost.licence == pytest.approx(50 * 16 * 3)
    assert cost.power == pytest.approx(0.3 * 36 * 730 * 0.25)
    assert cat.currency == "EUR" and cat.servers[0].sockets == 2


def test_every_problem_named_by_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
servers:
  - {cores: 1, price: -5}
  - {cores: 2, price: 750, colour: red}
  - {cores: x, price: 10}
licences:
  hypervisor: {per: vm, price: 100}
  xen: {per: core, price: 1}
""",
    )
    assert problems(path) == [
        "servers.0.price: must be above 0: a server has a price (write the one quoted), not -5",
        "servers.1.colour: unknown field (expected: cores, price, sockets, watts, name, "
        "cpu_model, discount, source)",
        "servers.2.cores: Input should be a valid integer, unable to parse string as an integer",
        "licences.hypervisor.per: 'vm' is not allowed; input should be 'core', 'socket', "
        "'socket-pair', 'server' or 'instance'",
        "licences.xen: 'xen' is not allowed; input should be 'baremetal', 'hypervisor', "
        "'kubernetes', 'esxi', 'kvm', 'libvirt', 'vsphere', 'virtualized-host' or 'all'",
    ]


def test_cross_field_problems(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
servers:
  - {cores: 1, price: 750}
  - {cores: 1, price: 800, watts: 90}
power: {price_per_kwh: 0.2}
licences: {hypervisor: {per: core, price: 5, term: yearly}}
""",
    )
    assert problems(path) == [
        "servers.1.name: 1 cores listed twice with the same name, sockets and CPU (also "
        "servers.0): give each its own name",
        "amortisation_months: required when power is priced",
        "servers.0.watts: required when power is priced",
        "amortisation_months: required by the yearly licence of hypervisor",
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("servers: []\n", "servers: List should have at least 1 item after validation, not 0"),
        ("name: x\n", "servers: Field required"),
        ("- 1\n- 2\n", "expected a mapping at the top of the catalog file"),
        ("servers: [\n", "YAML syntax: line 2, column 1: "),
        ("servers: []\nservers: []\n", "YAML syntax: line 2, column 1: duplicate key"),
        ("kind: workload\nservers: [{cores: 1, price: 1}]\n", "kind: 'workload' is not allowed"),
        ("currency: dollars\nservers: [{cores: 1, price: 1}]\n", "currency: String should match"),
    ],
)
def test_malformed_catalogs(tmp_path: Path, text: str, problem: str) -> None:
    found = problems(write(tmp_path, text))
    assert len(found) == 1 and found[0].startswith(problem), found


def test_missing_catalog(tmp_path: Path) -> None:
    assert problems(tmp_path / "nope.yml") == ["no such catalog file"]
    assert problems(tmp_path) == ["is a directory; give a catalog YAML file"]


def test_error_message_is_bulleted(tmp_path: Path) -> None:
    path = write(tmp_path, "servers:\n  - {cores: 0, price: -1}\n")
    with pytest.raises(InputError) as info:
        load_catalog(path)
    assert str(info.value).splitlines() == [
        f"{path}:",
        "  - servers.0.cores: Input should be greater than or equal to 1",
        "  - servers.0.price: must be above 0: a server has a price (write the one quoted), not -1",
    ]


def test_reference_dataset_names_its_source_and_conditions() -> None:
    ref = load_reference()
    assert ref.title == "Comparing NGINX Performance in Bare Metal and Virtual Environments"
    assert "NGINX" in ref.publisher
    assert "128-byte" in ref.conditions["traditional"]["rps"]
    assert "RSA 2048" in ref.conditions["traditional"]["tps"]
    assert "new connection" in ref.conditions["traditional"]["tps"]
    assert "1-KB" in ref.conditions["kubernetes"]["rps"]
    assert REFERENCE.name == "reference.yml"


def test_reference_figures_are_the_published_tables() -> None:
    figs = load_reference().figures
    assert len(figs) == 4 * 4 + 4 * 3
    assert {f.source for f in figs} == {"reference"}
    got = {(f.platform, f.ht, f.profile, f.cores): f.value for f in figs}
    assert got[("baremetal", "off", "rps", 1)] == 48000
    assert got[("hypervisor", "off", "rps", 4)] == 132000
    assert got[("baremetal", "off", "tps", 8)] == 5200
    assert got[("hypervisor", "off", "tps", 2)] == 1450
    assert got[("kubernetes", "off", "rps", 8)] == 190000
    assert got[("kubernetes", "off", "tps", 4)] == 3500
    assert got[("kubernetes", "on", "tps", 4)] == 3870  # SSL TPS with hyper-threading
    assert not any(f.platform != "kubernetes" and f.ht == "on" for f in figs)


def test_reference_prices_match_the_default_catalog() -> None:
    ref = load_reference()
    cat = load_catalog()
    assert dict(ref.hardware_costs) == {s.cores: s.price for s in cat.servers}


def test_malformed_reference(tmp_path: Path) -> None:
    p = tmp_path / "ref.yml"
    p.write_text("source: {title: x, publisher: y}\ntraditional: [{cores: 1}]\n")
    with pytest.raises(InputError) as info:
        load_reference(p)
    assert "traditional.0.hardware_cost: Field required" in info.value.problems


def test_fast_path_agrees_with_full_validation() -> None:
    """The bundled files are read without pydantic at run time; they must validate."""
    assert load_catalog(validate=True) == load_catalog()
    assert load_reference(validate=True) == load_reference()


def test_broken_bundled_file_falls_back_to_precise_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sizing.catalog as catalog_mod

    bundled = tmp_path / "catalog.yml"
    bundled.write_text("servers:\n  - {cores: 2}\n")
    monkeypatch.setattr(catalog_mod, "DEFAULT_CATALOG", bundled)
    with pytest.raises(InputError) as info:
        catalog_mod.load_catalog()
    assert info.value.problems == ["servers.0.price: Field required"]
