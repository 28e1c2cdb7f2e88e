"""The planner: points from the real topology, skipped with reasons, never guessed."""

from __future__ import annotations

from pathlib import Path

import pytest

from sizing import profiles
from sizing.cli.options import RUN_HT, SIZING_HT, choice
from sizing.errors import UsageError
from sizing.inventory import load_inventory
from sizing.model import Ht, HtChoice
from sizing.plan import build_plan, parse_cores
from sizing.topology import Topology

DATA = Path(__file__).parent.parent / "data"
LOCAL = Path(__file__).parent.parent.parent / "inventories" / "local.yml"


def topo(name: str) -> Topology:
    return Topology.from_lscpu((DATA / "lscpu" / name).read_text())


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1,2,4,8", (1, 2, 4, 8)), ("8, 1", (8, 1)), ("2,2", (2,)), ("16", (16,))],
)
def test_parse_cores(text: str, expected: tuple[int, ...]) -> None:
    assert parse_cores(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0", "not a core count"),
        ("abc", "'abc' is not a number"),
        ("300", "300 is not a supported"),
        ("-1", "not a core count"),
        ("", "at least one"),
        ("1,600", "600 is not a supported"),
    ],
)
def test_parse_cores_rejects(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_cores(text)


def test_ht_choices_are_one_vocabulary() -> None:
    """``run --ht`` takes off, on or both (measure each); sizing's ``--ht`` off, on or any."""
    assert choice(HtChoice, "both", "--ht", RUN_HT).modes == (Ht.OFF, Ht.ON)
    assert choice(HtChoice, "ON", "--ht", RUN_HT).modes == (Ht.ON,)
    with pytest.raises(UsageError, match="--ht: unknown value 'maybe' .expected off, on, both."):
        choice(HtChoice, "maybe", "--ht", RUN_HT)
    with pytest.raises(UsageError, match="expected off, on, both"):
        choice(HtChoice, "any", "--ht", RUN_HT)
    assert choice(HtChoice, "any", "--ht", SIZING_HT).modes == (Ht.OFF, Ht.ON)


def test_local_two_core_host_measures_one_core_and_explains_the_rest() -> None:
    inv = load_inventory(LOCAL)
    prof = [profiles.load("rps"), profiles.load("tps")]
    plan = build_plan(
        inv, {"localhost": topo("this_machine_2cpu.txt")}, (1, 2, 4, 8), (Ht.OFF, Ht.ON), prof
    )
    assert len(plan) == 4 * 2 * 2
    measured = [p for p in plan if not p.skipped]
    assert {(p.key.cores, p.key.ht) for p in measured} == {(1, "off")}
    one = measured[0]
    assert one.allocation is not None
    assert one.allocation.server_cpus == (0,)
    assert one.client_cpus == {"localhost": (1,)}
    for p in plan:
        if p.key.ht == "on":
            assert "hyper-threading is not available" in p.skip_reason
        elif p.key.cores > 1:
            assert f"needs {p.key.cores} server cores plus at least 1 client core" in p.skip_reason
            assert "add a client host to the inventory" in p.skip_reason


def test_separate_client_host_gets_its_own_cpus(tmp_path: Path) -> None:
    inv_file = tmp_path / "lab.yml"
    inv_file.write_text(
        "all:\n  children:\n    servers:\n      hosts:\n        srv: {ansible_host: 192.0.2.1}\n"
        "    clients:\n      hosts:\n        c1: {ansible_host: 192.0.2.2}\n"
        "        c2: {ansible_host: 192.0.2.3, sizing_client_cpus: '0-3'}\n"
    )
    inv = load_inventory(inv_file)
    topologies = {
        "srv": topo("poweredge_r640_2x8c_ht.txt"),
        "c1": topo("default_columns_i7_4c8t.txt"),
        "c2": topo("epyc_7502p_1x32c_ht.txt"),
    }
    plan = build_plan(inv, topologies, (8, 16), (Ht.OFF, Ht.ON), [profiles.load("rps")])
    by = {(p.key.cores, p.key.ht): p for p in plan}
    assert not any(p.skipped for p in plan)
    eight_on = by[(8, "on")]
    assert eight_on.allocation is not None and len(eight_on.allocation.server_cpus) == 16
    assert eight_on.client_cpus["c1"] == tuple(range(8))
    assert eight_on.client_cpus["c2"] == (0, 1, 2, 3)


def test_unreachable_server_is_skipped_with_reason() -> None:
    inv = load_inventory(LOCAL)
    plan = build_plan(inv, {}, (1,), (Ht.OFF,), [profiles.load("rps")])
    assert plan[0].skip_reason == "host localhost is unreachable"
