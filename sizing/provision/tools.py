"""The tools on the hosts: the load generators and the window runner (``clients.yml``),
oha (``oha.yml``) and vegeta (``vegeta.yml``), and a freshly booted guest made ready for
its windows."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import lru_cache, partial
from pathlib import Path

from sizing.errors import HostError, ToolError
from sizing.facts import HostFacts
from sizing.inventory import Host, Inventory
from sizing.load.tools import OHA, VEGETA, client_installs, open_loop_tool
from sizing.paths import PLAYBOOKS, ROOT
from sizing.plan.points import PlannedPoint
from sizing.provision.ansible import Playbooks
from sizing.provision.facts import gather_facts

__all__ = [
    "OHA_BINARY",
    "VEGETA_BINARY",
    "ClientTools",
    "build_generators",
    "build_seconds",
    "clients_ready",
    "oha_binary",
    "prepare_clients",
    "ready_guest",
    "tools_ready",
    "vegeta_binary",
]

VEGETA_BINARY = ROOT / ".cache" / "bin" / "vegeta"  # scripts/install-vegeta
OHA_BINARY = ROOT / ".cache" / "bin" / "oha"  # scripts/install-oha


def oha_binary() -> Path | None:
    """The oha to copy to the clients: the checkout's pinned build, else one on PATH."""
    if OHA_BINARY.is_file():
        return OHA_BINARY
    found = shutil.which("oha")
    return Path(found) if found else None


def vegeta_binary() -> Path | None:
    """The vegeta to copy to the clients: the checkout's pinned build, else one on PATH
    (an installed package, e.g. under pipx, has no checkout cache)."""
    if VEGETA_BINARY.is_file():
        return VEGETA_BINARY
    found = shutil.which("vegeta")
    return Path(found) if found else None


# What building each open-loop generator costs the first time on a machine (2 cores), for
# the line that says why the run waits (scripts/install-oha and scripts/install-vegeta) and
# for the run's estimate (:func:`build_seconds`): seconds, fewest to most.
BUILD_TIME = {"oha": "about 4 to 6 minutes", "vegeta": "about a minute"}
# vegeta's fewest is none: Go's build cache, when it holds it, makes the build 0.5 s (37 s
# with only the module cache, about a minute cold; measured on 2 cores).
BUILD_SECONDS = {"oha": (240.0, 360.0), "vegeta": (0.0, 90.0)}
# What the install scripts print when a build (not a copy) starts: "install-oha: building ..."
_BUILD_STARTS = re.compile(r"\bbuilding\b")


def shared_build(gen: str) -> Path | None:
    """A copy of ``gen`` that an earlier clone on this machine built, kept outside the
    checkout (scripts/install-oha keeps ``~/.cache/sizing/bin/oha-<version>-<build>``):
    the install script copies it instead of compiling. None when there is none."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    for found in sorted((cache / "sizing" / "bin").glob(f"{gen}-*")):
        if found.suffix != ".build" and found.with_name(found.name + ".build").is_file():
            return found
    return None


def build_seconds(gens: Collection[str]) -> tuple[float, float]:
    """What building ``gens`` will cost before the first point, fewest to most seconds:
    nothing for one already here or on PATH, nor for one the machine's cache holds (a
    copy), the build's time otherwise (:data:`BUILD_SECONDS`)."""
    located = {"oha": oha_binary, "vegeta": vegeta_binary}
    low = high = 0.0
    for gen in sorted(set(gens) & set(located)):
        if located[gen]() is not None or shared_build(gen) is not None:
            continue
        lo, hi = BUILD_SECONDS[gen]
        low, high = low + lo, high + hi
    return low, high


