"""The units a licence is sold per (issue 59): an OpenShift subscription per socket pair and
an NGINX Plus subscription per instance, beside per core, socket and server. Each checked
by hand on a catalog as a user writes it, on one- and two-socket servers, with an order
minimum in its own unit's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from sizing.catalog import load_catalog
from sizing.engine.costs import CostCatalog
from sizing.engine.licences import Licence, unit_words
from sizing.errors import InputError
from sizing.report.data.assumptions import licence_terms

SERVERS = (
    "servers:\n"
    "  - {name: DL325, cores: 32, sockets: 1, price: 9400}\n"
    "  - {name: SR650, cores: 64, sockets: 2, price: 18800}\n"
    "  - {name: Four socket, cores: 96, sockets: 4, price: 40000}\n"
)


def _catalog(tmp_path: Path, licences: str) -> CostCatalog:
    p = tmp_path / "catalog.yml"
    p.write_text(f"amortisation_months: 36\nlicences:\n{licences}{SERVERS}", encoding="utf-8")
    return load_catalog(p)


@pytest.mark.parametrize(
    ("sockets", "pairs"), [(1, 1), (2, 1), (3, 2), (4, 2)], ids=lambda x: str(x)
)
def test_a_socket_pair_is_half_the_sockets_rounded_up(sockets: int, pairs: int) -> None:
    lic = Licence(per="socket-pair", price=100.0)
    assert lic.units(cores=8 * sockets, sockets=sockets) == pairs


def test_openshift_per_socket_pair_by_hand(tmp_path: Path) -> None:
    """3 years at 2,900 a pair a year: the 1-socket DL325 pays a whole pair (8,700), the
    2-socket SR650 one pair (8,700), the 4-socket server two (17,400); two SR650: 17,400."""
    cat = _catalog(
        tmp_path,
        "  kubernetes: {name: OpenShift, per: socket-pair, price: 2900, term: yearly}\n",
    )
    assert cat.fleet_cost("kubernetes", {32: 1}).licence == pytest.approx(8700.0)
    assert cat.fleet_cost("kubernetes", {64: 1}).licence == pytest.approx(8700.0)
    assert cat.fleet_cost("kubernetes", {96: 1}).licence == pytest.approx(17400.0)
    assert cat.fleet_cost("kubernetes", {64: 2}).licence == pytest.approx(17400.0)
    # another platform pays no Kubernetes licence
    assert cat.fleet_cost("baremetal", {64: 2}).licence == 0.0


def test_nginx_plus_per_instance_is_one_a_server_on_every_platform(tmp_path: Path) -> None:
    """One NGINX instance a server (bare metal's own, a guest or a pod over all its
    cores): 3 servers × 2,500 × 3 years = 22,500 on each platform, whatever the sockets."""
    cat = _catalog(
        tmp_path, "  all: {name: NGINX Plus, per: instance, price: 2500, term: yearly}\n"
    )
    for platform in ("baremetal", "esxi", "kvm", "kubernetes"):
        cost = cat.fleet_cost(platform, {32: 1, 64: 2})
        assert {x.name: x.cost for x in cost.licences} == {"NGINX Plus": pytest.approx(22500.0)}


def test_an_order_minimum_counts_in_its_own_unit(tmp_path: Path) -> None:
    """At least 4 socket pairs an order: one SR650 (one pair) pays 4 pairs a year."""
    cat = _catalog(
        tmp_path,
        "  kubernetes: {name: OpenShift, per: socket-pair, price: 1000, term: yearly,"
        " min_per_order: 4}\n",
    )
    assert cat.fleet_cost("kubernetes", {64: 1}).licence == pytest.approx(12000.0)
    lic = Licence(per="socket-pair", price=1000.0, term="yearly", min_per_order=4)
    assert lic.describe() == "per socket pair, at least 4 socket pairs an order, yearly"
    assert licence_terms(lic, "EUR") == (
        "EUR 1,000 per socket pair a year, at least 4 socket pairs an order"
    )


def test_unit_words() -> None:
    assert [unit_words(p) for p in ("core", "socket-pair", "instance")] == [
        "core",
        "socket pair",
        "instance",
    ]
    assert unit_words("socket-pair", 2) == "socket pairs"
    assert unit_words("instance", 3) == "instances"


def test_an_unknown_unit_is_refused_with_the_field(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        _catalog(tmp_path, "  kubernetes: {per: pair, price: 10}\n")
    assert any("licences.kubernetes.per" in p for p in info.value.problems), info.value.problems
