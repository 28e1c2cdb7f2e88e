"""``sizing doctor``: is every external program and capability the code calls on this
machine, and in a version that works?

One :class:`Check` per program or capability, with what needs it (a ``Need``), how to read
its version, and what installs it. ``make test`` runs ``sizing doctor --dev`` first, so a
package that ``scripts/setup`` forgot is named in one line before any test fails on it, and
``scripts/fresh-root-check`` runs the same checks in a fresh Debian root file system.
"""

from __future__ import annotations

import ctypes.util
import enum
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from sizing import paths
from sizing.load.tools import DEFAULT_GENERATOR, TOOLS, builds

__all__ = ["Check", "Finding", "Need", "State", "diagnose", "CHECKS"]


class Need(enum.StrEnum):
    """What needs a program: `make run` (run), the guide (guide), the latency profiles'
    open-loop generators (latency), or only the tests and the other platform legs (dev)."""

    RUN = "run"
    GUIDE = "guide"
    LATENCY = "latency"
    DEV = "dev"


class State(enum.StrEnum):
    OK = "ok"
    MISSING = "missing"
    BUILDING = "building"  # a scripts/bg job is building it right now
    ON_NEED = "on need"  # not built yet: `sizing run` builds it when a point first needs it


@dataclass(frozen=True)
class Finding:
    """What one check found: its state, the version or the detail read, and what to do."""

    name: str
    need: Need
    state: State
    detail: str
    fix: str

    def to_json(self) -> dict[str, str]:
        return {
            "name": self.name,
            "need": str(self.need),
            "state": str(self.state),
            "detail": self.detail,
            "fix": self.fix,
        }


@dataclass(frozen=True)
class Check:
    """One program or capability: ``probe`` returns its version or detail, or raises
    :class:`NotFound` with what was not found."""

    name: str
    need: Need
    probe: Callable[[], str]
    fix: str
    bg_job: str = ""  # the scripts/bg job that builds it, if one does
    on_need: str = ""  # the checkout script `sizing run` builds it with on first need


class NotFound(Exception):
    """A check's probe found nothing usable; the message says what was looked for."""


def _which(name: str) -> str | None:
    # the venv's own programs (ansible-playbook) are beside this Python, as sizing runs them
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(name)