def build_generators(
    needed: Sequence[tuple[str, str]], step: Callable[[str], None]
) -> dict[str, str]:
    """Build the open-loop generators the plan needs and this checkout lacks, before
    anything is measured (nothing compiles while load runs).

    ``needed`` holds (generator, profile) pairs. ``make run`` installs only what the default
    profiles use (wrk); oha and vegeta are built here on first need, once per machine, by
    the checkout's ``scripts/install-<name>``. The line that says why the run waits, and for
    how long, is said when the script says a build starts and it still runs a moment later:
    a copy taken from the machine's cache is not a build, and a build that Go's caches make
    quick is only said with the time it took, once done.
    Returns generator -> why it is still missing (no checkout script, no compiler, or the
    build failed); the points that need it then fail with that reason.
    """
    located = {"oha": oha_binary, "vegeta": vegeta_binary}
    missing: dict[str, str] = {}
    for gen in sorted({g for g, _ in needed if g in located}):
        if located[gen]() is not None:
            continue
        script = ROOT / "scripts" / f"install-{gen}"
        if not script.is_file():
            missing[gen] = f"{gen} is not installed and this installation has no {script}"
            continue
        profiles = ", ".join(sorted({p for g, p in needed if g == gen}))
        log = ROOT / ".cache" / f"install-{gen}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        said = f"building {gen} for the profile {profiles} ({BUILD_TIME[gen]}, once per machine; "
        said += f"log: {log})"
        took = _run_install(script, log, partial(step, said))
        if took is None:
            missing[gen] = f"building {gen} took over 30 minutes (see {log})"
            continue
        if located[gen]() is None:
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            missing[gen] = f"{gen} could not be built ({tail[0]}; see {log})"
        elif took > 0:
            step(f"built {gen} in {_seconds(took)}")
    return missing


def _seconds(s: float) -> str:
    """A build's time as a person reads it: "0.5 s", "41 s", "5 min 02 s"."""
    if s < 10:
        return f"{s:.1f} s"
    if s < 60:
        return f"{s:.0f} s"
    return f"{int(s // 60)} min {int(s % 60):02d} s"


# A build that ends this soon after it starts (Go's caches held it) is not announced with
# the cold build's time: only what it took is said, once it is done (issue 62: "building
# vegeta ... (about a minute)" before a build of 0.5 s).
ANNOUNCE_AFTER_S = 2.0


def _run_install(script: Path, log: Path, building: Callable[[], None]) -> float | None:
    """Run an install script, its output to ``log``. ``building`` is called once, when the
    log says a build starts and the script has run :data:`ANNOUNCE_AFTER_S`.
    Returns how long the build took (0 when the script built nothing: a copy, or a tool it
    could not build), None when it ran over :data:`INSTALL_TIMEOUT_S` (killed)."""
    t0 = time.monotonic()
    deadline = t0 + INSTALL_TIMEOUT_S
    building_seen = said = False
    with (
        log.open("w") as out,
        subprocess.Popen([str(script)], stdout=out, stderr=subprocess.STDOUT) as proc,
    ):
        while True:
            try:
                proc.wait(timeout=0.2)
                ended = True
            except subprocess.TimeoutExpired:
                ended = False
            now = time.monotonic()
            if not building_seen:
                building_seen = bool(_BUILD_STARTS.search(log.read_text(errors="replace")))
            if ended:
                return now - t0 if building_seen else 0.0
            if not said and building_seen and now - t0 >= ANNOUNCE_AFTER_S:
                said = True
                building()
            if now > deadline:
                proc.kill()
                return None


INSTALL_TIMEOUT_S = 1800.0


def prepare_clients(
    playbooks: Playbooks,
    plan: Sequence[PlannedPoint],
    guests: Sequence[str],
    facts: Mapping[str, HostFacts],
) -> dict[str, str]:
    """Install the load generators on the plan's clients and the window runner on its
    servers (not on ``guests``, which get it once booted: :func:`ready_guest`). Nothing is
    run when the facts show every one of those hosts ready (:func:`tools_ready`).

    Returns host -> why for every host that could not be prepared; raises ToolError when
    no client is left.
    """
    names, hosts = _tool_hosts(plan, guests)
    # what the plan's generators declare (sizing.load.base.ToolInstall)
    commands, packages = client_installs(p.profile.generator for p in plan if not p.skipped)
    if clients_ready(plan, guests, facts):
        return {}
    res = playbooks.run(
        "clients.yml",
        hosts,
        extravars={
            "sizing_clients": ",".join(names),
            "sizing_hosts": ",".join(hosts),
            "sizing_client_commands": commands,
            "sizing_client_packages": packages,
        },
    )
    broken = {
        host: f"load generator could not be installed: {why}"
        for host, why in res.problems().items()
    }
    if broken and all(n in broken for n in names):
        raise ToolError(f"{names[0]}: {broken[names[0]]}")
    return broken


def _tool_hosts(plan: Sequence[PlannedPoint], guests: Sequence[str]) -> tuple[list[str], list[str]]:
    """The plan's clients, and every host that gets the tools (clients, servers not
    booted per point, upstreams)."""
    names = sorted({c.name for p in plan if not p.skipped for c in p.clients})
    servers = sorted(
        {p.server.name for p in plan if not p.skipped and p.server.name not in guests}
        | {u.host for p in plan if not p.skipped for u in p.upstreams}
    )  # sampled
    return names, sorted(set(names) | set(servers))


def clients_ready(
    plan: Sequence[PlannedPoint], guests: Sequence[str], facts: Mapping[str, HostFacts]
) -> bool:
    """True when the facts show every host of the plan ready: :func:`prepare_clients`
    then runs nothing (and the run's estimate counts nothing for it)."""
    names, hosts = _tool_hosts(plan, guests)
    commands, _ = client_installs(p.profile.generator for p in plan if not p.skipped)
    return all(tools_ready(facts.get(h), commands if h in names else ()) for h in hosts)


# The files playbooks/clients.yml puts in every host's tool directory, with their modes.
TOOL_FILES = {"loadgen.py": "0700", "loadproto.py": "0600", "wrk_report.lua": "0600"}


@lru_cache(maxsize=1)
def _tool_files() -> dict[str, tuple[str, str]]:
    """name -> (mode, SHA-1) of this sizing's copies, as files/tooldir.py reports them."""
    where = PLAYBOOKS / "files"
    return {
        name: (mode, hashlib.sha1((where / name).read_bytes()).hexdigest())
        for name, mode in TOOL_FILES.items()
    }


def tools_ready(facts: HostFacts | None, commands: Sequence[str]) -> bool:
    """True when the host's facts show what playbooks/clients.yml would leave there: a
    private tool directory with this sizing's window runner, protocol and wrk script, and
    ``commands`` (its load generators, for a client) on PATH."""
    look = facts.tool_dir if facts is not None else None
    return look is not None and look.holds(_tool_files(), commands)


def ready_guest(playbooks: Playbooks, inventory: Inventory, host: str) -> tuple[HostFacts, float]:
    """Read a freshly booted guest's facts and put the window runner on it.

    Returns its facts and its start lead: how long Ansible took to run the facts script
    there. An emulated guest needs many seconds to start a Python program, and its windows
    must still begin with the clients'.
    """
    t0 = time.monotonic()
    facts, problems = gather_facts(playbooks, [inventory.hosts[host]])
    lead = 1.5 * (time.monotonic() - t0) + 2.0
    if host not in facts:
        why = problems.get(host, "unreachable")
        raise HostError(host, f"facts could not be read after boot: {why}")
    # its first play (the generators) matches no host
    res = playbooks.run("clients.yml", [host], extravars={"sizing_hosts": host})
    if not res.ok:
        raise ToolError(f"{host}: the window runner could not be installed: {res.why(host)}")
    return facts[host], lead


class ClientTools:
    """Tools installed once per run on demand (oha or vegeta for the latency profiles)."""

    def __init__(self, playbooks: Playbooks, step: Callable[[str], None]) -> None:
        self.playbooks = playbooks
        self.step = step
        self.vegeta_on: set[str] = set()
        self.oha_on: set[str] = set()

    def ensure_generator(self, generator: str, clients: Sequence[Host]) -> None:
        """Copy a fixed-rate profile's open-loop generator to its clients once per run."""
        install = {OHA.name: self.ensure_oha, VEGETA.name: self.ensure_vegeta}
        install[open_loop_tool(generator).name](clients)

    def ensure_oha(self, clients: Sequence[Host]) -> None:
        """Copy the pinned oha and ``latency_hist.py`` to every client once per run
        (``playbooks/oha.yml``)."""
        names = sorted({c.name for c in clients} - self.oha_on)
        if not names:
            return
        binary = oha_binary()
        if binary is None:
            raise ToolError(
                f"oha is not installed ({OHA_BINARY} is missing, none on PATH): "
                "scripts/install-oha builds the pinned oha (it needs cargo)"
            )
        self.step("installing oha on the clients")
        res = self.playbooks.run(
            "oha.yml",
            names,
            extravars={"sizing_hosts": ",".join(names), "sizing_oha_binary": str(binary)},
        )
        if not res.ok:
            host, why = next(
                iter(res.problems().items()), (names[0], f"{res.status} (rc {res.rc})")
            )
            raise ToolError(f"{host}: oha could not be installed: {why}")
        self.oha_on.update(names)

    def ensure_vegeta(self, clients: Sequence[Host]) -> None:
        """Copy the pinned vegeta to every client once per run (``playbooks/vegeta.yml``)."""
        names = sorted({c.name for c in clients} - self.vegeta_on)
        if not names:
            return
        binary = vegeta_binary()
        if binary is None:
            raise ToolError(
                f"vegeta is not installed ({VEGETA_BINARY} is missing, none on PATH): "
                "scripts/install-vegeta builds the pinned vegeta (it needs go)"
            )
        self.step("installing vegeta on the clients")
        res = self.playbooks.run(
            "vegeta.yml",
            names,
            extravars={
                "sizing_hosts": ",".join(names),
                "sizing_vegeta_binary": str(binary),
            },
        )
        if not res.ok:
            host, why = next(
                iter(res.problems().items()), (names[0], f"{res.status} (rc {res.rc})")
            )
            raise ToolError(f"{host}: vegeta could not be installed: {why}")
        self.vegeta_on.update(names)
