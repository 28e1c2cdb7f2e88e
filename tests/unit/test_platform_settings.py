"""The records sizing writes are typed to the edges: no field named ``extra``; a point's
platform settings read back as their platform's kind, from the flat objects every older
sizing stored; a stored run option is always a declared field of the run's record."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest

import sizing.records as records
from sizing.records import (
    BaremetalSettings,
    ContainerSettings,
    EsxiSettings,
    KvmSettings,
    PlatformSettings,
    PointMeta,
    QemuThread,
    UlimitsRecord,
    VmConfigRecord,
    dump,
)
from sizing.records.codec import VERBATIM

# a libvirt guest's settings as sizing stored them before they were typed (a real row's keys)
KVM_ROW = {
    "hypervisor": "kvm1",
    "uri": "qemu+ssh://root@kvm1/system",
    "domain": "nginx-vm1",
    "domain_type": "kvm",
    "emulated": False,
    "vcpus": 2,
    "guest_topology": {"sockets": 1, "cores": 2, "threads": 1},
    "vcpupin": {"0": "2", "1": "3"},
    "emulatorpin": "0-1",
    "vcpupin_libvirt": {"0": "2", "1": "3"},
    "emulatorpin_libvirt": "0-1",
    "vcpupin_proc": {"0": "2", "1": "3"},
    "qemu_pid": 4242,
    "qemu_threads": [{"tid": 4243, "comm": "CPU 0/KVM", "cpus": "2"}],
    "boot_s": 21.4,
    "memory_mib": 4096,
    "libvirt_version": 9000000,
    "hypervisor_version": 7002000,
}
ESXI_ROW = {
    "hypervisor": "vsphere",
    "endpoint": "https://vc.lab.invalid/sdk",
    "tls_verified": True,
    "vm": "nginx-esxi1",
    "esxi_host": "esxi1",
    "esxi_version": "VMware ESXi 8.0.2",
    "esxi_cpu": "2 sockets × 8 cores",
    "esxi_cpu_mhz": 2500,
    "host_ht": {"available": True, "active": True, "config": True},
    "host_cpus": [4, 5],
    "asked": {"numCPUs": 2, "cpuAffinity": [4, 5], "latencySensitivity": "high"},
    "readback": {"numCPUs": 2, "numCoresPerSocket": 2, "cpuAffinity": [4, 5]},
    "power_state": "poweredOn",
    "guest_ip": "198.18.0.7",
}
CONTAINER_ROW = {
    "platform": "container",
    "runtime": "podman",
    "podman_version": "4.3.1",
    "container": "sizing-web1",
    "image": "docker.io/library/nginx:1.27",
    "cpuset_cpus": "2-3",
    "memory_bytes": 0,
    "init_pid": 77,
    "container_host": "web1",
    "address": "127.0.0.1",
    "argv": ["podman", "run", "--cpuset-cpus", "2-3"],
    "ulimits": {"nofile": 1048576, "nproc": 4194304},
    "published": [28080, 28443],
}


@pytest.mark.parametrize(
    ("row", "kind"),
    [
        (KVM_ROW, KvmSettings),
        (ESXI_ROW, EsxiSettings),
        (CONTAINER_ROW, ContainerSettings),
        ({}, BaremetalSettings),
    ],
)
def test_stored_settings_read_back_as_their_platforms_kind(
    row: dict[str, object], kind: type[PlatformSettings]
) -> None:
    s = PlatformSettings.parse(row)
    assert type(s) is kind
    assert dump(s) == row  # every key typed: written again, nothing lost or added
    meta = PointMeta.parse({"platform": "libvirt", "platform_settings": row})
    assert meta.env.platform_settings == s
    assert meta.to_json()["platform_settings"] == row


def test_each_kind_says_where_it_ran_and_its_vcpus() -> None:
    kvm = PlatformSettings.parse(KVM_ROW)
    esxi = PlatformSettings.parse(ESXI_ROW)
    box = PlatformSettings.parse(CONTAINER_ROW)
    assert isinstance(kvm, KvmSettings) and isinstance(esxi, EsxiSettings)
    assert isinstance(box, ContainerSettings)
    assert (kvm.physical_host(), esxi.physical_host(), box.physical_host()) == (
        "kvm1",
        "esxi1",
        "web1",
    )
    assert kvm.qemu_threads == (QemuThread(tid=4243, comm="CPU 0/KVM", cpus="2"),)
    assert esxi.readback == VmConfigRecord(numCPUs=2, numCoresPerSocket=2, cpuAffinity=(4, 5))
    assert box.ulimits == UlimitsRecord(nofile=1048576, nproc=4194304)
    assert (kvm.guest_vcpus, esxi.guest_vcpus, box.guest_vcpus) == (2, 2, None)
    assert BaremetalSettings().physical_host() is None
    env = PointMeta.parse({"platform_settings": CONTAINER_ROW}).env
    assert env.physical_host("web1-ctr", "container") == "web1"


def _records() -> list[type]:
    return [
        c
        for _, c in inspect.getmembers(records, inspect.isclass)
        if dataclasses.is_dataclass(c) and c.__module__.startswith("sizing.records")
    ]


# the records that keep foreign data (another sizing's keys, a host script's, a lock file's)
VERBATIM_FIELDS = {
    "PointMeta": "verbatim_unknown",
    "SampleMeta": "verbatim_unknown",
    "RunOptionsRecord": "verbatim_unknown",
    "ProfileDefRecord": "verbatim_unknown",  # another sizing's profile fields
    "HostRecord": "verbatim_facts",
    "LockOwner": "verbatim_lock",
}


def test_no_record_has_an_untyped_extra() -> None:
    seen = {}
    for cls in _records():
        names = {f.name for f in dataclasses.fields(cls)}
        assert "extra" not in names, cls.__name__
        kept = [f.name for f in dataclasses.fields(cls) if f.metadata.get(VERBATIM)]
        if kept:
            seen[cls.__name__] = kept[0]
    assert seen == VERBATIM_FIELDS


def test_every_stored_run_option_is_a_declared_field(tmp_path: Path) -> None:
    from sizing.sweep.options import RunOptions, run_options_record

    opts = RunOptions(
        inventory=tmp_path / "a.yml",
        cores=(1,),
        hts=(),
        profiles=(),
        db=tmp_path / "db",
        more_inventories=(tmp_path / "b.yml",),
        extra_vars={"x": "secret"},
        label="lbl",
    )
    record = run_options_record(opts)
    assert record.verbatim_unknown == {}
    assert record.more_inventories == (str((tmp_path / "b.yml").resolve()),)
    assert record.value("more_inventories") == record.more_inventories
