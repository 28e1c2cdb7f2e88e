"""Talking to a libvirt hypervisor about one guest: the bindings (imported only now), the
connections (cached per URI, credentials from environment variables), the bounded wait
for the guest's SSH, stopping it, and its pinning read back from libvirt and from
``/proc/<qemu pid>/task/*/status`` on the hypervisor (:mod:`sizing.provision.platforms.
libvirt` is the backend that uses them)."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from sizing import paths
from sizing.errors import HostError, SizingError
from sizing.inventory import Host
from sizing.provision.ansible import run_playbook
from sizing.provision.platforms.libvirt_spec import (
    DEFAULT_CONSOLE_LOG,
    PROBE_INTERVAL_S,
    HypervisorSpec,
    VmSpec,
    cpus_of_map,
    vcpu_threads,
)


def libvirt_module() -> Any:
    """libvirt-python, or :class:`SizingError` saying how to install it."""
    try:
        import libvirt
    except ImportError as exc:
        raise SizingError(
            "libvirt-python is not installed; install it with "
            "`.venv/bin/pip install -e '.[libvirt]'` (needs pkg-config and libvirt-dev)"
        ) from exc
    # libvirt prints every error on stderr by default; we report them ourselves, once.
    libvirt.registerErrorHandler(lambda _ctx, _err: None, None)
    return libvirt


def why(exc: Exception) -> str:
    """A libvirt error's first line (its own message where it has one)."""
    get = getattr(exc, "get_error_message", None)
    msg = get() if callable(get) else None
    return str(msg or exc).strip().splitlines()[0] if str(msg or exc).strip() else repr(exc)


class Connections:
    """Open hypervisor connections, one per URI, reopened when one has died."""

    def __init__(self) -> None:
        self._conns: dict[str, Any] = {}

    def connect(self, hyp: Host, hspec: HypervisorSpec) -> Any:
        """An open connection to the hypervisor (cached), or :class:`HostError`."""
        conn = self._conns.get(hspec.uri)
        if conn is not None and conn.isAlive():
            return conn
        lv = libvirt_module()
        try:
            if hspec.username_env or hspec.password_env:
                conn = lv.openAuth(hspec.uri, _auth(lv, hyp, hspec), 0)
            else:
                conn = lv.open(hspec.uri)
        except lv.libvirtError as exc:
            raise HostError(
                hyp.name, f"cannot reach the hypervisor at {hspec.uri}: {why(exc)}"
            ) from None
        if conn is None:  # pragma: no cover - old bindings return None instead of raising
            raise HostError(hyp.name, f"cannot reach the hypervisor at {hspec.uri}")
        self._conns[hspec.uri] = conn
        return conn


def _auth(lv: Any, hyp: Host, hspec: HypervisorSpec) -> list[Any]:
    values = {}
    for kind, var in (
        (lv.VIR_CRED_AUTHNAME, hspec.username_env),
        (lv.VIR_CRED_PASSPHRASE, hspec.password_env),
    ):
        if var is None:
            continue
        if var not in os.environ:
            raise HostError(
                hyp.name, f"environment variable {var} is not set (libvirt credentials)"
            )
        values[kind] = os.environ[var]

    def callback(creds: list[list[Any]], _data: Any) -> int:
        for cred in creds:
            if cred[0] not in values:
                return -1
            cred[4] = values[cred[0]]
        return 0

    return [list(values), callback, None]


def lookup(lv: Any, conn: Any, name: str) -> Any:
    """The domain named ``name``, None when there is none."""
    try:
        return conn.lookupByName(name)
    except lv.libvirtError as exc:
        if exc.get_error_code() == lv.VIR_ERR_NO_DOMAIN:
            return None
        raise


def stop(lv: Any, dom: Any, timeout_s: float) -> None:
    """Shut the domain down, waiting at most ``timeout_s``, then power it off."""
    try:
        if not dom.isActive():
            return
        if timeout_s > 0:
            dom.shutdown()
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                if not dom.isActive():
                    return
                time.sleep(0.5)
        dom.destroy()
    except lv.libvirtError:
        if dom.isActive():
            raise


