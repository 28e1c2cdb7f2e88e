"""Podman: NGINX inside a container on a measured host, pinned like bare-metal workers.

For each configuration (N cores, HT mode) the planner chooses host logical CPUs on the
*container host* with the same topology code as bare metal (distinct physical cores with
HT off, sibling pairs with HT on). This backend then starts a container of the locally
built image (``scripts/build-container-image``: Debian's nginx, njs, openssl and python3,
no registry) with rootful Podman: ``--cpuset-cpus`` those CPUs, a stated memory limit,
ulimits within the host's, and the NGINX ports published on the host's address through
the bridge network's NAT, the way a container is exposed in practice; reads the pinning
back from ``podman inspect``, from ``/proc/<init pid>/status`` and from its cgroup; and
returns the container as the :class:`~sizing.provision.platforms.base.Target` that the
NGINX playbook (over ``podman exec``: ``playbooks/connection_plugins/sizing_podman.py``)
and the clients (the published port) use.

Every container carries labels naming the ``sizing run`` process that started it. The run
removes it when it ends (Ctrl-C included); one that a dead run left (``kill -9``) is
removed by the next run's pre-flight, with its NAT rules (Podman's own), as a dead run's
nginx is stopped by the next. A container of the same name that sizing did not start is
refused, never removed.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

from sizing import paths
from sizing.errors import HostError, SizingError
from sizing.inventory import Host, Inventory
from sizing.model import Ht
from sizing.provision.hostsafety import owner_record, process_gone
from sizing.provision.platforms.base import Backend, BackendOptions, Target
from sizing.provision.platforms.container_spec import (
    LABEL_CONTROLLER,
    LABEL_OWNER,
    LABEL_PID,
    LABEL_PID_START,
    ContainerSpec,
    check_pinning,
    container_name,
    container_spec,
    owner_labels,
    placements,
    run_argv,
)
from sizing.records import ContainerSettings, UlimitsRecord
from sizing.records.host import LockOwner

PODMAN_TIMEOUT_S = 120.0
IMAGE_SCRIPT = "scripts/build-container-image"


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text else None
    except ValueError:
        return None


def dead_owner(labels: dict[str, str]) -> bool:
    """Whether the ``sizing run`` that started a container (its labels) has ended."""
    owner = LockOwner(
        controller=labels.get(LABEL_CONTROLLER) or None,
        pid=_int(labels.get(LABEL_PID)),
        pid_start=_int(labels.get(LABEL_PID_START)),
    )
    return process_gone(owner)


class Container(Backend):
    """A Podman container on an inventory host's own CPUs is the server under test."""

    def __init__(self, options: BackendOptions | None = None) -> None:
        self.options = options or BackendOptions()
        self.inventory = self.options.inventory
        self.checked: dict[str, str] = {}  # server -> its pre-flight verdict ("" = fine)
        self.owner = owner_record()

    # -- helpers ------------------------------------------------------------------------

    def placements(self, inventory: Inventory) -> dict[str, str]:
        return placements(inventory)

    def _spec(self, host: Host) -> ContainerSpec:
        if self.inventory is None:
            raise SizingError("the container platform needs the inventory to find its host")
        return container_spec(self.inventory, host)

    def _podman(
        self, spec: ContainerSpec, *args: str, check: bool = True, timeout: float = PODMAN_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        argv = [spec.podman, "--runtime", spec.runtime, *args]
        try:
            res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SizingError(f"{' '.join(argv[:4])}: {exc}") from None
        if check and res.returncode != 0:
            why = (res.stderr.strip().splitlines() or [f"exit status {res.returncode}"])[-1]
            raise SizingError(f"podman {args[0]} failed: {why}")
        return res

    def image(self, spec: ContainerSpec) -> str:
        """The image to run: ``image``, else the name the build script gives its inputs."""
        if spec.image:
            return spec.image
        script = paths.ROOT / IMAGE_SCRIPT
        try:
            res = subprocess.run(
                [str(script), "--name"], capture_output=True, text=True, timeout=30, check=True
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise SizingError(f"cannot name the container image ({script}): {exc}") from None
        return res.stdout.strip()

    def _ours(self, spec: ContainerSpec, name: str) -> dict[str, str] | None:
        """The labels of container ``name`` (None: there is none); one sizing did not
        start is refused."""
        res = self._podman(spec, "container", "inspect", "--format", "json", name, check=False)
        if res.returncode != 0:
            return None
        doc = json.loads(res.stdout or "[]")
        labels = dict((doc[0].get("Config") or {}).get("Labels") or {}) if doc else {}
        if labels.get(LABEL_OWNER) != "sizing":
            raise SizingError(
                f"a container named {name} exists and was not started by sizing; sizing "
                "starts its own for every point, so give it a name of its own "
                "(sizing_container.name)"
            )
        return labels

    def _refuse_foreign(self, name: str, labels: dict[str, str]) -> None:
        """A container of this name that another live ``sizing run`` started is its own."""
        if dead_owner(labels) or labels.get(LABEL_PID) == str(self.owner.pid):
            return
        raise SizingError(
            f"container {name} belongs to another sizing run that is still running (pid "
            f"{labels.get(LABEL_PID) or '?'}); wait for it, or give this server another "
            "sizing_container.name"
        )

    def remove_leftovers(self, spec: ContainerSpec) -> list[str]:
        """Remove the containers that a ``sizing run`` which has ended left (``kill -9``):
        Podman drops their NAT rules and port reservations with them. Their names."""
        res = self._podman(
            spec,
            "ps",
            "--all",
            "--filter",
            f"label={LABEL_OWNER}=sizing",
            "--format",
            "json",
            check=False,
        )
        gone = []
        for c in json.loads(res.stdout or "[]") if res.returncode == 0 else []:
            labels = {str(k): str(v) for k, v in (c.get("Labels") or {}).items()}
            if dead_owner(labels):
                name = (c.get("Names") or [c.get("Id", "")])[0]
                self._podman(spec, "rm", "--force", "--time", "0", name, check=False)
                gone.append(name)
        return gone

    # -- pre-flight ---------------------------------------------------------------------

    def skip_reason(self, host: Host, cores: int, ht: Ht) -> str:
        """The container host's pre-flight (once per server): one clear line per problem."""
        if host.name not in self.checked:
            self.checked[host.name] = self.preflight(host)
        return self.checked[host.name]

    def preflight(self, host: Host) -> str:
        """Why a container cannot run here ("" when it can): Podman and the runtime, a
        cgroup cpuset, the image, the published ports free (after removing what a dead
        run left)."""
        spec = self._spec(host)
        if shutil.which(spec.podman) is None:
            return f"container: {spec.podman} is not installed (apt-get install podman runc)"
        if shutil.which(spec.runtime) is None:
            return (
                f"container: the OCI runtime {spec.runtime} is not installed "
                f"(apt-get install {spec.runtime})"
            )
        why = cgroup_problem(spec.runtime) or ulimits(spec)[1]
        if why:
            return f"container: {why}"
        try:
            for name in self.remove_leftovers(spec):
                self.options.notify(
                    f"{host.name}: removed container {name}, left by a run that ended"
                )
            image = self.image(spec)
            if self._podman(spec, "image", "exists", image, check=False).returncode != 0:
                return (
                    f"container: image {image} is not built; build it with "
                    f"{IMAGE_SCRIPT} (mmdebstrap + podman import, about a minute)"
                )
            self._ours(spec, container_name(host, spec))
        except SizingError as exc:
            return f"container: {exc}"
        address = self._address(host)
        for port in (host.sizing.http_port, host.sizing.https_port):
            if port_taken(address, port):
                return (
                    f"container: port {port} on {address} is in use; the container "
                    "publishes it (sizing_http_port / sizing_https_port)"
                )
        return ""

    def _address(self, host: Host) -> str:
        if host.sizing.address:
            return host.sizing.address
        assert self.inventory is not None
        return self.inventory.hosts[self._spec(host).host].address

    # -- the interface ------------------------------------------------------------------

    def prepare(self, host: Host, cores: int, ht: Ht, cpus: tuple[int, ...]) -> Target:
        """Start the container for this configuration on ``cpus``; check its pinning."""
        spec = self._spec(host)
        name = container_name(host, spec)
        address = self._address(host)
        try:
            labels = self._ours(spec, name)
            if labels is not None:
                self._refuse_foreign(name, labels)
                self._podman(spec, "rm", "--force", "--time", "0", name)
            image = self.image(spec)
            labels = owner_labels(self.owner.to_json())
            argv = run_argv(
                spec,
                name=name,
                image=image,
                cpus=cpus,
                address=address,
                ports=(host.sizing.http_port, host.sizing.https_port),
                labels=labels,
                limits=ulimits(spec)[0],
            )
            try:
                self._podman(spec, *argv[3:])
                settings = self._readback(spec, name, image, cpus)
            except BaseException:  # a failed start leaves a created container: remove it
                self._podman(spec, "rm", "--force", "--time", "0", name, check=False)
                raise
        except SizingError as exc:
            raise HostError(host.name, str(exc)) from None
        nofile, nproc = ulimits(spec)[0]
        settings = replace(
            settings,
            container_host=spec.host,
            address=address,
            argv=tuple(argv),
            ulimits=UlimitsRecord(nofile=nofile, nproc=nproc),
            published=(host.sizing.http_port, host.sizing.https_port),
        )
        return Target(host=host.name, address=address, workers=tuple(cpus), settings=settings)

    def _readback(
        self, spec: ContainerSpec, name: str, image: str, cpus: tuple[int, ...]
    ) -> ContainerSettings:
        """The pinning as Podman, /proc and the cgroup report it; refused when they differ."""
        doc = json.loads(
            self._podman(spec, "container", "inspect", "--format", "json", name).stdout
        )[0]
        hc, state = doc.get("HostConfig") or {}, doc.get("State") or {}
        pid = int(state.get("Pid") or 0)
        proc_cpus, cgroup_cpus = proc_cpuset(pid)
        problems = check_pinning(cpus, str(hc.get("CpusetCpus") or ""), proc_cpus, cgroup_cpus)
        if problems:
            raise SizingError(f"pinning did not take effect: {'; '.join(problems)}")
        version = self._podman(spec, "version", "--format", "{{.Client.Version}}", check=False)
        memory = hc.get("Memory")
        return ContainerSettings(
            platform="container",
            runtime="podman",
            podman_version=version.stdout.strip(),
            oci_runtime=doc.get("OCIRuntime") or spec.runtime,
            container=name,
            container_id=str(doc.get("Id", ""))[:12],
            image=image,
            network=spec.network,
            container_address=_container_ip(doc),
            cpuset_cpus=hc.get("CpusetCpus"),
            memory_bytes=memory if isinstance(memory, int) else None,
            proc_cpus_allowed=proc_cpus,
            cgroup_cpuset=cgroup_cpus,
            init_pid=pid,
        )

    def teardown(self, host: Host) -> None:
        """Remove the container (its NAT rules and published ports go with it)."""
        spec = self._spec(host)
        name = container_name(host, spec)
        try:
            if self._ours(spec, name) is not None:
                self._podman(spec, "rm", "--force", "--time", "0", name)
        except SizingError as exc:
            raise HostError(host.name, f"could not remove container {name}: {exc}") from None

    def describe(self, host: Host) -> dict[str, Any]:
        """The container's host, runtime, image and ports; pre-flight with ``--connect``."""
        spec = self._spec(host)
        out: dict[str, Any] = {
            "platform": "container",
            "container": container_name(host, spec),
            "host": spec.host,
            "runtime": f"podman --runtime {spec.runtime}",
            "network": spec.network,
            "memory_mib": spec.memory_mib,
            "ports": [host.sizing.http_port, host.sizing.https_port],
        }
        where = (
            f"container {out['container']} on {spec.host} (podman, {spec.runtime}, "
            f"network {spec.network}, ports {out['ports'][0]}/{out['ports'][1]})"
        )
        if not self.options.connect:
            out["summary"] = f"{where}: not checked (--connect checks it)"
            return out
        why = self.preflight(host)
        out["error"] = why or None
        out["summary"] = f"{where}: {why or 'ready'}"
        return out


def _container_ip(doc: dict[str, Any]) -> str:
    nets = ((doc.get("NetworkSettings") or {}).get("Networks") or {}).values()
    return next((str(n.get("IPAddress")) for n in nets if n.get("IPAddress")), "")


def proc_cpuset(pid: int) -> tuple[str, str]:
    """``Cpus_allowed_list`` of ``pid`` and its cgroup's ``cpuset.cpus`` (v1 or v2)."""
    if pid <= 0:
        return "", ""
    status = Path(f"/proc/{pid}/status").read_text(errors="replace")
    allowed = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in status.splitlines()
            if ln.startswith("Cpus_allowed_list:")
        ),
        "",
    )
    rel = Path(f"/proc/{pid}/cpuset").read_text().strip().lstrip("/")
    for base in (Path("/sys/fs/cgroup/cpuset"), Path("/sys/fs/cgroup")):
        for leaf in ("cpuset.cpus", "cpuset.cpus.effective"):
            f = base / rel / leaf
            if f.is_file() and f.read_text().strip():
                return allowed, f.read_text().strip()
    return allowed, ""


