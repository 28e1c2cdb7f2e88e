"""The container platform's pure parts: its inventory settings, the `podman run` command
of a point, the pinning check, who left a container, its pairs and its labels."""

from __future__ import annotations

import os
import resource
from pathlib import Path

import pytest

from sizing import paths, profiles
from sizing.errors import InputError
from sizing.inventory import load_inventory
from sizing.model import BasisPlatform, Ht, Platform, basis_platform, cost_family, family_of
from sizing.plan import build_plan
from sizing.plan.pairs import PairKind, find_pairs
from sizing.provision.hostsafety import owner_record
from sizing.provision.platforms.container import dead_owner, ulimits
from sizing.provision.platforms.container_spec import (
    ContainerSpec,
    check_pinning,
    container_spec,
    owner_labels,
    placements,
    run_argv,
)
from sizing.topology import Topology

DATA = Path(__file__).parent.parent / "data" / "lscpu"
SMT = Topology.from_lscpu((DATA / "poweredge_r640_2x8c_ht.txt").read_text())
LOCAL = paths.INVENTORIES / "container-local.yml"

INV = """
all:
  vars: {{ansible_connection: local}}
  children:
    servers:
      hosts:
        metal: {{}}
        ctr:
          sizing_platform: container
          sizing_http_port: 18080
          sizing_https_port: 18443
{ctr}
    clients:
      hosts:
        metal: {{}}
"""


def _inv(tmp_path: Path, ctr: str) -> object:
    path = tmp_path / "inv.yml"
    path.write_text(INV.format(ctr=ctr))
    return load_inventory(path)


def test_run_argv_pins_publishes_limits_and_never_pulls() -> None:
    spec = ContainerSpec(host="metal", runtime="runc", memory_mib=512)
    argv = run_argv(
        spec,
        name="c1",
        image="localhost/sizing-nginx:abc",
        cpus=(9, 8, 1),
        address="192.0.2.5",
        ports=(18080, 18443),
        labels={"io.sizing.owner": "s"},
        limits=(20000, 32768),
    )
    assert argv[:4] == ["podman", "--runtime", "runc", "run"]
    text = " ".join(argv)
    assert "--cpuset-cpus 1,8-9" in text and "--memory 512m" in text
    assert "--pull never" in text and "--network podman" in text
    assert "--ulimit nofile=20000:20000 --ulimit nproc=32768:32768" in text
    assert "--publish 192.0.2.5:18080:18080/tcp --publish 192.0.2.5:18443:18443/tcp" in text
    assert "--label io.sizing.owner=s" in text
    assert argv[-3:] == ["localhost/sizing-nginx:abc", "/bin/sleep", "infinity"]


def test_pinning_must_agree_in_podman_proc_and_cgroup() -> None:
    assert check_pinning((0, 1), "0-1", "0,1", "0-1") == []
    problems = check_pinning((0, 1), "0", "0-1", "")
    assert len(problems) == 2
    assert "podman inspect CpusetCpus is '0', not '0-1'" in problems[0]
    assert "cgroup cpuset.cpus is 'empty'" in problems[1]


def test_settings_are_validated_one_line_each(tmp_path: Path) -> None:
    inv = _inv(tmp_path, "          sizing_container: {host: nowhere, memory_mib: 1, colour: red}")
    with pytest.raises(InputError) as err:
        placements(inv)  # type: ignore[arg-type]
    text = "\n".join(err.value.problems)
    assert "host ctr: sizing_container.memory_mib:" in text
    assert "host ctr: sizing_container.colour: unknown setting" in text
    inv = _inv(tmp_path, "          sizing_container: {host: nowhere}")
    with pytest.raises(InputError) as err:
        placements(inv)  # type: ignore[arg-type]
    assert err.value.problems == [
        "host ctr: sizing_container.host: no inventory host 'nowhere'",
        "host ctr: ansible_connection: set it to sizing_podman (the NGINX playbook reaches "
        "the container with podman exec)",
    ]
    inv = _inv(
        tmp_path,
        "          ansible_connection: sizing_podman\n          sizing_container: {host: metal}",
    )
    assert placements(inv) == {"ctr": "metal"}  # type: ignore[arg-type]
    assert container_spec(inv, inv.hosts["ctr"]).runtime == "runc"  # type: ignore[attr-defined]


def test_the_bundled_inventory_pairs_the_container_with_its_hosts_bare_metal() -> None:
    inv = load_inventory(LOCAL)
    placement = placements(inv)
    assert placement == {"nginx-container": "localhost"}
    topologies = {"localhost": SMT}
    plan = build_plan(
        inv, topologies, (1, 2), (Ht.OFF,), [profiles.load("static-rps")], placement=placement
    )
    pairs, notes = find_pairs(plan, inv, placement)
    assert notes == []
    assert [(p.kind, p.a.key.host, p.b.key.host, p.a.key.cores) for p in pairs] == [
        (PairKind.VIRTUALIZATION, "localhost", "nginx-container", 1),
        (PairKind.VIRTUALIZATION, "localhost", "nginx-container", 2),
    ]
    for p in pairs:  # the same host CPUs, from the same topology code
        assert p.a.allocation is not None and p.b.allocation is not None
        assert p.a.allocation.server_cpus == p.b.allocation.server_cpus
        assert p.label().endswith("localhost bare metal / nginx-container container")


def test_container_is_its_own_platform_never_bare_metal_nor_a_hypervisor() -> None:
    assert family_of(Platform.CONTAINER) == "container"
    assert family_of(Platform.LIBVIRT) == "hypervisor"
    assert basis_platform("container") == BasisPlatform.CONTAINER == "container"
    assert cost_family("container") == "container"
    assert Platform.CONTAINER.pairs_with_host and not Platform.VSPHERE.pairs_with_host
    assert Platform.CONTAINER.leg_word == "container" and Platform.LIBVIRT.leg_word == "guest"


