"""A KVM/libvirt lab on this machine: real libvirtd and virtlogd, a guest on a namespace bridge.

``LibvirtLab`` builds, and removes again:

* a network namespace ``sz6-net`` holding the bridge ``sz6-br0``, joined to the root
  namespace by a veth pair (root side ``sz6-h`` with 198.18.6.1/24, RFC 2544 benchmarking
  range, never routed anywhere; namespace side ``sz6-n`` on the bridge);
* ``virtlogd`` and ``libvirtd`` started by this module (no systemd), each with its own pid
  file under /run; libvirtd runs *inside* ``sz6-net``, so the tap devices it creates for
  guests live in that namespace, on ``sz6-br0``. Its socket is the usual
  ``/run/libvirt/libvirt-sock``, so ``qemu:///system`` reaches it from anywhere;
* an Ansible inventory in which ``localhost`` is the hypervisor (``qemu:///system``, domain
  type ``qemu``: software emulation, since QEMU under libvirt cannot use this machine's
  /dev/kvm) and the load-generating client, and ``sz6-vm1`` the libvirt guest at
  198.18.6.10, reached over SSH with the key of the guest image.

The guest image comes from ``playbooks/guest-image.yml`` (cached in ``.cache/guest/``).
Cleanup is by PID (the pid files written here) and by name (``sz6-`` namespace, veth and
domains), so a run that crashed earlier is cleaned up by the next one. Only names and
addresses of this module are touched: the multi-host lab uses ``sz-``/198.18.7.0/24.

Run ``python tests/integration/libvirt_lab.py up|down`` to build or remove it by hand.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
GUEST_DIR = ROOT / ".cache" / "guest"
NS = "sz6-net"
BRIDGE = "sz6-br0"
VETH_HOST, VETH_NS = "sz6-h", "sz6-n"
HOST_ADDR = "198.18.6.1"
GUEST_ADDR = "198.18.6.10"
UNUSED_ADDR = "198.18.6.99"  # nobody answers here: a guest that never comes up
PREFIX_LEN = 24
GUEST_MAC = "52:54:00:12:06:10"
DOMAIN = "sz6-vm1"
LIBVIRTD_PID = Path("/run/sz6-libvirtd.pid")
VIRTLOGD_PID = Path("/run/sz6-virtlogd.pid")
LAB_QEMU_CONF = Path("/run/sz6-qemu.conf")  # the lab libvirtd's qemu.conf (see up())
LOCK_FILE = Path(tempfile.gettempdir()) / "sz6-libvirt.lock"
BARE_DIR = Path("/var/tmp/sz6-bare-metal")  # made by nginx.yml (0755: www-data reads it)
LOCALHOST_VARS = {
    "sizing_lock_path": f"{tempfile.gettempdir()}/sz6-run.lock",
    "sizing_http_port": 28380,
    "sizing_https_port": 28743,
    "sizing_conf_dir": str(BARE_DIR / "conf"),
    "sizing_www_root": str(BARE_DIR / "www"),
    "sizing_log_dir": str(BARE_DIR / "log"),
    "sizing_pid_file": str(BARE_DIR / "nginx.pid"),
}
URI = "qemu:///system"
IMAGE_BUILD_TIMEOUT_S = 1500


def _run(
    argv: list[str], *, check: bool = True, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=check)


def unavailable_reason() -> str | None:
    """Why this machine cannot run the lab, or None when it can."""
    if os.geteuid() != 0:
        return "libvirtd, network namespaces and the image build need root"
    for tool in ("libvirtd", "virtlogd", "qemu-system-x86_64", "debootstrap", "mke2fs", "ip"):
        if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None:
            return (
                f"{tool} is missing (apt-get install -y libvirt-daemon-system qemu-system-x86 "
                "debootstrap; scripts/setup --dev does)"
            )
    try:
        import libvirt  # noqa: F401
    except ImportError:
        return "libvirt-python is missing (pip install -e '.[libvirt]'; scripts/setup --dev)"
    return None


@dataclass(frozen=True)
class Build:
    """The guest image's files, and the playbook run that built (or found) them."""

    files: dict[str, Path]
    result: Any  # sizing.provision.ansible.PlaybookResult


