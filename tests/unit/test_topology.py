"""Unit tests for sizing.topology: parsing, CPU selection, affinity masks, CPU lists.

Golden ``lscpu -p=CPU,CORE,SOCKET,NODE`` outputs live in ``tests/data/lscpu/*.txt``, each
with a ``*.expected.json`` sidecar holding the shape and the allocations expected on it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.errors import SizingError, ToolError, UsageError
from sizing.model import Ht
from sizing.topology import (
    Allocation,
    CannotAllocate,
    Cpu,
    Topology,
    affinity_masks,
    allocate,
    cpulist,
    parse_cpulist,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "lscpu"
NO_HT = "hyper-threading is not available on this host (one thread per core)"
GOLDEN = sorted(DATA.glob("*.txt"))


# -- synthetic topologies -----------------------------------------------------------------


def intel(sockets: int, cores: int, threads: int, *, interleave: bool = False) -> Topology:
    """Intel/Linux numbering: first threads 0..N-1, their siblings N..2N-1.

    With ``interleave`` the first threads alternate between sockets (as on many Dell
    two-socket servers: even CPUs on socket 0, odd on socket 1).
    """
    n = sockets * cores
    cpus = []
    for t in range(threads):
        for i in range(n):
            if interleave:
                socket, core = i % sockets, i // sockets
            else:
                socket, core = i // cores, i % cores
            cpus.append(Cpu(id=t * n + i, core=core, socket=socket, node=socket))
    return Topology(tuple(cpus))


def adjacent(sockets: int, cores: int, threads: int) -> Topology:
    """AMD-in-a-VM / POWER / ARM numbering: siblings adjacent (0,1 share a core)."""
    cpus = []
    cpu_id = 0
    for s in range(sockets):
        for c in range(cores):
            for _ in range(threads):
                cpus.append(Cpu(id=cpu_id, core=c, socket=s, node=s))
                cpu_id += 1
    return Topology(tuple(cpus))


SHAPES = [
    # (sockets, cores per socket, threads per core): 2 to 64 logical CPUs
    (1, 1, 2),
    (1, 2, 1),
    (1, 2, 2),
    (1, 4, 1),
    (1, 4, 2),
    (2, 2, 1),
    (2, 2, 2),
    (1, 8, 2),
    (2, 4, 2),
    (2, 8, 1),
    (2, 8, 2),
    (1, 32, 2),
    (2, 16, 2),
    (1, 64, 1),
]


# -- golden lscpu outputs -------------------------------------------------------------------


def _expected(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.with_suffix(".expected.json").read_text())
    return data


def test_every_golden_lscpu_file_has_a_sidecar() -> None:
    assert GOLDEN, f"no golden files in {DATA}"
    for path in GOLDEN:
        assert path.with_suffix(".expected.json").exists(), path.name


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_lscpu_shape(path: Path) -> None:
    expected = _expected(path)
    topo = Topology.from_lscpu(path.read_text())
    assert topo.describe() == expected["describe"]
    assert len(topo.cpus) == expected["logical"]
    assert topo.smt is expected["smt"]
    assert topo.threads_per_core == expected["threads_per_core"]
    cores = topo.physical_cores()
    if "physical_cores" in expected:
        assert cores == [tuple(g) for g in expected["physical_cores"]]
    else:
        assert len(cores) == expected["physical_cores_count"]
        head = expected["physical_cores_head"]
        assert cores[: len(head)] == [tuple(g) for g in head]


def _golden_allocations() -> list[Any]:
    cases = []
    for path in GOLDEN:
        for i, case in enumerate(_expected(path)["allocations"]):
            cases.append(pytest.param(path, case, id=f"{path.stem}-{i}"))
    return cases


@pytest.mark.parametrize(("path", "case"), _golden_allocations())
def test_golden_lscpu_allocations(path: Path, case: dict[str, Any]) -> None:
    topo = Topology.from_lscpu(path.read_text())
    kwargs = {
        "shared_client": case["shared_client"],
        "min_client_cores": case.get("min_client_cores", 1),
    }
    if "error" in case:
        with pytest.raises(CannotAllocate) as info:
            allocate(topo, case["cores"], Ht(case["ht"]), **kwargs)
        assert info.value.reason == case["error"]
        assert str(info.value) == case["error"]
        return
    alloc = allocate(topo, case["cores"], Ht(case["ht"]), **kwargs)
    if "server" in case:
        assert alloc.server_cpus == tuple(case["server"])
    else:
        assert len(alloc.server_cpus) == case["server_count"]
    if "client" in case:
        assert alloc.client_cpus == tuple(case["client"])
    else:
        assert len(alloc.client_cpus) == case["client_count"]
    assert not set(alloc.server_cpus) & set(alloc.client_cpus)


# -- lscpu parsing details ----------------------------------------------------------------


def test_from_lscpu_skips_offline_cpus_and_reads_empty_node_as_zero() -> None:
    text = "# CPU,Core,Socket,Node\n0,0,0,\n1,1,0,\n2,,,\n3,,,\n"
    topo = Topology.from_lscpu(text)
    assert topo.cpus == (Cpu(0, 0, 0, 0), Cpu(1, 1, 0, 0))


def test_from_lscpu_follows_the_column_header() -> None:
    text = "# Socket,Node,CPU,Core\n1,1,0,5\n0,0,1,5\n"
    topo = Topology.from_lscpu(text)
    assert topo.cpus == (Cpu(id=0, core=5, socket=1, node=1), Cpu(id=1, core=5, socket=0, node=0))
    # core 5 on two sockets: two physical cores, not one with two threads
    assert topo.physical_cores() == [(1,), (0,)]
    assert not topo.smt


def test_from_lscpu_without_header_assumes_cpu_core_socket_node() -> None:
    assert Topology.from_lscpu("0,0,0,0\n1,0,0,0\n").physical_cores() == [(0, 1)]


@pytest.mark.parametrize("text", ["", "# only comments\n", "0,,,\n"])
def test_from_lscpu_without_online_cpus_is_a_tool_error(text: str) -> None:
    with pytest.raises(ToolError, match="no online CPU"):
        Topology.from_lscpu(text)


def test_from_lscpu_rejects_other_text() -> None:
    with pytest.raises(ToolError, match="line 2"):
        Topology.from_lscpu("# CPU,Core,Socket,Node\nCPU(s): 4,x,y,z\n")


def test_topology_sorts_and_rejects_bad_cpu_sets() -> None:
    topo = Topology((Cpu(1, 0, 0), Cpu(0, 0, 0)))
    assert [c.id for c in topo.cpus] == [0, 1]
    with pytest.raises(ValueError, match="at least one"):
        Topology(())
    with pytest.raises(ValueError, match="duplicate"):
        Topology((Cpu(0, 0, 0), Cpu(0, 1, 0)))


# -- synthetic shapes ---------------------------------------------------------------------


@pytest.mark.parametrize("make", [intel, adjacent], ids=["intel", "adjacent"])
@pytest.mark.parametrize(("sockets", "cores", "threads"), SHAPES)
def test_shapes(make: Any, sockets: int, cores: int, threads: int) -> None:
    topo = make(sockets, cores, threads)
    n_phys = sockets * cores
    assert len(topo.cpus) == n_phys * threads
    assert topo.smt is (threads > 1)
    groups = topo.physical_cores()
    assert len(groups) == n_phys
    assert all(len(g) == threads and list(g) == sorted(g) for g in groups)
    assert sorted(c for g in groups for c in g) == [c.id for c in topo.cpus]
    plural = "s" if sockets > 1 else ""
    assert topo.describe().startswith(f"{sockets} socket{plural} x {cores} core")

    # every core count the host can give, with HT on and off, client on the host or not
    for want in range(1, n_phys + 1):
        alone = allocate(topo, want, Ht.OFF, shared_client=False)
        assert len(alone.server_cpus) == want
        assert alone.client_cpus == ()
        # HT off: one logical CPU per core, the lowest sibling
        assert set(alone.server_cpus) <= {g[0] for g in groups}
        if threads > 1:
            on = allocate(topo, want, Ht.ON, shared_client=False)
            assert len(on.server_cpus) == want * threads
            assert set(alone.server_cpus) < set(on.server_cpus)
        if want < n_phys:
            shared = allocate(topo, want, Ht.OFF, shared_client=True)
            assert len(shared.client_cpus) == (n_phys - want) * threads
            assert not set(shared.server_cpus) & set(shared.client_cpus)
        else:
            with pytest.raises(CannotAllocate, match="add a client host"):
                allocate(topo, want, Ht.OFF, shared_client=True)
    with pytest.raises(CannotAllocate, match=f"this host has {n_phys}$"):
        allocate(topo, n_phys + 1, Ht.OFF, shared_client=False)


def test_server_fills_socket_zero_first_even_with_interleaved_numbering() -> None:
    topo = intel(2, 4, 2, interleave=True)  # even CPUs socket 0, odd socket 1
    alloc = allocate(topo, 4, Ht.ON, shared_client=True)
    assert alloc.server_cpus == (0, 8, 2, 10, 4, 12, 6, 14)
    assert {topo.cpus[c].socket for c in alloc.server_cpus} == {0}
    assert {topo.cpus[c].socket for c in alloc.client_cpus} == {1}


def test_server_fills_a_numa_node_before_the_next_within_a_socket() -> None:
    # one socket, two nodes whose core ids interleave (sub-NUMA clustering)
    cpus = tuple(Cpu(id=i, core=i, socket=0, node=i % 2) for i in range(4))
    alloc = allocate(Topology(cpus), 2, Ht.OFF, shared_client=True)
    assert alloc.server_cpus == (0, 2)
    assert alloc.client_cpus == (1, 3)


def test_client_never_gets_a_sibling_of_a_server_core_with_ht_off() -> None:
    alloc = allocate(intel(1, 4, 2), 1, Ht.OFF, shared_client=True)
    assert alloc == Allocation(server_cpus=(0,), client_cpus=(1, 5, 2, 6, 3, 7))
    assert 4 not in alloc.client_cpus  # CPU 4 is CPU 0's sibling: left idle


def test_skip_reasons_are_grammatical() -> None:
    one = Topology((Cpu(0, 0, 0),))
    with pytest.raises(CannotAllocate) as info:
        allocate(one, 1, Ht.OFF, shared_client=True)
    assert info.value.reason == (
        "needs 1 server core plus at least 1 client core; this host has 1 physical core; "
        "add a client host to the inventory"
    )
    with pytest.raises(CannotAllocate) as info:
        allocate(one, 2, Ht.OFF, shared_client=False)
    assert info.value.reason == "needs 2 physical cores; this host has 1"
    with pytest.raises(CannotAllocate) as info:
        allocate(intel(1, 2, 1), 1, Ht.OFF, shared_client=True, min_client_cores=3)
    assert info.value.reason == (
        "needs 1 server core plus at least 3 client cores; this host has 2 physical cores; "
        "add a client host to the inventory"
    )


def test_ht_reason_comes_before_the_core_count() -> None:
    with pytest.raises(CannotAllocate) as info:
        allocate(intel(1, 2, 1), 8, Ht.ON, shared_client=True)
    assert info.value.reason == NO_HT


def test_cannot_allocate_is_a_sizing_error() -> None:
    err = CannotAllocate("why")
    assert isinstance(err, SizingError)
    assert err.reason == "why"


@pytest.mark.parametrize("cores", [0, -1])
def test_fewer_than_one_core_is_a_usage_error_not_a_skip(cores: int) -> None:
    with pytest.raises(UsageError, match="at least 1 core") as info:
        allocate(intel(1, 4, 2), cores, Ht.OFF, shared_client=False)
    assert not isinstance(info.value, CannotAllocate)


def test_shared_client_with_no_client_core_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="shared client"):
        allocate(intel(1, 4, 2), 1, Ht.OFF, shared_client=True, min_client_cores=0)


def test_describe_mixed_cores() -> None:
    # a hybrid part: 2 P-cores with 2 threads, 2 E-cores with 1
    cpus = (Cpu(0, 0, 0), Cpu(1, 0, 0), Cpu(2, 1, 0), Cpu(3, 1, 0), Cpu(4, 2, 0), Cpu(5, 3, 0))
    topo = Topology(cpus)
    assert topo.describe() == "1 socket, 4 physical cores (1-2 threads per core) = 6 logical CPUs"
    assert topo.threads_per_core == 2
    assert allocate(topo, 3, Ht.ON, shared_client=True).server_cpus == (0, 1, 2, 3, 4)


# -- property -----------------------------------------------------------------------------


@st.composite
def topologies(draw: st.DrawFn) -> tuple[Topology, int, int]:
    sockets = draw(st.integers(1, 2))
    cores = draw(st.integers(1, 16))
    threads = draw(st.sampled_from([1, 2, 4]))
    scheme = draw(st.sampled_from(["intel", "interleave", "adjacent"]))
    if scheme == "adjacent":
        topo = adjacent(sockets, cores, threads)
    else:
        topo = intel(sockets, cores, threads, interleave=scheme == "interleave")
    return topo, sockets * cores, threads


@settings(max_examples=300, deadline=None)
@given(
    shape=topologies(),
    cores=st.integers(1, 34),
    ht=st.sampled_from(list(Ht)),
    shared_client=st.booleans(),
    min_client=st.integers(1, 4),
)
def test_allocation_properties(
    shape: tuple[Topology, int, int], cores: int, ht: Ht, shared_client: bool, min_client: int
) -> None:
    topo, n_phys, threads = shape
    try:
        alloc = allocate(topo, cores, ht, shared_client=shared_client, min_client_cores=min_client)
    except CannotAllocate as exc:
        assert (
            (ht is Ht.ON and threads == 1)
            or (shared_client and cores + min_client > n_phys)
            or (not shared_client and cores > n_phys)
        ), exc.reason
        return
    ids = {c.id for c in topo.cpus}
    server, client = set(alloc.server_cpus), set(alloc.client_cpus)
    assert len(server) == len(alloc.server_cpus) and len(client) == len(alloc.client_cpus)
    assert server <= ids and client <= ids
    assert not server & client
    assert len(server) == cores * (threads if ht is Ht.ON else 1)
    core_of = {c.id: (c.socket, c.core) for c in topo.cpus}
    server_cores = {core_of[c] for c in server}
    assert len(server_cores) == cores
    if shared_client:
        assert {core_of[c] for c in client}.isdisjoint(server_cores)
        assert len(client) == (n_phys - cores) * threads >= min_client * threads
    else:
        assert client == set()
    # the server stays on socket 0 while socket 0 has cores left
    per_socket = n_phys // len({c.socket for c in topo.cpus})
    if cores <= per_socket:
        assert {s for s, _ in server_cores} == {0}


# -- masks and CPU lists ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cpus", "masks"),
    [
        ([0], "1"),
        ([1], "10"),
        ([0, 1], "01 10"),
        ([0, 1, 2, 3], "0001 0010 0100 1000"),
        (
            list(range(8)),
            "00000001 00000010 00000100 00001000 00010000 00100000 01000000 10000000",
        ),
        ([0, 2], "001 100"),
        ([2, 0], "100 001"),
    ],
)
def test_affinity_masks(cpus: list[int], masks: str) -> None:
    assert affinity_masks(cpus) == masks


@pytest.mark.parametrize("cores", [1, 2, 4, 8])
def test_affinity_masks_for_allocations(cores: int) -> None:
    topo = intel(2, 8, 2, interleave=True)
    for ht in Ht:
        cpus = allocate(topo, cores, ht, shared_client=True).server_cpus
        masks = affinity_masks(cpus).split()
        assert len(masks) == len(cpus)  # one mask per worker
        width = max(cpus) + 1
        for cpu, mask in zip(cpus, masks, strict=True):
            assert len(mask) == width
            assert mask.count("1") == 1
            assert int(mask, 2) == 1 << cpu  # rightmost character is CPU 0


def test_affinity_masks_rejects_empty_and_negative() -> None:
    with pytest.raises(ValueError):
        affinity_masks([])
    with pytest.raises(ValueError):
        affinity_masks([-1])


@pytest.mark.parametrize(
    ("cpus", "text"),
    [
        ([], ""),
        ([0], "0"),
        ([0, 1], "0-1"),
        ([0, 1, 2, 3, 8, 10, 11], "0-3,8,10-11"),
        ([11, 10, 8, 3, 2, 1, 0, 8], "0-3,8,10-11"),
        ([0, 16, 2, 18], "0,2,16,18"),
        (list(range(64)), "0-63"),
    ],
)
def test_cpulist(cpus: list[int], text: str) -> None:
    assert cpulist(cpus) == text
    assert parse_cpulist(text) == tuple(sorted(set(cpus)))


@pytest.mark.parametrize(
    ("text", "cpus"),
    [("0-1\n", (0, 1)), (" 3 ", (3,)), ("", ()), ("\n", ()), ("4,0-2", (0, 1, 2, 4))],
)
def test_parse_cpulist_as_the_kernel_writes_it(text: str, cpus: tuple[int, ...]) -> None:
    assert parse_cpulist(text) == cpus


@pytest.mark.parametrize("text", ["a", "1-", "-1", "3-1", "0,,1", "0-3:2"])
def test_parse_cpulist_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_cpulist(text)


@given(st.sets(st.integers(0, 255)))
def test_cpulist_round_trip(cpus: set[int]) -> None:
    assert parse_cpulist(cpulist(sorted(cpus))) == tuple(sorted(cpus))


def test_parse_cpulist_reads_this_process_allowed_list() -> None:
    status = Path("/proc/self/status")
    if not status.exists():
        pytest.skip("no /proc")
    line = next(x for x in status.read_text().splitlines() if x.startswith("Cpus_allowed_list"))
    assert set(parse_cpulist(line.split(":", 1)[1])) == os.sched_getaffinity(0)


# -- sysfs --------------------------------------------------------------------------------


SYSFS = Path("/sys/devices/system/cpu")


@pytest.mark.skipif(not (SYSFS / "online").exists(), reason="no sysfs CPU topology")
def test_from_sysfs_on_this_machine() -> None:
    topo = Topology.from_sysfs()
    assert tuple(c.id for c in topo.cpus) == parse_cpulist((SYSFS / "online").read_text())
    assert topo.describe().endswith(f"= {len(topo.cpus)} logical CPUs") or len(topo.cpus) == 1
    lscpu = shutil.which("lscpu")
    if lscpu:
        out = subprocess.run(
            [lscpu, "-p=CPU,CORE,SOCKET,NODE"], capture_output=True, text=True, check=True
        ).stdout
        # lscpu numbers cores across the host, sysfs per package: compare the groups
        assert Topology.from_lscpu(out).physical_cores() == topo.physical_cores()


def _fake_sysfs(
    root: Path,
    rows: list[tuple[int, int, int, str]],
    *,
    online: str | None,
    nodes: dict[int, int] | None = None,
) -> Path:
    """Write cpuN/topology/{core_id,physical_package_id,thread_siblings_list}."""
    for cpu, core, package, siblings in rows:
        topo = root / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text(f"{core}\n")
        (topo / "physical_package_id").write_text(f"{package}\n")
        (topo / "thread_siblings_list").write_text(f"{siblings}\n")
        if nodes is not None:
            (root / f"cpu{cpu}" / f"node{nodes[cpu]}").mkdir()
    (root / "cpufreq").mkdir(exist_ok=True)  # sysfs has non-CPU entries too
    if online is not None:
        (root / "online").write_text(f"{online}\n")
    return root


def test_from_sysfs_fake_two_sockets_with_ht(tmp_path: Path) -> None:
    # 2 sockets x 2 cores x 2 threads, Intel numbering, core ids repeat per socket
    rows = [
        (0, 0, 0, "0,4"),
        (1, 1, 0, "1,5"),
        (2, 0, 1, "2,6"),
        (3, 1, 1, "3,7"),
        (4, 0, 0, "0,4"),
        (5, 1, 0, "1,5"),
        (6, 0, 1, "2,6"),
        (7, 1, 1, "3,7"),
    ]
    nodes = {cpu: package for cpu, _core, package, _sib in rows}
    topo = Topology.from_sysfs(_fake_sysfs(tmp_path, rows, online="0-7", nodes=nodes))
    assert topo.describe() == "2 sockets x 2 cores x 2 threads = 8 logical CPUs"
    assert topo.physical_cores() == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert [c.node for c in topo.cpus] == [0, 0, 1, 1, 0, 0, 1, 1]
    assert allocate(topo, 2, Ht.ON, shared_client=True) == Allocation((0, 4, 1, 5), (2, 6, 3, 7))


def test_from_sysfs_fake_reads_only_online_cpus(tmp_path: Path) -> None:
    rows = [(0, 0, 0, "0,2"), (1, 1, 0, "1,3"), (2, 0, 0, "0,2"), (3, 1, 0, "1,3")]
    topo = Topology.from_sysfs(_fake_sysfs(tmp_path, rows, online="0-1"))
    assert topo.describe() == "1 socket x 2 cores x 1 thread = 2 logical CPUs"
    assert not topo.smt


def test_from_sysfs_fake_without_online_file_and_package_minus_one(tmp_path: Path) -> None:
    rows = [(0, 0, -1, "0"), (1, 1, -1, "1")]
    topo = Topology.from_sysfs(_fake_sysfs(tmp_path, rows, online=None))
    assert topo.cpus == (Cpu(0, 0, 0, 0), Cpu(1, 1, 0, 0))


def test_from_sysfs_fake_repeated_core_ids_use_the_sibling_lists(tmp_path: Path) -> None:
    # two dies in one package both number their cores 0..1: the sibling lists decide
    rows = [(0, 0, 0, "0"), (1, 1, 0, "1"), (2, 0, 0, "2"), (3, 1, 0, "3")]
    topo = Topology.from_sysfs(_fake_sysfs(tmp_path, rows, online="0-3"))
    assert topo.physical_cores() == [(0,), (1,), (2,), (3,)]
    assert not topo.smt


def test_from_sysfs_missing_tree_is_a_tool_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="no online CPU"):
        Topology.from_sysfs(tmp_path)
    (tmp_path / "online").write_text("0\n")
    with pytest.raises(ToolError, match="cannot read CPU topology"):
        Topology.from_sysfs(tmp_path)