def test_a_container_is_left_by_a_dead_run_only() -> None:
    me = owner_labels(owner_record().to_json())
    assert not dead_owner(me)
    assert dead_owner({**me, "io.sizing.pid-start": "1"})  # a reused pid
    assert dead_owner({**me, "io.sizing.pid": str(2**22 + 7)})  # no such process
    assert not dead_owner({**me, "io.sizing.controller": "another-machine"})  # unknown


def test_ulimits_default_to_the_hosts_and_refuse_more() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    (nofile, nproc), why = ulimits(ContainerSpec(host="h"))
    assert why == "" and nproc <= int(Path("/proc/sys/kernel/pid_max").read_text())
    assert nofile == (hard if hard != resource.RLIM_INFINITY else 1 << 20)
    if hard != resource.RLIM_INFINITY and hard < 1_073_741_816:
        _, why = ulimits(ContainerSpec(host="h", nofile=hard + 1))
        assert f"sizing_container.nofile {hard + 1} is above this machine's limit" in why
    assert os.path.exists(LOCAL)


def test_preflight_says_one_clear_line_per_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket
    import subprocess

    from sizing.provision.platforms import BackendOptions
    from sizing.provision.platforms import container as mod

    inv = _inv(
        tmp_path,
        "          ansible_connection: sizing_podman\n"
        "          sizing_container: {host: metal, runtime: crun}",
    )
    host = inv.hosts["ctr"]  # type: ignore[attr-defined]
    backend = mod.Container(BackendOptions(inventory=inv))  # type: ignore[arg-type]
    monkeypatch.setattr(mod.shutil, "which", lambda name: None if name == "podman" else name)
    assert backend.preflight(host) == (
        "container: podman is not installed (apt-get install podman runc)"
    )
    monkeypatch.setattr(mod.shutil, "which", lambda name: None if name == "crun" else name)
    assert backend.preflight(host) == (
        "container: the OCI runtime crun is not installed (apt-get install crun)"
    )
    monkeypatch.setattr(mod.shutil, "which", lambda name: name)
    monkeypatch.setattr(mod, "cgroup_problem", lambda runtime: f"{runtime} refuses hybrid mode")
    assert backend.preflight(host) == "container: crun refuses hybrid mode"
    monkeypatch.setattr(mod, "cgroup_problem", lambda runtime: "")
    monkeypatch.setattr(backend, "remove_leftovers", lambda spec: [])
    monkeypatch.setattr(backend, "image", lambda spec: "localhost/sizing-nginx:abc")
    absent = subprocess.CompletedProcess([], 1, "", "")
    monkeypatch.setattr(backend, "_podman", lambda spec, *args, **kw: absent)
    assert backend.preflight(host) == (
        "container: image localhost/sizing-nginx:abc is not built; build it with "
        "scripts/build-container-image (mmdebstrap + podman import, about a minute)"
    )
    present = subprocess.CompletedProcess([], 0, "", "")
    monkeypatch.setattr(backend, "_podman", lambda spec, *args, **kw: present)
    monkeypatch.setattr(backend, "_ours", lambda spec, name: None)
    with socket.socket() as s:  # something holds the container's HTTP port
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        monkeypatch.setattr(host.sizing, "http_port", port)
        assert backend.preflight(host) == (
            f"container: port {port} on 127.0.0.1 is in use; the container publishes it "
            "(sizing_http_port / sizing_https_port)"
        )


def test_a_container_of_another_live_run_is_refused(tmp_path: Path) -> None:
    from sizing.errors import SizingError
    from sizing.provision.platforms import BackendOptions
    from sizing.provision.platforms import container as mod
    from sizing.provision.runnerdir import start_ticks

    backend = mod.Container(BackendOptions())
    me = owner_labels(owner_record().to_json())
    backend._refuse_foreign("c", me)  # this run's own: replaced
    backend._refuse_foreign("c", {**me, "io.sizing.pid": str(2**22 + 7)})  # a dead run's
    init = {**me, "io.sizing.pid": "1", "io.sizing.pid-start": str(start_ticks(1))}
    with pytest.raises(SizingError, match="belongs to another sizing run that is still running"):
        backend._refuse_foreign("c", init)  # pid 1 lives


def test_a_containers_crypto_ceiling_is_measured_on_its_hosts_cpus() -> None:
    """The container's NGINX signs on its host's own CPUs and kernel: its TLS points ask the
    host for the ceiling (a guest's vCPUs are not its host's CPUs: none asked for)."""
    from sizing.ceilings import crypto_ceiling
    from sizing.provision.ceiling import ceiling_jobs

    inv = load_inventory(LOCAL)
    placement = placements(inv)
    plan = build_plan(
        inv, {"localhost": SMT}, (1,), (Ht.OFF,), [profiles.load("static-tps")], placement=placement
    )
    ctr = next(p for p in plan if p.server.platform is Platform.CONTAINER)
    assert ctr.allocation is not None
    jobs = ceiling_jobs([ctr], {}, placement)
    assert list(jobs) == ["localhost"]  # measured on the host, never "in" the container
    assert [j.cpus for j in jobs["localhost"]] == [str(ctr.allocation.server_cpus[0])]
    bare = [p for p in plan if p.server.platform is Platform.BAREMETAL]
    assert list(ceiling_jobs(bare, {}, placement)) == ["localhost"]  # bare metal: its own
    assert [p.shares_host_cpus for p in Platform] == [p is Platform.CONTAINER for p in Platform]
    unmeasured = crypto_ceiling(None, "rsa-2048", 1, "off")
    assert unmeasured is not None and "booted" not in unmeasured.note