def build_image(timeout: float = IMAGE_BUILD_TIMEOUT_S) -> Build:
    """Build (or find cached) the guest image with the project's playbook."""
    from sizing.provision.ansible import run_playbook

    res = run_playbook(
        "guest-image.yml",
        ROOT / "inventories" / "local.yml",
        limit=["localhost"],
        timeout=int(timeout),
    )
    if not res.ok:
        raise RuntimeError(f"guest image build failed: {res.problems() or res.status}")
    files = {
        "kernel": GUEST_DIR / "vmlinuz",
        "initrd": GUEST_DIR / "initrd.img",
        "disk": GUEST_DIR / "root.img",
        "key": GUEST_DIR / "id_ed25519",
    }
    missing = [str(p) for p in files.values() if not p.exists()]
    if missing:
        raise RuntimeError(f"guest image build left no {', '.join(missing)}")
    return Build(files, res)


def _pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie counts as gone.
    with contextlib.suppress(OSError):
        if "State:\tZ" in Path(f"/proc/{pid}/status").read_text():
            return False
    return True


def _stop_pid(path: Path, timeout: float = 15) -> None:
    pid = _pid(path)
    if pid is not None and _alive(pid):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    path.unlink(missing_ok=True)


def _libvirt_answers() -> bool:
    import libvirt

    libvirt.registerErrorHandler(lambda _c, _e: None, None)
    try:
        conn = libvirt.open(URI)
    except libvirt.libvirtError:
        return False
    conn.close()
    return True


def _remove_domains() -> None:
    """Power off and undefine every sz6- domain (only ours carry that prefix)."""
    import libvirt

    libvirt.registerErrorHandler(lambda _c, _e: None, None)
    try:
        conn = libvirt.open(URI)
    except libvirt.libvirtError:
        return
    try:
        for dom in conn.listAllDomains(0):
            if dom.name().startswith("sz6-"):
                with contextlib.suppress(libvirt.libvirtError):
                    if dom.isActive():
                        dom.destroy()
                with contextlib.suppress(libvirt.libvirtError):
                    dom.undefine()
    finally:
        conn.close()


class LibvirtLab:
    """The namespace, the bridge, virtlogd and libvirtd; see the module docstring."""

    def __init__(self) -> None:
        self._lock: Any = None

    def up(self) -> None:
        self._lock = open(LOCK_FILE, "w")  # noqa: SIM115 (held until down())
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self._down()  # whatever an earlier, crashed run left
        if _libvirt_answers():
            raise RuntimeError(
                "a libvirtd that this test did not start is running; the lab starts its own "
                "inside the network namespace sz6-net (stop the other one first)"
            )
        _run(["ip", "netns", "add", NS])
        ns = ["ip", "netns", "exec", NS]
        _run([*ns, "ip", "link", "set", "lo", "up"])
        _run([*ns, "ip", "link", "add", BRIDGE, "type", "bridge"])
        _run([*ns, "ip", "link", "set", BRIDGE, "up"])
        _run(["ip", "link", "add", VETH_HOST, "type", "veth", "peer", "name", VETH_NS])
        _run(["ip", "link", "set", VETH_NS, "netns", NS])
        _run([*ns, "ip", "link", "set", VETH_NS, "master", BRIDGE])
        _run([*ns, "ip", "link", "set", VETH_NS, "up"])
        _run(["ip", "addr", "add", f"{HOST_ADDR}/{PREFIX_LEN}", "dev", VETH_HOST])
        _run(["ip", "link", "set", VETH_HOST, "up"])
        _run(["virtlogd", "-d", "-p", str(VIRTLOGD_PID)])
        # libvirtd probes QEMU's capabilities once and caches them, unless its QEMU user
        # (libvirt-qemu) cannot use /dev/kvm while the probe found KVM: then every later look
        # at the cache throws it away and probes again (~4 s a look, tens of seconds per
        # guest start). Here /dev/kvm is root-only (no udev to give it to the kvm group), so
        # the lab's libvirtd runs QEMU as root, with a qemu.conf bound over the machine's
        # in libvirtd's own mount namespace (``ip netns exec`` made one): the machine's
        # file and device permissions stay as they are. The guests are software-emulated
        # either way (domain type qemu).
        conf = Path("/etc/libvirt/qemu.conf")
        base = conf.read_text() if conf.is_file() else ""
        LAB_QEMU_CONF.write_text(base + '\n# sizing libvirt lab\nuser = "root"\ngroup = "root"\n')
        LAB_QEMU_CONF.chmod(0o600)
        bind = f"mount --bind {LAB_QEMU_CONF} {conf}; " if conf.is_file() else ""
        _run(
            [*ns, "sh", "-c", f'{bind}exec libvirtd -d -p "$1"', "libvirtd", str(LIBVIRTD_PID)],
            timeout=60,
        )
        deadline = time.monotonic() + 60
        while not _libvirt_answers():
            if time.monotonic() > deadline:
                raise RuntimeError("libvirtd did not answer on qemu:///system within 60 s")
            time.sleep(0.5)

    def _down(self) -> None:
        if _pid(LIBVIRTD_PID) is not None:
            _remove_domains()
        _stop_pid(LIBVIRTD_PID)
        _stop_pid(VIRTLOGD_PID)
        _run(["ip", "link", "del", VETH_HOST], check=False)
        _run(["ip", "netns", "del", NS], check=False)

    def down(self) -> None:
        try:
            self._down()
        finally:
            if self._lock is not None:
                fcntl.flock(self._lock, fcntl.LOCK_UN)
                self._lock.close()
                self._lock = None


