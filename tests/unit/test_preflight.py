"""Pre-flight checks: one clear line per host and problem, all raised together."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from sizing import profiles
from sizing.errors import ExitStatus
from sizing.inventory import Inventory, load_inventory
from sizing.model import Ht
from sizing.plan import PlannedPoint, build_plan
from sizing.plan.preflight import (
    PreflightError,
    check_client_argv,
    check_client_cpus,
    check_client_limits,
    check_clock,
    check_cpu_masks,
    check_plan,
    check_reachable,
    check_server_limits,
    preflight,
    requirements,
)
from sizing.records import HostRecord
from sizing.topology import Topology

DATA = Path(__file__).parent.parent / "data"
LAB = DATA / "inventories" / "multihost_lab.yml"


def topo(name: str) -> Topology:
    return Topology.from_lscpu((DATA / "lscpu" / name).read_text())


def good_facts(**over: Any) -> HostRecord:
    facts: dict[str, Any] = {
        "nofile_soft": 65536,
        "nofile_hard": 1048576,
        "cap_sys_resource": False,
        "somaxconn": 4096,
        "ip_local_port_range": "32768\t60999",
        "time": 1000.5,
    }
    facts.update(over)
    return HostRecord.parse(facts)


@pytest.fixture
def inv() -> Inventory:
    return load_inventory(LAB)


def lab_plan(inv: Inventory, cores: tuple[int, ...] = (1, 2)) -> list[PlannedPoint]:
    topos = {
        "web1": topo("poweredge_r640_2x8c_ht.txt"),
        "load1": topo("epyc_7502p_1x32c_ht.txt"),
        "load2": topo("default_columns_i7_4c8t.txt"),
    }
    return build_plan(inv, topos, cores, (Ht.OFF,), [profiles.load("rps"), profiles.load("tps")])


def conns(n: int) -> Any:
    return lambda profile: n


def test_a_good_lab_passes(inv: Inventory) -> None:
    plan = lab_plan(inv)
    facts = {h: good_facts() for h in ("web1", "load1", "load2")}
    assert (
        check_plan(
            plan,
            facts,
            connections=conns(50),
            hosts=["web1", "load1", "load2"],
            clock=dict.fromkeys(facts, (1000.0, 1001.0)),
        )
        == []
    )
    preflight(plan, facts, connections=conns(50))  # does not raise


def test_requirements_are_the_worst_case_per_host(inv: Inventory) -> None:
    req = requirements(lab_plan(inv), conns(100))
    assert req["web1"].server_connections == 200  # two clients x 100
    assert req["web1"].server_workers == 1
    assert req["load1"].client_connections == 100
    assert req["load2"].client_cpus == {0, 1, 2, 3}


def test_unreachable_hosts_are_one_line_each() -> None:
    lines = check_reachable(["a", "b", "c"], {"b": "unreachable: Connection refused"})
    assert lines == ["b: unreachable: Connection refused"]


@pytest.mark.parametrize(
    ("host_time", "expected"),
    [
        (1000.5, None),  # read inside the round trip
        (1001.9, None),  # within the bound after it
        (1003.5, "clock is 2.5 s ahead of"),
        (990.0, "clock is 10.0 s behind"),
    ],
)
def test_clock(host_time: float, expected: str | None) -> None:
    lines = check_clock("load1", host_time, (1000.0, 1001.0), bound_s=1.0)
    if expected is None:
        assert lines == []
    else:
        assert len(lines) == 1 and lines[0].startswith("load1: ") and expected in lines[0]


def test_nginx_open_files_limited_by_a_hard_limit_it_cannot_raise(inv: Inventory) -> None:
    web1 = inv.hosts["web1"]
    lines = check_server_limits(web1, good_facts(nofile_hard=1024), 4000, workers=1)
    assert len(lines) == 1
    assert lines[0].startswith("web1: nginx may open 1024 files (hard limit 1024")
    # With CAP_SYS_RESOURCE nginx raises its own limit: no problem.
    assert (
        check_server_limits(
            web1, good_facts(nofile_hard=1024, cap_sys_resource=True), 4000, workers=1
        )
        == []
    )


def test_worker_connections_below_the_connections(tmp_path: Path) -> None:
    path = tmp_path / "inv.yml"
    path.write_text(
        LAB.read_text().replace(
            "ansible_host: 192.0.2.10",
            "ansible_host: 192.0.2.10\n          sizing_nginx_worker_connections: 512",
        )
    )
    web1 = load_inventory(path).hosts["web1"]
    lines = check_server_limits(web1, good_facts(), 1000, workers=1)
    assert lines == [
        "web1: worker_connections 512 is below the 1000 connections a worker may hold "
        "(1000 in all over 1 worker(s)); raise sizing_nginx_worker_connections or lower "
        "--connections"
    ]
    # Eight workers share them (at most twice their share each): enough.
    assert check_server_limits(web1, good_facts(), 1000, workers=8) == []


def test_somaxconn_below_the_burst(inv: Inventory) -> None:
    lines = check_server_limits(inv.hosts["web1"], good_facts(somaxconn=128), 400, workers=2)
    assert len(lines) == 1 and "net.core.somaxconn 128" in lines[0]


def test_client_open_files_and_ports(inv: Inventory) -> None:
    load1 = inv.hosts["load1"]
    lines = check_client_limits(
        load1, good_facts(nofile_soft=1024, ip_local_port_range="60000 60999"), 5000
    )
    assert len(lines) == 2
    assert lines[0].startswith("load1: open-files limit 1024 is below the 5000 connections")
    assert "for sizing or lower --connections" in lines[0]
    assert lines[1].startswith("load1: the ephemeral port range (60000 60999, 1000 ports)")


def test_cpu_masks() -> None:
    t = topo("this_machine_2cpu.txt")
    assert check_cpu_masks("web1", "01 10", (0, 1), t) == []
    assert "2 masks for 1 workers" in check_cpu_masks("web1", "01 10", (0,), t)[0]
    assert "exactly one CPU" in check_cpu_masks("web1", "11", (0,), t)[0]
    assert "exactly one CPU" in check_cpu_masks("web1", "'01'", (0,), t)[0]
    offline = check_cpu_masks("web1", "100", (2,), t)
    assert offline == [
        "web1: worker_cpu_affinity '100' is wrong: CPU(s) [2] are not online on the host"
    ]


def test_client_cpus_must_exist(inv: Inventory) -> None:
    lines = check_client_cpus(inv.hosts["load2"], {0, 1, 2, 3}, topo("this_machine_2cpu.txt"))
    assert lines == [
        "load2: the load generator would be pinned to CPU(s) 2-3, which the host does not "
        "have online (online: 0-1); fix sizing_client_cpus"
    ]


def test_wrk_argv_is_built_and_checked(inv: Inventory) -> None:
    point = next(p for p in lab_plan(inv) if not p.skipped)
    assert check_client_argv(point, inv.hosts["load1"], 50, 10) == []
    lines = check_client_argv(point, inv.hosts["load1"], 50, 2.5)
    assert lines == ["load1: wrk duration must be a whole number of seconds >= 1, not 2.5"]


@pytest.mark.parametrize("generator", ["oha", "vegeta"])
def test_a_fixed_rate_profile_s_argv_is_its_open_loop_tool_s(
    inv: Inventory, generator: str
) -> None:
    """A latency profile's windows are its open-loop generator's at a rate: its argv is
    checked as that tool builds it (a closed-loop request, rate 0, was refused by oha)."""
    topos = {
        "web1": topo("poweredge_r640_2x8c_ht.txt"),
        "load1": topo("epyc_7502p_1x32c_ht.txt"),
        "load2": topo("default_columns_i7_4c8t.txt"),
    }
    latency = profiles.load("latency-http").model_copy(update={"generator": generator})
    point = next(p for p in build_plan(inv, topos, (1,), (Ht.OFF,), [latency]) if not p.skipped)
    client = point.clients[0]
    assert check_client_argv(point, client, 50, 10) == []  # a climb: no list of rates
    assert check_client_argv(point, client, 50, 10, [1000, 5000]) == []
    assert check_plan([point], {}, connections=conns(50), rates=lambda p: [1000]) == []


def test_all_problems_are_raised_together(inv: Inventory) -> None:
    plan = lab_plan(inv)
    facts = {
        "web1": good_facts(somaxconn=64),
        "load1": good_facts(nofile_soft=32),
    }
    with pytest.raises(PreflightError) as info:
        preflight(
            plan,
            facts,
            connections=conns(100),
            hosts=["web1", "load1", "load2"],
            unreachable={"load2": "unreachable: Connection timed out"},
            clock={"web1": (1000.0, 1001.0), "load1": (1010.0, 1011.0)},
        )
    err = info.value
    assert err.code is ExitStatus.HOST
    assert err.problems[0] == "load2: unreachable: Connection timed out"
    assert [p.split(":")[0] for p in err.problems] == ["load2", "load1", "load1", "web1"]
    assert "nothing was run" in str(err).splitlines()[0]
    assert len(str(err).splitlines()) == 1 + len(err.problems)


def test_a_rate_list_the_clients_cannot_offer_is_refused(inv: Inventory) -> None:
    from sizing.plan.loadspec import client_ceiling
    from sizing.plan.preflight import check_offered_rates

    topos = {
        "web1": topo("poweredge_r640_2x8c_ht.txt"),
        "load1": topo("epyc_7502p_1x32c_ht.txt"),
        "load2": topo("default_columns_i7_4c8t.txt"),
    }
    latency = profiles.load("latency-http").model_copy(update={"generator": "oha"})
    [point] = [p for p in build_plan(inv, topos, (1,), (Ht.OFF,), [latency]) if not p.skipped]
    ceiling, cores, per_core = client_ceiling(point)
    assert ceiling == cores * per_core > 0
    assert check_offered_rates(point, [1000, int(ceiling)]) == []
    [line] = check_offered_rates(point, [1000, int(ceiling) + 1])
    assert f"needs {cores + 1} client core(s) of oha" in line and f"have {cores}" in line
    assert "planning figure" in line
    # closed-loop profiles and climbs (no list) are never refused here
    assert check_offered_rates(point, []) == []


# -- where a client reaches a server -------------------------------------------------------


def _host(name: str, roles: set[str], **variables: Any) -> Any:
    from sizing.inventory import Host, HostVars

    sizing = {k[len("sizing_") :]: v for k, v in variables.items() if k.startswith("sizing_")}
    return Host(
        name=name,
        roles=frozenset(roles),
        groups=("all",),
        sizing=HostVars.model_validate(sizing),
        variables=variables,
    )


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("10.0.0.1", False),
        ("::2", False),
        ("web1.example.com", False),
        ("2001:db8::1", False),
    ],
)
def test_loopback_addresses(address: str, loopback: bool) -> None:
    from sizing.inventory.model import is_loopback

    assert is_loopback(address) is loopback


def test_a_local_server_and_a_local_client_are_one_machine(inv: Inventory) -> None:
    from sizing.plan.preflight import check_reach

    server = _host("localhost", {"server"}, ansible_connection="local")
    client = _host("me", {"client"}, ansible_connection="local")
    remote = _host("load1", {"client"}, ansible_host="192.0.2.20")
    (point,) = lab_plan(inv, (1,))[:1]
    same = dataclasses.replace(point, server=server, clients=(client,))
    assert check_reach([same]) == []
    other = dataclasses.replace(point, server=server, clients=(client, remote))
    (line,) = check_reach([other])
    assert line.startswith("localhost: clients load it at 127.0.0.1 (ansible_connection: local)")
    assert "client load1 (over ssh, at 192.0.2.20)" in line
    given = _host("localhost", {"server"}, ansible_connection="local", sizing_address="192.0.2.10")
    assert check_reach([dataclasses.replace(point, server=given, clients=(remote,))]) == []


def test_servers_are_one_machine_by_load_address_and_port() -> None:
    from sizing.plan.preflight import same_address

    a = _host("web1", {"server"}, ansible_ssh_host="127.0.0.1", ansible_ssh_port=2222)
    b = _host("web2", {"server"}, ansible_ssh_host="127.0.0.1", ansible_ssh_port=2200)
    assert same_address([a, b]) == [
        "web1 and web2 are the same machine (this machine (loopback)), loaded at port 8080: "
        "name it once in the inventory, or two servers would share its CPUs and its ports"
    ]
    c = _host("web3", {"server"}, ansible_host="192.0.2.1", sizing_address="192.0.2.31")
    d = _host("web4", {"server"}, ansible_host="192.0.2.1", sizing_address="192.0.2.32")
    assert same_address([c, d]) == []  # one SSH jump host, two load addresses
