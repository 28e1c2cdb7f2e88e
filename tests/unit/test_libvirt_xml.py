"""The libvirt backend's pure parts: pin layouts, domain XML, read-back, inventory checks."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from sizing.errors import InputError, SizingError
from sizing.inventory import load_inventory
from sizing.model import Ht
from sizing.plan import build_plan
from sizing.profiles import parse_list
from sizing.provision.platforms.libvirt_spec import (
    NAMESPACE,
    VmSpec,
    check_pinning,
    cpus_of_map,
    host_smt,
    pin_layout,
    placements,
    render_domain_xml,
    vcpu_threads,
)
from sizing.topology import Topology, allocate
from tests.offline import check_offline

# 2 sockets x 4 cores x 2 threads; siblings are n and n+8 (a usual Intel numbering).
LSCPU_HT = "# CPU,Core,Socket,Node\n" + "".join(
    f"{cpu},{cpu % 8},{(cpu % 8) // 4},0\n" for cpu in range(16)
)
HT_HOST = Topology.from_lscpu(LSCPU_HT)
ALL16 = tuple(range(16))


def spec(**kw: Any) -> VmSpec:
    base: dict[str, Any] = {
        "domain": "nginx-vm1",
        "hypervisor": "kvm1",
        "disk": "/var/lib/libvirt/images/nginx-vm1.qcow2",
        "disk_format": "qcow2",
        "bridge": "br0",
    }
    base.update(kw)
    return VmSpec.model_validate(base)


def xml_of(vm: VmSpec, domain_type: str, cpus: tuple[int, ...], ht: Ht, cores: int) -> ET.Element:
    layout = pin_layout(cpus, ht, ALL16)
    return ET.fromstring(
        render_domain_xml(vm, domain_type, layout, cores=cores, ht=ht, inventory_host="vm1")  # type: ignore[arg-type]
    )


# -- pins -----------------------------------------------------------------------------


def test_ht_off_pins_one_cpu_per_physical_core_and_the_emulator_elsewhere() -> None:
    cpus = allocate(HT_HOST, 4, Ht.OFF, shared_client=False).server_cpus
    layout = pin_layout(cpus, Ht.OFF, ALL16)
    assert layout.pins == (0, 1, 2, 3)
    assert layout.threads == 1
    assert set(layout.emulator).isdisjoint(layout.pins)
    assert set(layout.emulator) | set(layout.pins) == set(ALL16)


def test_ht_on_pins_sibling_pairs_to_consecutive_vcpus() -> None:
    cpus = allocate(HT_HOST, 2, Ht.ON, shared_client=False).server_cpus
    layout = pin_layout(cpus, Ht.ON, ALL16)
    assert layout.pins == (0, 8, 1, 9)  # vCPU 0/1 are siblings, as host CPUs 0/8 are
    assert layout.threads == 2
    assert not set(layout.emulator) & {0, 1, 8, 9}


def test_emulator_override_is_used_and_may_not_overlap_the_vcpus() -> None:
    assert pin_layout((0, 1), Ht.OFF, ALL16, emulator_cpus="15").emulator == (15,)
    with pytest.raises(SizingError, match="overlaps the vCPUs"):
        pin_layout((0, 1), Ht.OFF, ALL16, emulator_cpus="1-2")


def test_emulator_cpu_that_the_host_lacks_is_one_clear_error() -> None:
    with pytest.raises(SizingError, match=r"emulator_cpus '63' names CPUs .* not have online"):
        pin_layout((0,), Ht.OFF, (0, 1), emulator_cpus="63", hypervisor="kvm1")


def test_more_vcpus_than_the_host_has_is_one_clear_error() -> None:
    with pytest.raises(SizingError, match=r"4 vCPUs on host CPUs 0-3 asked for; kvm1 has 2 online"):
        pin_layout((0, 1, 2, 3), Ht.OFF, (0, 1), hypervisor="kvm1")
    with pytest.raises(SizingError, match="allows at most 2 per guest"):
        pin_layout((0, 1, 2), Ht.OFF, ALL16, max_vcpus=2, hypervisor="kvm1")


def test_no_cpu_left_for_the_emulator_is_refused() -> None:
    with pytest.raises(SizingError, match="no host CPU is left for QEMU's emulator"):
        pin_layout((0, 1), Ht.OFF, (0, 1))


def test_ht_on_needs_pairs() -> None:
    with pytest.raises(SizingError, match="sibling pairs"):
        pin_layout((0, 8, 1), Ht.ON, ALL16)


# -- domain XML -----------------------------------------------------------------------


def test_domain_xml_ht_off_on_kvm() -> None:
    dom = xml_of(spec(), "kvm", (0, 1, 2, 3), Ht.OFF, 4)
    assert dom.get("type") == "kvm"
    vcpu = dom.find("vcpu")
    assert vcpu is not None and vcpu.text == "4" and vcpu.get("placement") == "static"
    pins = {p.get("vcpu"): p.get("cpuset") for p in dom.iterfind("cputune/vcpupin")}
    assert pins == {"0": "0", "1": "1", "2": "2", "3": "3"}
    emu = dom.find("cputune/emulatorpin")
    assert emu is not None and emu.get("cpuset") == "4-15"
    cpu = dom.find("cpu")
    assert cpu is not None and cpu.get("mode") == "host-passthrough"
    topo = dom.find("cpu/topology")
    assert topo is not None
    assert (topo.get("sockets"), topo.get("cores"), topo.get("threads")) == ("1", "4", "1")
    assert dom.find("os/boot") is not None and dom.find("os/kernel") is None
    assert dom.find("devices/disk/driver").get("type") == "qcow2"  # type: ignore[union-attr]
    assert dom.find("devices/interface/source").get("bridge") == "br0"  # type: ignore[union-attr]
    meta = dom.find(f"metadata/{{{NAMESPACE}}}point")
    assert meta is not None and meta.get("cores") == "4" and meta.get("ht") == "off"


def test_domain_xml_ht_on_has_two_threads_per_core() -> None:
    dom = xml_of(spec(), "kvm", (0, 8, 1, 9), Ht.ON, 2)
    topo = dom.find("cpu/topology")
    assert topo is not None and (topo.get("cores"), topo.get("threads")) == ("2", "2")
    pins = [p.get("cpuset") for p in dom.iterfind("cputune/vcpupin")]
    assert pins == ["0", "8", "1", "9"]
    emu = dom.find("cputune/emulatorpin")
    assert emu is not None and emu.get("cpuset") == "2-7,10-15"


def test_domain_xml_emulated_direct_kernel_boot() -> None:
    vm = spec(
        kernel="/img/vmlinuz",
        initrd="/img/initrd.img",
        cmdline="root=/dev/vda rw ip=198.18.6.10::198.18.6.1:255.255.255.0::eth0:off & x",
        disk_format="raw",
        mac="52:54:00:12:06:10",
    )
    dom = xml_of(vm, "qemu", (0,), Ht.OFF, 1)
    assert dom.get("type") == "qemu"
    cpu = dom.find("cpu")
    assert cpu is not None and cpu.get("mode") is None  # TCG: QEMU's own CPU model
    assert dom.findtext("os/kernel") == "/img/vmlinuz"
    assert dom.findtext("os/initrd") == "/img/initrd.img"
    assert dom.findtext("os/cmdline", "").endswith("& x")  # escaped in XML, intact after
    assert dom.find("devices/interface/mac").get("address") == "52:54:00:12:06:10"  # type: ignore[union-attr]
    log = dom.find("devices/serial/log")
    assert log is not None and log.get("file") == "/var/log/libvirt/qemu/nginx-vm1-console.log"


def test_domain_xml_keeps_the_uuid_of_a_redefined_domain() -> None:
    layout = pin_layout((0,), Ht.OFF, ALL16)
    text = render_domain_xml(
        spec(),
        "kvm",
        layout,
        cores=1,
        ht=Ht.OFF,
        inventory_host="vm1",
        uuid="d8076e3f-5f76-475c-be15-af8b0d79158c",
    )
    assert ET.fromstring(text).findtext("uuid") == "d8076e3f-5f76-475c-be15-af8b0d79158c"


# -- read-back ------------------------------------------------------------------------

THREADS = [
    {"tid": 10, "comm": "qemu-system-x86", "cpus": "4-15"},
    {"tid": 11, "comm": "CPU 0/KVM", "cpus": "0"},
    {"tid": 12, "comm": "CPU 1/KVM", "cpus": "1"},
    {"tid": 13, "comm": "worker", "cpus": "4-15"},
]


def test_vcpu_threads_are_found_by_name() -> None:
    assert vcpu_threads(THREADS) == {0: (0,), 1: (1,)}
    assert vcpu_threads([{"comm": "CPU 3/TCG", "cpus": "2"}]) == {3: (2,)}


def test_cpu_maps_and_pin_checks() -> None:
    assert cpus_of_map((True, False, True, False)) == (0, 2)
    layout = pin_layout((0, 1), Ht.OFF, ALL16)
    emulator = tuple(range(2, 16))
    assert check_pinning(layout, {0: (0,), 1: (1,)}, emulator, {0: (0,), 1: (1,)}) == []
    problems = check_pinning(layout, {0: (0,), 1: (0, 1)}, emulator, {0: (0,), 1: (5,)})
    assert problems == [
        "libvirt reports vCPU 1 on 0-1",
        "/proc shows the thread of vCPU 1 allowed on 5",
    ]
    assert check_pinning(layout, {0: (0,), 1: (1,)}, (0, 1), {}) == [
        "libvirt reports the emulator on 0-1"
    ]


def test_host_smt_from_capabilities() -> None:
    caps = (
        "<capabilities><host><cpu><arch>x86_64</arch>"
        "<topology sockets='2' dies='1' cores='4' threads='2'/></cpu></host></capabilities>"
    )
    assert host_smt(caps) == {"sockets": 2, "dies": 1, "cores": 4, "threads": 2}


# -- inventory ------------------------------------------------------------------------

INVENTORY = """
all:
  children:
    hypervisors:
      hosts:
        kvm1:
          ansible_host: 192.0.2.10
          sizing_hypervisor: {hyp}
    servers:
      hosts:
        vm1:
          ansible_host: 192.0.2.11
          sizing_platform: libvirt
          sizing_vm: {vm}
    clients:
      hosts:
        {client}: {{ansible_host: 192.0.2.50}}