def cgroup_problem(runtime: str) -> str:
    """Why containers cannot be given CPUs here ("" when they can): no cpuset controller,
    or crun on a host with cgroup v1 controllers (it refuses hybrid mode)."""
    v2 = Path("/sys/fs/cgroup/cgroup.controllers")
    v1 = Path("/sys/fs/cgroup/cpuset/cpuset.cpus")
    if v2.is_file() and "cpuset" in v2.read_text().split():
        return ""
    if not v1.is_file():
        return "no cgroup cpuset controller (neither cgroup v2 with cpuset nor v1 cpuset)"
    if os.path.basename(runtime) == "crun":
        return (
            "crun refuses cgroups in hybrid mode (this host has cgroup v1 controllers); "
            "set sizing_container.runtime: runc"
        )
    return ""


def ulimits(spec: ContainerSpec) -> tuple[tuple[int, int], str]:
    """The container's (open files, processes) limits and why they cannot be ("" when
    they can): the settings, else this machine's hard limits (what bare-metal nginx gets);
    a setting above the hard limit would fail in the runtime (setrlimit)."""
    hard = (
        resource.getrlimit(resource.RLIMIT_NOFILE)[1],
        resource.getrlimit(resource.RLIMIT_NPROC)[1],
    )
    # Podman's runtime process cannot be given more processes than pids exist: a limit
    # above kernel.pid_max fails at setrlimit (seen with Podman 4.3 and runc), so the
    # default stops there (no more processes than that can exist anyway).
    try:
        pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    except (OSError, ValueError):
        pid_max = 32768
    hard = (
        hard[0] if hard[0] != resource.RLIM_INFINITY else 1 << 20,
        min(hard[1] if hard[1] != resource.RLIM_INFINITY else pid_max, pid_max),
    )
    want = (spec.nofile or hard[0], spec.nproc or hard[1])
    for name, w, h, ul in (
        ("nofile", want[0], hard[0], "ulimit -Hn"),
        ("nproc", want[1], hard[1], "ulimit -Hu, kernel.pid_max"),
    ):
        if w > h:
            return want, (
                f"sizing_container.{name} {w} is above this machine's limit "
                f"{h} ({ul}); the runtime could not set it"
            )
    return want, ""


def port_taken(address: str, port: int) -> bool:
    """Whether something on this machine listens on (or holds) ``address:port``."""
    with socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return True
    return False
