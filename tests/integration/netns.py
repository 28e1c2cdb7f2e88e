"""Hosts for multi-host tests: network namespaces on a bridge, each running its own sshd.

``NetnsLab`` builds one server and N client "hosts" on this machine:

* a bridge ``sz-br0`` in the root namespace with 198.18.7.1/24 (RFC 2544 benchmarking
  range, never routed anywhere), and one namespace per host (``sz-srv``, ``sz-c1``, ...)
  joined to it by a veth pair (root side ``sz-v-<name>``, inside ``eth0``), ``lo`` up;
* an sshd in every namespace (``ip netns exec NS /usr/sbin/sshd -D -f <config>``) with its
  own host key, listening on the namespace's address only, accepting one generated key;
* an Ansible inventory (YAML) that reaches them as root over real SSH.

All namespaces share this machine's filesystem and PID space, so the server host gets its
own nginx paths and ports (under the lab's directory, ports 29080/29443): it never meets
the local default instance (8080/8443), the playbook test's (18080/18443) or the local
runs' of the other tests (28080/28443 and others), whose checks find leftover load by the
port in a generator's arguments, and which run at the same time (scripts/test-robust).

Cleanup is by PID (every process inside the namespaces, from ``ip netns pids``, and the
sshd PIDs we started) and by name (the namespaces, the bridge and the veths named here),
so a run that crashed earlier is cleaned up by the next one. A lock file keeps two test
sessions from building the lab at the same time.

Run ``python tests/integration/netns.py up|down`` to build or remove the lab by hand.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

BRIDGE = "sz-br0"
BRIDGE_ADDR = "198.18.7.1"
PREFIX_LEN = 24
SERVER = ("sz-srv", "198.18.7.10")
CLIENTS = (("sz-c1", "198.18.7.21"), ("sz-c2", "198.18.7.22"))
HTTP_PORT = 29080
HTTPS_PORT = 29443
LOCK_FILE = Path(tempfile.gettempdir()) / "sz-netns.lock"
# The server's nginx files: outside the (0700) test directory, because nginx workers run as
# an unprivileged user and must traverse the path to the content.
NGINX_DIR = Path(tempfile.gettempdir()) / "sz-nginx"
SSHD = "/usr/sbin/sshd"


def _ip(*args: str, check: bool = True, ns: str | None = None) -> subprocess.CompletedProcess[str]:
    argv = ["ip", *args] if ns is None else ["ip", "netns", "exec", ns, "ip", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=20, check=check)


def unavailable_reason() -> str | None:
    """Why this machine cannot build the lab, or None when it can."""
    if os.geteuid() != 0:
        return "network namespaces and sshd need root"
    if shutil.which("ip") is None:
        return "the ip command (iproute2) is not installed"
    probe = "sz-probe"
    try:
        _ip("netns", "add", probe)
    except (subprocess.CalledProcessError, OSError, subprocess.TimeoutExpired) as exc:
        return f"ip netns is unavailable here: {getattr(exc, 'stderr', '') or exc}".strip()
    finally:
        _ip("netns", "del", probe, check=False)
    if not Path(SSHD).exists():
        return f"{SSHD} is missing (apt-get install openssh-server; scripts/setup --dev)"
    if shutil.which("ssh-keygen") is None:
        return "ssh-keygen is missing (apt-get install openssh-client)"
    return None


def _kill_pids(pids: Sequence[int], *, grace_s: float = 3.0) -> None:
    """SIGTERM, then SIGKILL what is left after ``grace_s`` (bounded)."""
    live = []
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
            live.append(pid)
    deadline = time.monotonic() + grace_s
    while live and time.monotonic() < deadline:
        live = [p for p in live if _alive(p)]
        time.sleep(0.05)
    for pid in live:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours counts as gone once reaped.
    with contextlib.suppress(ChildProcessError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    return True


def netns_pids(ns: str) -> list[int]:
    """PIDs of every process inside namespace ``ns`` (empty when it does not exist)."""
    out = _ip("netns", "pids", ns, check=False)
    return [int(p) for p in out.stdout.split() if p.strip().isdigit()]


def kill_namespace_processes(ns: str) -> None:
    """Stop every process inside ``ns``: its sshd, sessions, nginx, wrk."""
    for _ in range(3):  # sshd may fork a session while we kill: a few bounded rounds
        pids = netns_pids(ns)
        if not pids:
            return
        _kill_pids(pids)


def cleanup(names: Sequence[str] | None = None) -> None:
    """Remove the lab's namespaces, veths and bridge by name, killing what runs inside."""
    hosts = list(names) if names is not None else [SERVER[0], *(c for c, _ in CLIENTS)]
    for ns in hosts:
        kill_namespace_processes(ns)
        _ip("netns", "del", ns, check=False)
        _ip("link", "del", _veth(ns), check=False)
    _ip("link", "del", BRIDGE, check=False)


