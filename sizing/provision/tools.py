"""The tools on the hosts: the load generators and the window runner (``clients.yml``),
the generators sizing builds and copies itself (each one's ``built`` playbook, as its
module in :mod:`sizing.load` declares it), and a freshly booted guest made ready for its
windows. No generator is named here: each is asked of the registry
(:mod:`sizing.load.tools`)."""

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
from sizing.load.tools import ToolBuild, built_for, client_files, client_installs, open_loop_tool
from sizing.paths import PLAYBOOKS, ROOT
from sizing.plan.points import PlannedPoint
from sizing.provision.ansible import Playbooks
from sizing.provision.facts import gather_facts

__all__ = [
    "TOOL_FILES",
    "ClientTools",
    "build_generators",
    "build_seconds",
    "checkout_binary",
    "clients_ready",
    "located",
    "prepare_clients",
    "ready_guest",
    "tools_ready",
]


def checkout_binary(build: ToolBuild) -> Path:
    """Where the checkout's ``scripts/install-BINARY`` leaves what it builds."""
    return ROOT / ".cache" / "bin" / build.binary


def located(build: ToolBuild) -> Path | None:
    """The binary to copy to the clients: the checkout's pinned build, else one on PATH (an
    installed package, e.g. under pipx, has no checkout cache)."""
    own = checkout_binary(build)
    if own.is_file():
        return own
    found = shutil.which(build.binary)
    return Path(found) if found else None


# What the install scripts print when a build (not a copy) starts: "install-NAME: building ..."
_BUILD_STARTS = re.compile(r"\bbuilding\b")


def shared_build(binary: str) -> Path | None:
    """A copy of ``binary`` that an earlier clone on this machine built, kept outside the
    checkout (scripts/install-BINARY keeps ``~/.cache/sizing/bin/BINARY-<version>-<build>``):
    the install script copies it instead of compiling. None when there is none."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    for found in sorted((cache / "sizing" / "bin").glob(f"{binary}-*")):
        if found.suffix != ".build" and found.with_name(found.name + ".build").is_file():
            return found
    return None


def _builds(gens: Collection[str]) -> dict[str, ToolBuild]:
    """What the generators ``gens`` need built, by binary (the registry's ``built``)."""
    return {b.binary: b for g in gens if (b := built_for(g)) is not None}


def build_seconds(gens: Collection[str]) -> tuple[float, float]:
    """What building ``gens`` will cost before the first point, fewest to most seconds:
    nothing for one already here or on PATH, nor for one the machine's cache holds (a
    copy), the build's time otherwise (each build's declared ``seconds``)."""
    low = high = 0.0
    for binary, build in sorted(_builds(gens).items()):
        if located(build) is not None or shared_build(binary) is not None:
            continue
        lo, hi = build.seconds
        low, high = low + lo, high + hi
    return low, high


def build_generators(
    needed: Sequence[tuple[str, str]], step: Callable[[str], None]
) -> dict[str, str]:
    """Build the generators the plan needs that sizing builds itself and this checkout
    lacks, before anything is measured (nothing compiles while load runs).

    ``needed`` holds (generator, profile) pairs. ``make run`` installs only what the default
    profiles use; a generator with a ``built`` declaration is built here on first need, once
    per machine, by the checkout's ``scripts/install-<binary>``. The line that says why the
    run waits, and for how long, is said when the script says a build starts and it still
    runs a moment later: a copy taken from the machine's cache is not a build, and a build
    that Go's caches make quick is only said with the time it took, once done.
    Returns binary -> why it is still missing (no checkout script, no compiler, or the
    build failed); the points that need it then fail with that reason.
    """
    missing: dict[str, str] = {}
    for binary, build in sorted(_builds({g for g, _ in needed}).items()):
        if located(build) is not None:
            continue
        script = ROOT / build.script
        if not script.is_file():
            missing[binary] = f"{binary} is not installed and this installation has no {script}"
            continue
        profiles = ", ".join(sorted({p for g, p in needed if built_for(g) == build}))
        log = ROOT / ".cache" / f"install-{binary}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        said = f"building {binary} for the profile {profiles} ({build.time_words}, once per "
        said += f"machine; log: {log})"
        took = _run_install(script, log, partial(step, said))
        if took is None:
            missing[binary] = f"building {binary} took over 30 minutes (see {log})"
            continue
        if located(build) is None:
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            missing[binary] = f"{binary} could not be built ({tail[0]}; see {log})"
        elif took > 0:
            step(f"built {binary} in {_seconds(took)}")
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
# ... (about a minute)" was said before a build of 0.5 s).
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


# The files playbooks/clients.yml puts in every host's tool directory, with their modes:
# the window runner and its protocol, and what the installed generators ship beside them.
TOOL_FILES = {
    "loadgen.py": "0700",
    "loadproto.py": "0600",
    **dict.fromkeys(client_files(), "0600"),
}


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
    private tool directory with this sizing's window runner, protocol and generators' files, and
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
    """The generators sizing builds and copies itself, copied to a point's clients once per
    run, on demand (the latency profiles' open-loop tool, the replay's)."""

    def __init__(self, playbooks: Playbooks, step: Callable[[str], None]) -> None:
        self.playbooks = playbooks
        self.step = step
        self.copied: dict[str, set[str]] = {}  # binary -> the clients that have it

    def ensure_generator(self, generator: str, clients: Sequence[Host]) -> None:
        """Copy a fixed-rate profile's open-loop generator to its clients once per run."""
        self.ensure(open_loop_tool(generator).built, clients)

    def ensure(self, build: ToolBuild | None, clients: Sequence[Host]) -> None:
        """Copy the binary ``build`` declares (and the files its playbook ships) to every
        client that lacks it this run; nothing for None (a generator clients.yml installs)."""
        if build is None:
            return
        have = self.copied.setdefault(build.binary, set())
        names = sorted({c.name for c in clients} - have)
        if not names:
            return
        binary = located(build)
        if binary is None:
            raise ToolError(
                f"{build.binary} is not installed ({checkout_binary(build)} is missing, none "
                f"on PATH): {build.script} builds the pinned {build.binary} (it needs "
                f"{build.needs})"
            )
        self.step(f"installing {build.binary} on the clients")
        res = self.playbooks.run(
            build.playbook,
            names,
            extravars={"sizing_hosts": ",".join(names), build.extravar: str(binary)},
        )
        if not res.ok:
            host, why = next(
                iter(res.problems().items()), (names[0], f"{res.status} (rc {res.rc})")
            )
            raise ToolError(f"{host}: {build.binary} could not be installed: {why}")
        have.update(names)