def _run(argv: Sequence[str], pattern: str = r"(\d+(?:\.\d+)+)") -> str:
    """The version a program prints (stdout or stderr, whatever its exit status)."""
    exe = _which(argv[0])
    if exe is None:
        raise NotFound(f"{argv[0]} not on PATH")
    try:
        out = subprocess.run(
            [exe, *argv[1:]], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NotFound(f"{argv[0]} does not run: {exc}") from None
    text = out.stdout + out.stderr
    found = re.search(pattern, text)
    if found is None:
        raise NotFound(f"{' '.join(argv)} printed no version: {text.strip()[:60]!r}")
    return found.group(1)


def _file(*candidates: str | Path) -> Callable[[], str]:
    def probe() -> str:
        for c in candidates:
            if Path(c).exists():
                return str(c)
        raise NotFound(" or ".join(str(c) for c in candidates) + " not found")

    return probe


def _command(argv: Sequence[str], pattern: str = r"(\d+(?:\.\d+)+)") -> Callable[[], str]:
    return lambda: _run(argv, pattern)


def _library(name: str) -> Callable[[], str]:
    def probe() -> str:
        found = ctypes.util.find_library(name)
        if found is None:
            raise NotFound(f"shared library lib{name} not found")
        return found

    return probe


def _module(name: str, dist: str = "") -> Callable[[], str]:
    def probe() -> str:
        if importlib.util.find_spec(name) is None:
            raise NotFound(f"Python module {name} not installed in this environment")
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version(dist or name)
        except PackageNotFoundError:
            return "installed"

    return probe


def _checkout_binary(rel: str, name: str) -> Callable[[], str]:
    """A tool a checkout script builds into .cache/bin, else one on PATH."""

    def probe() -> str:
        built = paths.ROOT / ".cache" / "bin" / rel
        if built.is_file() and os.access(built, os.X_OK):
            return str(built.relative_to(paths.ROOT))
        found = shutil.which(name)
        if found:
            return found
        raise NotFound(f".cache/bin/{rel} not built and {name} not on PATH")

    return probe


def _fastscan() -> str:
    # `sizing demand` reads without it (the regular expressions: slower); its tests and
    # the speed benchmark hold the two readers to each other
    spec = importlib.util.find_spec("sizing.demand._fastscan")
    if spec is None or spec.origin is None:
        raise NotFound("sizing/demand/_fastscan.c is not built")
    return Path(spec.origin).name


def _initdb() -> str:
    # tests/pgcluster.py starts a throwaway cluster with Debian's initdb and pg_ctl, which
    # are not on PATH (/usr/lib/postgresql/<major>/bin)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb")) or [shutil.which("initdb") or ""]
    if not found[-1]:
        raise NotFound("initdb not found in /usr/lib/postgresql/*/bin nor on PATH")
    return _run([found[-1], "--version"])


def _podman_init() -> str:
    # `podman run --init` starts the container-init binary containers.conf names; Debian's
    # podman looks for catatonit there (a recommended package, not a dependency).
    return _file("/usr/libexec/podman/catatonit", "/usr/bin/catatonit")()


def _fonts() -> str:
    # WeasyPrint finds fonts through fontconfig; the guide's stylesheet names DejaVu Sans
    return _file(
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    )()


def _apt(*packages: str) -> str:
    return "apt-get install --no-install-recommends " + " ".join(packages)


def _installed_generators(*, default: bool) -> list[Check]:
    """The generators the clients' playbook installs from Debian (each one's
    ``ToolInstall``, :mod:`sizing.load.tools`): the default one is needed by a run,
    the others by their tests."""
    out = []
    for tool in TOOLS.values():
        inst = tool.install
        if inst is None or (tool.name == DEFAULT_GENERATOR) is not default:
            continue
        fix = _apt(*inst.packages) + ("" if default else f" (the {tool.name} generator's test)")
        need = Need.RUN if default else Need.DEV
        out.append(Check(tool.name, need, _command([inst.command, *inst.probe]), fix))
    return out


def _built_generators() -> list[Check]:
    """The generators sizing builds itself on first need (each one's ``ToolBuild``)."""
    return [
        Check(
            b.binary,
            Need.LATENCY,
            _checkout_binary(b.binary, b.binary),
            f"{b.script} ({b.needs}; {b.cost_words})",
            bg_job=b.bg_job,
            on_need=b.script,
        )
        for b in builds().values()
    ]


def _with(compiler: str) -> str:
    """The generators whose build needs ``compiler`` (their ``ToolBuild.needs``)."""
    return ", ".join(b.binary for b in builds().values() if b.needs.lower().startswith(compiler))


SETUP = "scripts/setup"
SETUP_DEV = "scripts/setup --dev"

CHECKS: tuple[Check, ...] = (
    Check("nginx", Need.RUN, _command(["nginx", "-v"]), _apt("nginx")),
    *_installed_generators(default=True),
    Check("openssl", Need.RUN, _command(["openssl", "version"]), _apt("openssl")),
    Check("taskset", Need.RUN, _command(["taskset", "--version"]), _apt("util-linux")),
    Check(
        "numactl",
        Need.RUN,
        _command(["numactl", "--hardware"], r"available: (\d+ nodes?)"),
        _apt("numactl"),
    ),
    Check("curl", Need.RUN, _command(["curl", "--version"]), _apt("curl")),
    Check(
        "nginx njs module",
        Need.RUN,
        _file("/usr/lib/nginx/modules/ngx_http_js_module.so"),
        _apt("libnginx-mod-http-js") + " (the api-jwt profile)",
    ),
    Check(
        "ansible-playbook",
        Need.RUN,
        _command(["ansible-playbook", "--version"], r"core (\d+(?:\.\d+)+)"),
        SETUP + " (ansible-core in the .venv)",
    ),
    Check("pango", Need.GUIDE, _library("pango-1.0"), _apt("libpango-1.0-0 libpangoft2-1.0-0")),
    Check("fonts (DejaVu Sans)", Need.GUIDE, _fonts, _apt("fonts-dejavu-core")),
    Check("weasyprint", Need.GUIDE, _module("weasyprint"), SETUP),
    Check("matplotlib", Need.GUIDE, _module("matplotlib"), SETUP),
    *_built_generators(),
    *_installed_generators(default=False),
    Check("cargo", Need.DEV, _command(["cargo", "--version"]), f"rustup (builds {_with('cargo')})"),
    Check("go", Need.DEV, _command(["go", "version"]), f"Go >= 1.22 (builds vcsim, {_with('go')})"),
    Check("podman", Need.DEV, _command(["podman", "--version"]), _apt("podman")),
    Check("podman --init (catatonit)", Need.DEV, _podman_init, _apt("catatonit")),
    Check("runc", Need.DEV, _command(["runc", "--version"]), _apt("runc")),
    Check(
        "netavark",
        Need.DEV,
        _file("/usr/lib/podman/netavark", "/usr/libexec/podman/netavark"),
        _apt("netavark aardvark-dns"),
    ),
    Check("iptables", Need.DEV, _command(["iptables", "--version"]), _apt("iptables")),
    Check("mmdebstrap", Need.DEV, _command(["mmdebstrap", "--version"]), _apt("mmdebstrap")),
    Check("debootstrap", Need.DEV, _command(["debootstrap", "--version"]), _apt("debootstrap")),
    Check(
        "libvirtd",
        Need.DEV,
        _command(["libvirtd", "--version"]),
        _apt("libvirt-daemon-system"),
    ),
    Check("virtlogd", Need.DEV, _command(["virtlogd", "--version"]), _apt("libvirt-daemon-system")),
    Check(
        "qemu-system-x86_64",
        Need.DEV,
        _command(["qemu-system-x86_64", "--version"]),
        _apt("qemu-system-x86"),
    ),
    Check(
        "libvirt-python",
        Need.DEV,
        _module("libvirt", "libvirt-python"),
        SETUP_DEV + " (needs gcc, libvirt-dev)",
    ),
    Check("pyvmomi", Need.DEV, _module("pyVmomi"), SETUP_DEV),
    Check(
        "vcsim",
        Need.DEV,
        _checkout_binary("vcsim", "vcsim"),
        "scripts/install-vcsim (Go, about 80 s)",
        bg_job="go-tools",
    ),
    Check("pdftoppm", Need.DEV, _command(["pdftoppm", "-v"]), _apt("poppler-utils")),
    Check("pdftotext", Need.DEV, _command(["pdftotext", "-v"]), _apt("poppler-utils")),
    Check("sshd", Need.DEV, _command(["sshd", "-V"], r"OpenSSH_([\w.]+)"), _apt("openssh-server")),
    Check(
        "ip (iproute2)", Need.DEV, _command(["ip", "-V"], r"iproute2-([\w.]+)"), _apt("iproute2")
    ),
    Check("goaccess", Need.DEV, _command(["goaccess", "--version"]), _apt("goaccess")),
    Check(
        "C log reader (sizing.demand._fastscan)",
        Need.DEV,
        _fastscan,
        "scripts/build-fastscan .venv/bin/python (needs gcc, python3-dev)",
    ),
    Check("initdb (PostgreSQL)", Need.DEV, _initdb, _apt("postgresql") + " (team store tests)"),
    Check("psycopg", Need.DEV, _module("psycopg"), SETUP_DEV + " (team store tests)"),
)


def _building(job: str) -> bool:
    rc = paths.ROOT / ".cache" / "bg" / f"{job}.rc"
    try:
        return rc.read_text().strip() == "running"
    except OSError:
        return False


def _examine(check: Check) -> Finding:
    try:
        detail = check.probe()
    except NotFound as exc:
        if check.bg_job and _building(check.bg_job):
            return Finding(check.name, check.need, State.BUILDING, str(exc), check.fix)
        if check.on_need and (paths.ROOT / check.on_need).is_file():
            # not a fault: the first run whose points need it builds it (issue 62)
            why = "not built yet; `sizing run` builds it when a latency profile first needs it"
            return Finding(check.name, check.need, State.ON_NEED, why, check.fix)
        return Finding(check.name, check.need, State.MISSING, str(exc), check.fix)
    return Finding(check.name, check.need, State.OK, detail, "")


def diagnose(needs: Sequence[Need], checks: Sequence[Check] | None = None) -> list[Finding]:
    """Every check of the needs asked, in the listed order (probed in parallel: each is a
    program's start-up, a few milliseconds to a second)."""
    chosen = [c for c in (CHECKS if checks is None else checks) if c.need in needs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(_examine, chosen))