def _veth(ns: str) -> str:
    return f"sz-v-{ns.removeprefix('sz-')}"  # at most 15 characters


@dataclass
class LabHost:
    """One namespace host."""

    ns: str
    address: str
    sshd: subprocess.Popen[bytes] | None = None

    @property
    def name(self) -> str:
        return self.ns


@dataclass
class NetnsLab:
    """The built lab: its hosts, key, inventory and working directory."""

    base: Path
    server: LabHost
    clients: list[LabHost]
    key: Path = field(init=False)
    inventory: Path = field(init=False)
    _lock: Any = None

    def __post_init__(self) -> None:
        self.key = self.base / "id_ed25519"
        self.inventory = self.base / "inventory.yml"

    @property
    def hosts(self) -> list[LabHost]:
        return [self.server, *self.clients]

    @property
    def nginx_dir(self) -> Path:
        return NGINX_DIR

    # -- building ---------------------------------------------------------------------

    def up(self) -> None:
        self._lock = open(LOCK_FILE, "w")  # noqa: SIM115 (held for the lab's lifetime)
        deadline = time.monotonic() + 600
        while True:
            try:
                fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"another test session holds {LOCK_FILE}") from None
                time.sleep(0.5)
        cleanup([h.ns for h in self.hosts])  # whatever a crashed earlier run left
        shutil.rmtree(NGINX_DIR, ignore_errors=True)
        NGINX_DIR.mkdir(mode=0o755)
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation dir
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sz-test", "-f", str(self.key)],
            check=True,
            timeout=30,
        )
        _ip("link", "add", BRIDGE, "type", "bridge")
        _ip("addr", "add", f"{BRIDGE_ADDR}/{PREFIX_LEN}", "dev", BRIDGE)
        _ip("link", "set", BRIDGE, "up")
        for h in self.hosts:
            self._add_host(h)
        for h in self.hosts:
            self._start_sshd(h)
        for h in self.hosts:
            self.wait_ssh(h)
        self._write_inventory()

    def _add_host(self, h: LabHost) -> None:
        veth = _veth(h.ns)
        _ip("netns", "add", h.ns)
        _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", h.ns)
        _ip("link", "set", veth, "master", BRIDGE)
        _ip("link", "set", veth, "up")
        _ip("link", "set", "lo", "up", ns=h.ns)
        _ip("addr", "add", f"{h.address}/{PREFIX_LEN}", "dev", "eth0", ns=h.ns)
        _ip("link", "set", "eth0", "up", ns=h.ns)

    def _start_sshd(self, h: LabHost) -> None:
        d = self.base / h.ns
        d.mkdir(exist_ok=True)
        hostkey = d / "ssh_host_ed25519_key"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(hostkey)],
            check=True,
            timeout=30,
        )
        authorized = d / "authorized_keys"
        authorized.write_text(self.key.with_suffix(".pub").read_text())
        authorized.chmod(0o600)
        config = d / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"ListenAddress {h.address}",
                    "Port 22",
                    f"HostKey {hostkey}",
                    f"PidFile {d / 'sshd.pid'}",
                    f"AuthorizedKeysFile {authorized}",
                    "PermitRootLogin prohibit-password",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "UseDNS no",
                    "MaxStartups 100:30:200",
                    "MaxSessions 100",
                    "Subsystem sftp internal-sftp",
                    "LogLevel ERROR",
                    "",
                ]
            )
        )
        log = open(d / "sshd.log", "ab")  # noqa: SIM115 (the child keeps it)
        h.sshd = subprocess.Popen(
            ["ip", "netns", "exec", h.ns, SSHD, "-D", "-e", "-f", str(config)],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
        )
        log.close()

    def wait_ssh(self, h: LabHost, timeout_s: float = 30.0) -> None:
        """Wait (bounded) until ``h`` answers an SSH command."""
        deadline = time.monotonic() + timeout_s
        last = ""
        while time.monotonic() < deadline:
            if h.sshd is not None and h.sshd.poll() is not None:
                log = (self.base / h.ns / "sshd.log").read_text(errors="replace")
                raise RuntimeError(f"sshd in {h.ns} exited: {log.strip()[-500:]}")
            out = subprocess.run(
                [*self.ssh_argv(h), "true"], capture_output=True, text=True, timeout=20
            )
            if out.returncode == 0:
                return
            last = out.stderr.strip()
            time.sleep(0.2)
        raise TimeoutError(f"{h.ns} ({h.address}) does not answer over SSH: {last}")

    def ssh_argv(self, h: LabHost) -> list[str]:
        return [
            "ssh",
            "-i",
            str(self.key),
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "ConnectTimeout=5",
            "-o",
            "LogLevel=ERROR",
            f"root@{h.address}",
        ]

    def inventory_data(self) -> dict[str, Any]:
        """The lab as an Ansible YAML inventory (also written to ``self.inventory``)."""
        n = self.nginx_dir
        return {
            "all": {
                "vars": {
                    "ansible_user": "root",
                    "ansible_ssh_private_key_file": str(self.key),
                    # LogLevel=ERROR: no "Permanently added ..." warning in any task's output
                    "ansible_ssh_common_args": (
                        "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                        "-o LogLevel=ERROR"
                    ),
                    "ansible_python_interpreter": "/usr/bin/python3",
                    # the lab's hosts share this machine's /run: their own run lock
                    "sizing_lock_path": str(n / "run.lock"),
                },
                "children": {
                    "servers": {
                        "hosts": {
                            self.server.ns: {
                                "ansible_host": self.server.address,
                                "sizing_platform": "baremetal",
                                "sizing_http_port": HTTP_PORT,
                                "sizing_https_port": HTTPS_PORT,
                                "sizing_conf_dir": str(n / "conf"),
                                "sizing_www_root": str(n / "www"),
                                "sizing_log_dir": str(n / "log"),
                                "sizing_pid_file": str(n / "nginx.pid"),
                            }
                        }
                    },
                    "clients": {
                        "hosts": {
                            # One 2-core machine: the server gets core 0, clients core 1.
                            c.ns: {"ansible_host": c.address, "sizing_client_cpus": "1"}
                            for c in self.clients
                        }
                    },
                },
            }
        }

    def _write_inventory(self) -> None:
        self.inventory.write_text(yaml.safe_dump(self.inventory_data(), sort_keys=False))

    # -- faults -----------------------------------------------------------------------

    def make_unreachable(self, h: LabHost) -> None:
        """Stop the host's sshd and every session in it: SSH to it is refused from now on."""
        if h.sshd is not None:
            _kill_pids([h.sshd.pid])
            with contextlib.suppress(subprocess.TimeoutExpired):
                h.sshd.wait(timeout=5)
        kill_namespace_processes(h.ns)
        # Ansible's ControlMaster on this side notices the closed connection at once; make
        # sure nothing answers on port 22 any more (bounded).
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _port_open(h.address, 22):
            time.sleep(0.1)

    def restore(self, h: LabHost) -> None:
        """Start the host's sshd again after :meth:`make_unreachable`."""
        self._start_sshd_again(h)
        self.wait_ssh(h)

    def _start_sshd_again(self, h: LabHost) -> None:
        d = self.base / h.ns
        log = open(d / "sshd.log", "ab")  # noqa: SIM115
        h.sshd = subprocess.Popen(
            ["ip", "netns", "exec", h.ns, SSHD, "-D", "-e", "-f", str(d / "sshd_config")],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
        )
        log.close()

    # -- teardown ---------------------------------------------------------------------

    def down(self) -> None:
        for h in self.hosts:
            if h.sshd is not None and h.sshd.poll() is None:
                _kill_pids([h.sshd.pid])
                with contextlib.suppress(subprocess.TimeoutExpired):
                    h.sshd.wait(timeout=5)
        # nginx started over SSH lives in the server namespace: killed by namespace PIDs.
        cleanup([h.ns for h in self.hosts])
        shutil.rmtree(NGINX_DIR, ignore_errors=True)
        if self._lock is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None