def vm_settings(image: dict[str, Path], **overrides: Any) -> dict[str, Any]:
    """``sizing_vm`` of the lab guest; ``overrides`` replace settings (fault tests)."""
    # init=: the image's fast init (sshd only, no systemd): boots in seconds under TCG.
    cmdline = (
        "root=/dev/vda rw console=ttyS0 net.ifnames=0 quiet init=/usr/local/sbin/sizing-init "
        f"ip={GUEST_ADDR}::{HOST_ADDR}:255.255.255.0::eth0:off"
    )
    vm: dict[str, Any] = {
        "domain": DOMAIN,
        "hypervisor": "localhost",
        "memory_mib": 1024,
        "kernel": str(image["kernel"]),
        "initrd": str(image["initrd"]),
        "cmdline": cmdline,
        "disk": str(image["disk"]),
        "bridge": BRIDGE,
        "mac": GUEST_MAC,
        # bounded; generous because `make test` boots it beside the noload tests' CPU work
        "boot_timeout_s": 300,
        "shutdown_timeout_s": 0,  # no ACPI handler without systemd: power off at once
    }
    vm.update(overrides)
    return vm


def inventory(
    image: dict[str, Path],
    *,
    uri: str = URI,
    address: str = GUEST_ADDR,
    vm: dict[str, Any] | None = None,
    guest_vars: dict[str, Any] | None = None,
    bare_metal: bool = False,
) -> dict[str, Any]:
    """The lab inventory: localhost hypervisor and client, one libvirt guest server;
    ``guest_vars`` are more (or other) host variables of the guest; ``bare_metal``:
    localhost is a bare-metal server too (the guest's pair: the same host CPUs)."""
    doc = {
        "all": {
            "children": {
                "hypervisors": {
                    "hosts": {
                        "localhost": {
                            "ansible_connection": "local",
                            "ansible_python_interpreter": "{{ ansible_playbook_python }}",
                            "sizing_hypervisor": {"uri": uri, "domain_type": "qemu"},
                            # the lab's own run lock, and (bare_metal) its own nginx: the
                            # robust tests' runs (the README's make run) meet neither
                            **LOCALHOST_VARS,
                        }
                    }
                },
                "servers": {
                    "hosts": {
                        DOMAIN: {
                            "ansible_host": address,
                            "ansible_user": "root",
                            "ansible_ssh_private_key_file": str(image["key"]),
                            "ansible_ssh_common_args": (
                                "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
                                " -o LogLevel=ERROR"
                            ),
                            "ansible_python_interpreter": "/usr/bin/python3",
                            "ansible_pipelining": True,
                            "sizing_platform": "libvirt",
                            "sizing_vm": vm or vm_settings(image),
                            **(guest_vars or {}),
                        }
                    }
                },
                "clients": {"hosts": {"localhost": {}}},
            }
        }
    }
    if bare_metal:
        doc["all"]["children"]["servers"]["hosts"]["localhost"] = {"sizing_platform": "baremetal"}
    return doc


def write_inventory(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@contextlib.contextmanager
def lab() -> Iterator[LibvirtLab]:
    the_lab = LibvirtLab()
    try:
        the_lab.up()
        yield the_lab
    finally:
        the_lab.down()


if __name__ == "__main__":  # pragma: no cover - a manual helper
    sys.path.insert(0, str(ROOT))
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "up":
        LibvirtLab().up()
        print(f"lab up: {NS}, {BRIDGE}, libvirtd pid {_pid(LIBVIRTD_PID)}")
    elif what == "down":
        LibvirtLab()._down()
        print("lab down")
    else:
        sys.exit("usage: libvirt_lab.py up|down")