"""


def write(tmp_path: Path, hyp: str, vm: str, client: str = "load1") -> Path:
    path = tmp_path / "inv.yml"
    path.write_text(INVENTORY.format(hyp=hyp, vm=vm, client=client))
    return path


GOOD_VM = "{domain: vm1, hypervisor: kvm1, disk: /images/vm1.qcow2, bridge: br0}"


def test_placements_map_guests_to_their_hypervisor(tmp_path: Path) -> None:
    inv = load_inventory(write(tmp_path, "{uri: 'qemu+ssh://root@kvm1/system'}", GOOD_VM))
    assert placements(inv) == {"vm1": "kvm1"}


@pytest.mark.parametrize(
    ("hyp", "vm", "expected"),
    [
        (
            "{uri: 'qemu:///system'}",
            "{domain: vm1, hypervisor: kvm9, disk: /d, bridge: b}",
            "host vm1: sizing_vm.hypervisor: no inventory host 'kvm9'",
        ),
        (
            "{uri: 'qemu:///system'}",
            "{domain: vm1, hypervisor: kvm1, disk: /d}",
            "host vm1: sizing_vm: Value error, give exactly one of bridge",
        ),
        (
            "{uri: 'qemu:///system'}",
            "{domain: vm1, hypervisor: kvm1, disk: /d, bridge: b, cpus: 2}",
            "host vm1: sizing_vm.cpus: unknown setting",
        ),
        (
            "{uri: 'qemu+ssh://root:secret@kvm1/system'}",
            GOOD_VM,
            "host kvm1: sizing_hypervisor.uri: Value error, holds a password",
        ),
        (
            "{uri: 'qemu:///system', domain_type: xen}",
            GOOD_VM,
            "host kvm1: sizing_hypervisor.domain_type: Input should be 'kvm' or 'qemu'",
        ),
        ("null", GOOD_VM, "host kvm1: sizing_hypervisor: missing"),
    ],
)
def test_bad_settings_name_file_host_and_field(
    tmp_path: Path, hyp: str, vm: str, expected: str
) -> None:
    path = write(tmp_path, hyp, vm)
    with pytest.raises(InputError) as info:
        placements(load_inventory(path))
    assert str(info.value).startswith(f"{path}: {expected}")


def test_a_guest_is_planned_on_its_hypervisor_and_leaves_a_local_client_its_cores(
    tmp_path: Path,
) -> None:
    two = Topology.from_lscpu("# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,0\n")
    inv = load_inventory(write(tmp_path, "{uri: 'qemu:///system'}", GOOD_VM, client="kvm1"))
    plan = build_plan(
        inv, {"kvm1": two}, (1, 2), (Ht.OFF,), parse_list("rps"), placement={"vm1": "kvm1"}
    )
    one, both = plan
    assert one.allocation is not None and one.allocation.server_cpus == (0,)
    assert one.client_cpus == {"kvm1": (1,)}
    assert both.skipped and "client core" in both.skip_reason
    # The hypervisor unreachable: the guest's points say so.
    plan = build_plan(inv, {}, (1,), (Ht.OFF,), parse_list("rps"), placement={"vm1": "kvm1"})
    assert plan[0].skip_reason == "hypervisor kvm1 of vm1 is unreachable"


def test_the_bundled_kvm_lab_is_valid() -> None:
    check_offline(  # the example lab: read without a network (tests/offline.py)
        """
        from sizing import paths
        from sizing.inventory import load_inventory
        from sizing.provision.platforms.libvirt_spec import placements
        got = placements(load_inventory(paths.INVENTORIES / "kvm-lab.yml"))
        assert got == {"nginx-kvm1": "kvm1"}, got
        """
    )
