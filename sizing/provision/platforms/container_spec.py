"""The pure parts of the ``container`` platform: its inventory settings, the ``podman run``
command of a point, the labels that name a run's containers, and the pinning check.

Nothing here runs a program; :mod:`sizing.provision.platforms.container` does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sizing.errors import InputError
from sizing.inventory import Host, Inventory
from sizing.model import Platform
from sizing.topology import cpulist, parse_cpulist

__all__ = [
    "CONNECTION",
    "LABEL_OWNER",
    "ContainerSpec",
    "check_pinning",
    "container_name",
    "container_spec",
    "owner_labels",
    "placements",
    "run_argv",
]

# The Ansible connection (playbooks/connection_plugins/sizing_podman.py) a container server
# is reached with: the NGINX playbook runs in the container as on any host.
CONNECTION = "sizing_podman"
# Every container sizing starts carries these labels: the next run finds what a run that
# died (kill -9) left, and never touches a container it did not start.
LABEL_OWNER = "io.sizing.owner"
LABEL_PID = "io.sizing.pid"
LABEL_PID_START = "io.sizing.pid-start"
LABEL_CONTROLLER = "io.sizing.controller"

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


class ContainerSpec(BaseModel):
    """``sizing_container`` of a container server."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    host: str = Field(description="the inventory host whose Podman runs the container")
    name: str | None = Field(default=None, description="the container's name")
    runtime: str = Field(default="runc", description="podman --runtime (crun needs cgroup v2)")
    image: str | None = Field(default=None, description="default: build-container-image's")
    network: str = Field(default="podman", description="a Podman bridge network")
    memory_mib: int = Field(default=1024, ge=64, le=1_048_576)
    # Podman's default ulimits can exceed a host's hard limits (setrlimit fails). Default:
    # the host's hard limits (`ulimit -Hn` / `ulimit -Hu`), what bare-metal nginx gets.
    nofile: int | None = Field(default=None, ge=64, le=1_073_741_816)
    nproc: int | None = Field(default=None, ge=16, le=4_194_304)
    podman: str = Field(default="podman", description="the podman program")

    @field_validator("name", "network")
    @classmethod
    def _a_name(cls, v: str | None) -> str | None:
        if v is not None and not _NAME.match(v):
            raise ValueError("letters, digits, '_', '.', '-' (63 at most), not first")
        return v


def _problems(prefix: str, exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = "unknown setting" if err["type"] == "extra_forbidden" else err["msg"]
        out.append(f"{prefix}{'.' + loc if loc else ''}: {msg}")
    return out


def container_spec(inventory: Inventory, host: Host) -> ContainerSpec:
    """The validated ``sizing_container`` of ``host``, or :class:`InputError` (one line per
    problem) naming the inventory file."""
    where = f"host {host.name}: sizing_container"
    if not host.sizing.container:
        raise InputError(
            str(inventory.path), [f"{where}: missing (a container server needs at least host)"]
        )
    try:
        spec = ContainerSpec.model_validate(host.sizing.container)
    except ValidationError as exc:
        raise InputError(str(inventory.path), _problems(where, exc)) from None
    problems = []
    runner = inventory.hosts.get(spec.host)
    if runner is None:
        problems.append(f"{where}.host: no inventory host {spec.host!r}")
    elif not runner.is_local:
        problems.append(
            f"{where}.host: {spec.host} is not this machine (ansible_connection: local); "
            "sizing runs Podman on the machine it runs on: run sizing on the container host"
        )
    if host.variables.get("ansible_connection") != CONNECTION:
        problems.append(
            f"host {host.name}: ansible_connection: set it to {CONNECTION} (the NGINX "
            "playbook reaches the container with podman exec)"
        )
    if problems:
        raise InputError(str(inventory.path), problems)
    return spec


def placements(inventory: Inventory) -> dict[str, str]:
    """Container server -> the inventory host whose CPUs it runs on; all problems of every
    container server in one :class:`InputError`."""
    out: dict[str, str] = {}
    problems: list[str] = []
    for host in inventory.servers:
        if host.platform is not Platform.CONTAINER:
            continue
        try:
            out[host.name] = container_spec(inventory, host).host
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(str(inventory.path), problems)
    return out


def container_name(host: Host, spec: ContainerSpec) -> str:
    """The container's name: ``name``, else the Ansible host it is reached as."""
    return spec.name or str(host.variables.get("ansible_host") or host.name)


def owner_labels(owner: Mapping[str, Any]) -> dict[str, str]:
    """The labels of a run's container: the ``sizing run`` process (pid and start time, so
    a reused pid is not taken for it) on its controller (machine-id)."""
    return {
        LABEL_OWNER: "sizing",
        LABEL_PID: str(owner.get("pid") or ""),
        LABEL_PID_START: str(owner.get("pid_start") or ""),
        LABEL_CONTROLLER: str(owner.get("controller") or ""),
    }


def run_argv(
    spec: ContainerSpec,
    *,
    name: str,
    image: str,
    cpus: Sequence[int],
    address: str,
    ports: Sequence[int],
    labels: Mapping[str, str],
    limits: tuple[int, int],
) -> list[str]:
    """``podman run`` of a point: the point's host CPUs (``--cpuset-cpus``), the memory
    limit, the ulimits, each port published on the host's ``address`` through the bridge
    network's NAT, ``limits`` (open files, processes) as ulimits, and ``sleep infinity``
    under an init (the NGINX playbook then starts
    nginx in it with ``podman exec``, as on bare metal). Never pulls from a registry."""
    argv = [
        spec.podman,
        "--runtime",
        spec.runtime,
        "run",
        "--detach",
        "--name",
        name,
        "--pull",
        "never",
        "--init",
        "--network",
        spec.network,
        "--cpuset-cpus",
        cpulist(sorted(cpus)),
        "--memory",
        f"{spec.memory_mib}m",
        "--ulimit",
        f"nofile={limits[0]}:{limits[0]}",
        "--ulimit",
        f"nproc={limits[1]}:{limits[1]}",
    ]
    for port in ports:
        argv += ["--publish", f"{address}:{port}:{port}/tcp"]
    for key, value in sorted(labels.items()):
        argv += ["--label", f"{key}={value}"]
    return [*argv, image, "/bin/sleep", "infinity"]


def check_pinning(
    cpus: Sequence[int], runtime_cpuset: str, proc_cpus: str, cgroup_cpus: str
) -> list[str]:
    """What differs between the point's CPUs and what the runtime (``podman inspect``),
    the container's init (``/proc/<pid>/status`` Cpus_allowed_list) and its cgroup
    (``cpuset.cpus``) say; [] when all agree."""
    want = tuple(sorted(cpus))
    problems = []
    for what, text in (
        ("podman inspect CpusetCpus", runtime_cpuset),
        ("/proc Cpus_allowed_list", proc_cpus),
        ("cgroup cpuset.cpus", cgroup_cpus),
    ):
        try:
            got = tuple(sorted(parse_cpulist(text))) if text.strip() else ()
        except ValueError:
            got = ()
        if got != want:
            problems.append(f"{what} is {text.strip() or 'empty'!r}, not {cpulist(want)!r}")
    return problems
