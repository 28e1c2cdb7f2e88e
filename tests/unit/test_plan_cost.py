"""What a plan costs: each client's CPU set is computed and written once, so the plan's time
and memory grow with points and hosts and not with how many CPUs a load generator has."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from sizing import profiles
from sizing.inventory import Inventory, load_inventory
from sizing.model import Ht
from sizing.plan import build_plan, dryrun, points
from sizing.plan.points import PlannedPoint
from sizing.topology import Cpu, Topology

CORES = (1, 2, 4, 8)
HTS = (Ht.OFF, Ht.ON)


def machine(sockets: int, cores: int, threads: int) -> Topology:
    """A topology numbered like Linux: the first thread of every core, then the second."""
    per = sockets * cores
    return Topology(
        tuple(
            Cpu(id=t * per + s * cores + c, core=c, socket=s, node=s)
            for t in range(threads)
            for s in range(sockets)
            for c in range(cores)
        )
    )


def lab(tmp_path: Path, servers: int, clients: int) -> Inventory:
    path = tmp_path / f"lab-{servers}x{clients}.yml"
    lines = ["all:", "  children:", "    servers:", "      hosts:"]
    lines += [f"        srv{i}: {{ansible_host: 192.0.2.{i + 1}}}" for i in range(servers)]
    lines += ["    clients:", "      hosts:"]
    lines += [f"        load{j}: {{ansible_host: 198.51.100.{j + 1}}}" for j in range(clients)]
    path.write_text("\n".join(lines) + "\n")
    return load_inventory(path)


def plan_of(inv: Inventory, client: Topology) -> list[PlannedPoint]:
    server = machine(2, 16, 2)
    topologies = {h.name: server for h in inv.servers} | {h.name: client for h in inv.clients}
    return build_plan(inv, topologies, CORES, HTS, [profiles.load("rps"), profiles.load("tps")])


def test_a_clients_cpu_set_is_computed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inv = lab(tmp_path, 3, 2)
    calls: list[str] = []
    real = points._client_cpus
    monkeypatch.setattr(points, "_client_cpus", lambda c, t: calls.append(c.name) or real(c, t))
    plan = plan_of(inv, machine(2, 20, 2))
    assert len(plan) == 3 * 4 * 2 * 2 and not any(p.skipped for p in plan)
    assert sorted(calls) == ["load0", "load1"]
    first = plan[0].client_cpus["load0"]
    assert len(first) == 80
    assert all(p.client_cpus["load0"] is first for p in plan)


def test_the_plan_text_writes_a_cpu_set_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = plan_of(lab(tmp_path, 3, 2), machine(2, 20, 2))
    written: list[int] = []
    real = dryrun.cpulist
    monkeypatch.setattr(dryrun, "cpulist", lambda cpus: written.append(len(cpus)) or real(cpus))
    servers = dryrun._servers(plan, set(), {})
    assert [s.clients for s in servers] == [{"load0": "0-79", "load1": "0-79"}] * 3
    assert written.count(80) == 1  # both clients have the same set: written once in all


def test_memory_does_not_grow_with_the_clients_cpus(tmp_path: Path) -> None:
    """80-thread clients plan in the memory 8-thread ones take (a CPU tuple kept per point
    and client made the plan's memory grow with points x clients x client CPUs)."""
    inv = lab(tmp_path, 20, 20)
    small, big = machine(1, 8, 1), machine(2, 20, 2)
    peaks = []
    for client in (small, big, small, big):
        tracemalloc.start()
        plan = plan_of(inv, client)
        dryrun._servers(plan, set(), {})
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        del plan
    # 20 clients of 80 CPUs hold 20 tuples of 72 more ids each: about 12 KB more at most.
    assert min(peaks[1], peaks[3]) - max(peaks[0], peaks[2]) < 64 * 1024


def test_a_servers_configurations_cost_nothing_per_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The servers that are not clients share one tuple of clients and one CPU-set map:
    the plan, its summary and its offline checks read each client once, not once per
    server and configuration (300 servers x 3,000 clients x 8 configurations was 7 million
    steps before a word was printed)."""
    from sizing.plan import preflight

    inv = lab(tmp_path, 4, 3)
    plan = plan_of(inv, machine(2, 20, 2))
    assert all(p.clients is plan[0].clients for p in plan)
    assert all(p.client_cpus is plan[0].client_cpus for p in plan)
    servers = dryrun._servers(plan, set(), {})
    assert len(servers) == 4 and all(s.clients is servers[0].clients for s in servers)
    assert servers[0].clients == {"load0": "0-79", "load1": "0-79", "load2": "0-79"}
    checked: list[str] = []
    real = preflight.check_client_cpus
    monkeypatch.setattr(
        preflight, "check_client_cpus", lambda c, *a: checked.append(c.name) or real(c, *a)
    )
    topologies = {h.name: machine(2, 20, 2) for h in inv.hosts.values()}
    assert preflight.offline_checks(plan, inv.servers, topologies) == []
    assert sorted(checked) == ["load0", "load1", "load2"]


def test_a_server_that_is_a_client_too_is_planned_apart(tmp_path: Path) -> None:
    """The one tuple of clients is not shared with a server that is a client itself: its
    points are loaded by the others (and the others' points by it)."""
    path = tmp_path / "both.yml"
    path.write_text(
        "all:\n  children:\n    servers:\n      hosts:\n"
        "        a: {ansible_host: 192.0.2.1}\n        b: {ansible_host: 192.0.2.2}\n"
        "    clients:\n      hosts:\n"
        "        a: {}\n        c: {ansible_host: 198.51.100.1}\n"
    )
    plan = plan_of(load_inventory(path), machine(1, 16, 2))
    loaders = {p.server.name: sorted(c.name for c in p.clients) for p in plan}
    assert loaders == {"a": ["c"], "b": ["a", "c"]}


def test_hosts_that_declare_one_cpu_share_one_topology(tmp_path: Path) -> None:
    """A declared topology is built once per shape, and its facts typed once per shape and
    model: a thousand 80-thread clients cost what one does."""
    from sizing.provision.facts import declared_facts, declared_topology

    big = declared_topology(2, 20, 2)
    assert declared_topology(2, 20, 2) is big and len(big.cpus) == 80
    assert big.describe() == "2 sockets x 20 cores x 2 threads = 80 logical CPUs"
    assert declared_topology(1, 8, 1) is not big
    path = tmp_path / "declared.yml"
    cpu = "sizing_cpu: {sockets: 2, cores_per_socket: 20, threads_per_core: 2"
    path.write_text(
        "all:\n  children:\n    servers:\n      hosts:\n"
        f"        web: {{ansible_host: 192.0.2.1, {cpu}, model: X}}}}\n"
        "    clients:\n      hosts:\n"
        f"        l1: {{ansible_host: 198.51.100.1, {cpu}}}}}\n"
        f"        l2: {{ansible_host: 198.51.100.2, {cpu}}}}}\n"
    )
    facts, missing = declared_facts(list(load_inventory(path).hosts.values()))
    assert not missing and facts["l1"] is facts["l2"] and facts["l1"].topology is big
    assert facts["web"] is not facts["l1"] and facts["web"].topology is big
    assert (facts["web"].cpu_model, facts["l1"].cpu_model) == ("X", None)
