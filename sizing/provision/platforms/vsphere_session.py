"""A logged-in vSphere session (pyVmomi's ServiceInstance): TLS verified against the system
store or the inventory's CA file (or not, said once), and every failure to log in, verify or
reach the endpoint said in one line; and the bounded waits on it (a task, a VM's power, its
guest's SSH)."""

from __future__ import annotations

import atexit
import socket
import ssl
import time
from collections.abc import Callable
from typing import Any

from sizing.errors import HostError, SizingError
from sizing.inventory import Host
from sizing.provision.platforms.vsphere_settings import POLL_S, HypervisorSettings, fault_text

__all__ = [
    "ansible_address",
    "open_session",
    "power",
    "tcp_open",
    "wait_for_guest",
    "wait_task",
]


def open_session(
    settings: HypervisorSettings,
    user: str,
    password: str,
    *,
    insecure: bool,
    notify: Callable[[str], None],
    warned: set[str],
) -> Any:
    """Log in to ``settings.url`` (``warned``: the endpoints whose unverified TLS was said)."""
    # optional (the vSphere extra, scripts/setup --dev): imported only for a vSphere host
    from pyVim import connect as pyvim_connect
    from pyVmomi import vim, vmodl

    smart_connect: Callable[..., Any] = pyvim_connect.SmartConnect

    verify = settings.verify_tls and not insecure
    if verify:
        try:
            ctx = ssl.create_default_context(cafile=settings.ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise SizingError(
                f"{settings.url}: sizing_hypervisor.ca_file {settings.ca_file}: cannot"
                f" load it: {getattr(exc, 'strerror', None) or exc}"
            ) from None
    else:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        if settings.url not in warned:
            warned.add(settings.url)
            why = "--insecure" if insecure else "sizing_hypervisor.verify_tls"
            notify(
                f"{settings.url}: TLS certificate verification is off ({why}); anyone on"
                " the path can read the vSphere credentials"
            )
    try:
        si = smart_connect(
            host=settings.host,
            port=settings.port,
            path=settings.path,
            user=user,
            pwd=password,
            sslContext=ctx,
            httpConnectionTimeout=settings.timeout_s,
            connectionPoolTimeout=-1,
        )
    except vim.fault.InvalidLogin:
        raise HostError(
            settings.url,
            f"login failed: vSphere refused the user and password from"
            f" {settings.credentials_source}",
        ) from None
    except ssl.SSLCertVerificationError as exc:
        raise HostError(
            settings.url,
            f"TLS certificate does not verify ({exc.verify_message or exc.reason});"
            " give its CA with sizing_hypervisor.ca_file, or use --insecure",
        ) from None
    except ssl.SSLError as exc:
        raise HostError(settings.url, f"TLS failed: {exc.reason or exc}") from None
    except vmodl.MethodFault as exc:
        raise HostError(settings.url, fault_text(exc)) from None
    except OSError as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, ssl.SSLCertVerificationError):
            raise HostError(
                settings.url,
                f"TLS certificate does not verify ({cause.verify_message});"
                " give its CA with sizing_hypervisor.ca_file, or use --insecure",
            ) from None
        why = exc.strerror or str(exc) or type(exc).__name__
        raise HostError(settings.url, f"vSphere endpoint unreachable: {why}") from None
    except Exception as exc:  # pyVmomi raises http.client / parser errors as they come
        raise HostError(settings.url, f"not a vSphere endpoint? {fault_text(exc)}") from None
    atexit.register(_disconnect_quietly, pyvim_connect.Disconnect, si)
    return si


def _disconnect_quietly(disconnect: Callable[[Any], None], si: Any) -> None:
    try:
        disconnect(si)
    except Exception:  # the endpoint may be gone at exit; nothing to do about it
        pass


def ansible_address(host: Host) -> str:
    """The address Ansible reaches a host at."""
    return str(host.variables.get("ansible_host", host.name))


def tcp_open(addr: str, port: int, *, timeout: float) -> bool:
    """Whether ``addr:port`` accepts a TCP connection within ``timeout``."""
    try:
        with socket.create_connection((addr, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_task(task: Any, timeout_s: float, what: str) -> Any:
    """The result of a vSphere task, waited for at most ``timeout_s`` (one-line errors)."""
    deadline = time.monotonic() + timeout_s
    while True:
        info = task.info
        if info.state == "success":
            return info.result
        if info.state == "error":
            raise SizingError(f"{what}: {fault_text(info.error)}")
        if time.monotonic() > deadline:
            raise SizingError(f"{what}: vSphere task not done after {timeout_s:.0f} s")
        time.sleep(POLL_S / 5 if info.state == "queued" else POLL_S)


def power(vm: Any, *, on: bool, timeout_s: float, what: str) -> None:
    """Power the VM on or off (bounded); nothing to do when it already is."""
    want = "poweredOn" if on else "poweredOff"
    if vm.runtime.powerState == want:
        return
    task = vm.PowerOnVM_Task() if on else vm.PowerOffVM_Task()
    wait_task(task, timeout_s, f"{what}: powering {'on' if on else 'off'}")


def wait_for_guest(host: Host, vm: Any, timeout_s: float) -> str | None:
    """Wait until SSH answers on the address Ansible uses; the IP Tools report."""
    addr = ansible_address(host)
    port = int(host.variables.get("ansible_port", 22))
    deadline = time.monotonic() + timeout_s
    ip: str | None = None
    while True:
        ip = str(getattr(vm.guest, "ipAddress", "") or "") or ip
        if tcp_open(addr, port, timeout=min(2.0, max(0.1, deadline - time.monotonic()))):
            return ip
        if time.monotonic() > deadline:
            seen = f"VMware Tools report {ip}" if ip else "VMware Tools report no IP"
            raise HostError(
                host.name,
                f"VM {vm.name} did not come up: no SSH on {addr}:{port} within"
                f" {timeout_s:.0f} s ({seen})",
            )
        time.sleep(POLL_S)