def _port_open(address: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((address, port)) == 0


@contextlib.contextmanager
def netns_lab(base: Path, n_clients: int = 2) -> Iterator[NetnsLab]:
    """Build the lab under ``base``; always tear it down."""
    if n_clients > len(CLIENTS):
        raise ValueError(f"at most {len(CLIENTS)} clients")
    lab = NetnsLab(
        base=base,
        server=LabHost(*SERVER),
        clients=[LabHost(ns, addr) for ns, addr in CLIENTS[:n_clients]],
    )
    try:
        lab.up()
        yield lab
    finally:
        lab.down()


def main(argv: Sequence[str]) -> int:
    """``up`` builds the lab in a temporary directory and prints the inventory; ``down``."""
    if len(argv) != 1 or argv[0] not in ("up", "down"):
        print("usage: netns.py up|down", file=sys.stderr)
        return 2
    if argv[0] == "down":
        cleanup()
        return 0
    reason = unavailable_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 1
    base = Path(tempfile.mkdtemp(prefix="sz-lab-"))
    lab = NetnsLab(base=base, server=LabHost(*SERVER), clients=[LabHost(n, a) for n, a in CLIENTS])
    lab.up()
    # Leave it running for manual use: sshd processes live on; `down` removes everything.
    print(lab.inventory)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
