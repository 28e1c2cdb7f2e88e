"""The pure parts of the vSphere backend: ESXi topology, HT, config spec, read-back."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from sizing.errors import SizingError
from sizing.model import Ht
from sizing.provision.platforms.vsphere_settings import (
    HtState,
    build_config_spec,
    compare_readback,
    esxi_topology,
    fault_text,
    ht_skip_reason,
    readback,
    spec_values,
)
from sizing.topology import CannotAllocate, allocate


def test_esxi_topology_with_hyperthreads() -> None:
    # 2 sockets x 4 cores x 2 threads; ESXi numbers a core's two threads consecutively.
    topo = esxi_topology([(0, list(range(8))), (1, list(range(8, 16)))], 8, 16)
    assert topo.describe() == "2 sockets x 4 cores x 2 threads = 16 logical CPUs"
    assert topo.physical_cores()[:2] == [(0, 1), (2, 3)]
    # The same allocation code as bare metal: distinct cores with HT off, pairs with HT on.
    assert allocate(topo, 2, Ht.OFF, shared_client=False).server_cpus == (0, 2)
    assert allocate(topo, 2, Ht.ON, shared_client=False).server_cpus == (0, 1, 2, 3)
    assert allocate(topo, 8, Ht.OFF, shared_client=False).server_cpus == (
        0,
        2,
        4,
        6,
        8,
        10,
        12,
        14,
    )


def test_esxi_topology_like_vcsim() -> None:
    topo = esxi_topology([(0, [0]), (1, [1])], 2, 2)
    assert topo.describe() == "2 sockets x 1 core x 1 thread = 2 logical CPUs"
    assert allocate(topo, 1, Ht.OFF, shared_client=False).server_cpus == (0,)
    with pytest.raises(CannotAllocate):
        allocate(topo, 4, Ht.OFF, shared_client=False)
    with pytest.raises(CannotAllocate):
        allocate(topo, 1, Ht.ON, shared_client=False)


def test_esxi_topology_without_packages_and_nonsense() -> None:
    assert len(esxi_topology([], 4, 8).physical_cores()) == 4
    with pytest.raises(SizingError):
        esxi_topology([], 0, 0)


@pytest.mark.parametrize(
    ("state", "ht", "allow", "expected"),
    [
        (HtState(True, True, True), Ht.ON, False, ""),
        (HtState(True, True, True), Ht.OFF, False, ""),
        (HtState(False, False, False), Ht.OFF, False, ""),
        (HtState(False, False, True), Ht.ON, True, "esx1 has no hyper-threading"),
        (HtState(True, False, False), Ht.ON, False, "rerun with --allow-host-reboot"),
        (HtState(True, False, False), Ht.ON, True, ""),
    ],
)
def test_ht_skip_reason(state: HtState, ht: Ht, allow: bool, expected: str) -> None:
    reason = ht_skip_reason(state, "esx1", ht, allow)
    assert (expected in reason) if expected else reason == ""


def test_ht_state_describe() -> None:
    assert HtState(False, False, True).describe() == "not available"
    assert HtState(True, True, True).describe() == "on"
    assert HtState(True, False, True).describe() == "off (turns on at the next reboot)"


def test_spec_values_high_latency_reserves_everything() -> None:
    values = spec_values((2, 0), host_mhz=2600, memory_mb=4096)
    assert values == {
        "numCPUs": 2,
        "numCoresPerSocket": 2,
        "cpuAffinity": [0, 2],
        "latencySensitivity": "high",
        "cpuReservationMhz": 5200,
        "memoryReservationLockedToMax": True,
        "memoryReservationMb": 4096,
    }


def test_spec_values_normal_without_reservation_and_sockets() -> None:
    values = spec_values(
        (0, 1, 2, 3),
        host_mhz=2000,
        memory_mb=2048,
        cores_per_socket=2,
        latency_sensitivity="normal",
        reserve=False,
    )
    assert values["numCoresPerSocket"] == 2
    assert values["cpuReservationMhz"] == 0
    assert values["memoryReservationLockedToMax"] is False
    # high always reserves, whatever `reserve` says (VMware requires it)
    assert spec_values((0,), host_mhz=2000, memory_mb=1, reserve=False)["cpuReservationMhz"] == 2000


def test_spec_values_refuses_bad_shapes() -> None:
    with pytest.raises(SizingError, match="does not divide 2 vCPUs"):
        spec_values((0, 1), host_mhz=1, memory_mb=1, cores_per_socket=4)
    with pytest.raises(SizingError, match="at least one vCPU"):
        spec_values((), host_mhz=1, memory_mb=1)


def test_build_config_spec() -> None:
    pytest.importorskip("pyVmomi")
    spec = build_config_spec(spec_values((4, 5), host_mhz=3000, memory_mb=8192))
    assert spec.numCPUs == 2
    assert spec.numCoresPerSocket == 2
    assert list(spec.cpuAffinity.affinitySet) == [4, 5]
    assert spec.latencySensitivity.level == "high"
    assert spec.cpuAllocation.reservation == 6000
    assert spec.memoryReservationLockedToMax is True
    assert spec.memoryAllocation is None  # locked to max: ESXi derives it


def test_build_config_spec_with_explicit_memory_reservation() -> None:
    pytest.importorskip("pyVmomi")
    values = spec_values((0,), host_mhz=1, memory_mb=512, latency_sensitivity="low", reserve=False)
    spec = build_config_spec(values)
    assert spec.latencySensitivity.level == "low"
    assert spec.memoryReservationLockedToMax is False
    assert spec.memoryAllocation.reservation == 0


def _config(**over: object) -> SimpleNamespace:
    base: dict[str, object] = {
        "hardware": SimpleNamespace(numCPU=2, numCoresPerSocket=2, memoryMB=4096),
        "cpuAffinity": SimpleNamespace(affinitySet=[2, 0]),
        "latencySensitivity": SimpleNamespace(level="high"),
        "cpuAllocation": SimpleNamespace(reservation=5200),
        "memoryAllocation": SimpleNamespace(reservation=4096),
        "memoryReservationLockedToMax": True,
    }
    return SimpleNamespace(**{**base, **over})


def test_readback_and_compare() -> None:
    got = readback(_config())
    assert got == {
        "numCPUs": 2,
        "numCoresPerSocket": 2,
        "memoryMb": 4096,
        "cpuAffinity": [0, 2],
        "latencySensitivity": "high",
        "cpuReservationMhz": 5200,
        "memoryReservationLockedToMax": True,
        "memoryReservationMb": 4096,
    }
    asked = spec_values((0, 2), host_mhz=2600, memory_mb=4096)
    assert compare_readback(asked, got) == []
    wrong = readback(_config(cpuAffinity=None, latencySensitivity=SimpleNamespace(level="normal")))
    assert compare_readback(asked, wrong) == [
        "cpuAffinity: asked [0, 2], reads back []",
        "latencySensitivity: asked high, reads back normal",
    ]


def test_readback_of_a_real_config_info() -> None:
    pytest.importorskip("pyVmomi")
    from pyVmomi import vim

    cfg = vim.vm.ConfigInfo(
        hardware=vim.vm.VirtualHardware(numCPU=1, numCoresPerSocket=1, memoryMB=32),
        cpuAffinity=vim.vm.AffinityInfo(affinitySet=[1]),
        latencySensitivity=vim.LatencySensitivity(level="high"),
        cpuAllocation=vim.ResourceAllocationInfo(reservation=3591),
        memoryReservationLockedToMax=True,
    )
    got = readback(cfg)
    assert got["cpuAffinity"] == [1]
    assert got["latencySensitivity"] == "high"
    assert got["cpuReservationMhz"] == 3591
    assert got["memoryReservationMb"] is None


def test_fault_text_is_one_line() -> None:
    pytest.importorskip("pyVmomi")
    from pyVmomi import vim, vmodl

    fault = vmodl.fault.ManagedObjectNotFound(
        msg="managed object not found:\n  HostCpuSchedulerSystem:cpuSchedulerSystem"
    )
    text = fault_text(fault)
    assert "\n" not in text
    assert text == (
        "managed object not found: HostCpuSchedulerSystem:cpuSchedulerSystem"
        " (ManagedObjectNotFound)"
    )
    assert "(numCPUs)" in fault_text(vmodl.fault.InvalidArgument(invalidProperty="numCPUs"))
    assert fault_text(vim.fault.InvalidLogin(msg="Login failure")).startswith("Login failure")
    assert fault_text(ValueError("plain")) == "plain"