def wait_for_guest(host: Host, spec: VmSpec, hyp: Host, dom: Any, t0: float) -> None:
    """Bounded: until the guest's sshd greets on ``ansible_host:ansible_port``.

    The probe runs from this machine, where Ansible runs too; Ansible's own login comes
    right after (the sweep reads the guest's facts) and reports its own failure.
    """
    addr = str(host.variables.get("ansible_host") or host.address)
    port = int(host.variables.get("ansible_port", 22))
    deadline = t0 + spec.boot_timeout_s
    console = spec.console_log or DEFAULT_CONSOLE_LOG.format(domain=spec.domain)
    last = "no answer"
    while True:
        if not dom.isActive():
            raise HostError(
                host.name,
                f"domain {spec.domain} stopped while booting; see its console log "
                f"{console} on {hyp.name}",
            )
        last = _ssh_banner(addr, port)
        if last == "ok":
            break
        if time.monotonic() >= deadline:
            raise HostError(
                host.name,
                f"the guest did not come up: no SSH at {addr}:{port} within "
                f"{spec.boot_timeout_s:g} s of booting ({last}); see its console log "
                f"{console} on {hyp.name}",
            )
        time.sleep(PROBE_INTERVAL_S)


def readback(
    lv: Any, dom: Any, hyp: Host, spec: VmSpec, inventory: Path, debug: bool
) -> dict[str, Any]:
    """The pinning as libvirt and as /proc/<qemu pid>/task/*/status report it (the caller
    compares it with what it asked)."""
    live = lv.VIR_DOMAIN_AFFECT_LIVE
    libvirt_vcpus = {i: cpus_of_map(m) for i, m in enumerate(dom.vcpuPinInfo(live))}
    libvirt_emulator = cpus_of_map(dom.emulatorPinInfo(live))
    if hyp.is_local:  # this machine: read /proc here, with the same script
        doc = _qemu_threads_script().collect(spec.domain)
        if doc is None:
            raise HostError(hyp.name, f"no running QEMU process for domain {spec.domain}")
        return _readback_doc(libvirt_vcpus, libvirt_emulator, doc)
    res = run_playbook(
        "libvirt-host.yml",
        inventory,
        extravars={"sizing_hosts": hyp.name, "sizing_domain": spec.domain},
        limit=[hyp.name],
        timeout=120,
        debug=debug,
    )
    out = res.result(hyp.name, "Read the QEMU threads of the guest")
    if out is None:
        reason = res.problems().get(hyp.name) or f"playbook {res.status}"
        raise HostError(hyp.name, f"cannot read the QEMU threads of {spec.domain}: {reason}")
    try:
        doc = json.loads(str(out.get("stdout", "")))
    except ValueError:
        raise HostError(hyp.name, f"unreadable QEMU thread list of {spec.domain}") from None
    return _readback_doc(libvirt_vcpus, libvirt_emulator, doc)


def _readback_doc(
    libvirt_vcpus: dict[int, tuple[int, ...]],
    libvirt_emulator: tuple[int, ...],
    doc: dict[str, Any],
) -> dict[str, Any]:
    threads = list(doc.get("threads", []))
    return {
        "libvirt_vcpus": libvirt_vcpus,
        "libvirt_emulator": libvirt_emulator,
        "proc_vcpus": vcpu_threads(threads),
        "pid": doc.get("pid"),
        "threads": threads,
    }


def _qemu_threads_script() -> Any:
    """``playbooks/files/qemu_threads.py`` as a module (what the playbook runs remotely)."""
    import importlib.util

    path = paths.PLAYBOOKS / "files" / "qemu_threads.py"
    spec = importlib.util.spec_from_file_location("sizing_qemu_threads", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ssh_banner(addr: str, port: int) -> str:
    """``ok`` when an SSH server greets on addr:port, else why not (one short phrase)."""
    try:
        with socket.create_connection((addr, port), timeout=2) as s:
            s.settimeout(5)
            banner = s.recv(64)
    except TimeoutError:
        return "connection timed out"
    except OSError as exc:
        return exc.strerror or str(exc)
    return "ok" if banner.startswith(b"SSH-") else f"not an SSH server: {banner[:20]!r}"
