#!/usr/bin/env python3
"""Print one JSON document describing this host for sizing (stdlib only).

Run on every host by playbooks/facts.yml. It reads the CPU topology from sysfs (in the
`lscpu -p=CPU,CORE,SOCKET,NODE` shape), the CPU model and microcode, the frequency
governor, the SMT state, the kernel, the hypervisor, the nginx and OpenSSL builds and the
limits a load test needs (file descriptors, somaxconn, ephemeral ports), and the clock.
"""

from __future__ import annotations

import glob
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import time
from typing import Any

# When this script started: sizing takes the time Ansible needed to start it (its reach) for
# the start lead of the run's first load window, as playbooks/files/loadgen.py's BEGAN.
BEGAN = time.time()


def read(path: str, default: str = "") -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return default


def run(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (out.stdout + out.stderr).strip()


def _cpu_number(path: str) -> int:
    return int(re.sub(r"\D", "", os.path.basename(path)))


def topology() -> tuple[str, str]:
    lines = ["# CPU,Core,Socket,Node"]
    online = read("/sys/devices/system/cpu/online")
    for cpu_dir in sorted(glob.glob("/sys/devices/system/cpu/cpu[0-9]*"), key=_cpu_number):
        cpu = int(os.path.basename(cpu_dir)[3:])
        if read(cpu_dir + "/online", "1") == "0":
            continue
        core = read(cpu_dir + "/topology/core_id", str(cpu))
        sock = read(cpu_dir + "/topology/physical_package_id", "0")
        nodes = glob.glob(cpu_dir + "/node[0-9]*")
        node = os.path.basename(nodes[0])[4:] if nodes else "0"
        lines.append(f"{cpu},{core},{sock},{node}")
    return "\n".join(lines) + "\n", online


def cpuinfo() -> tuple[str, str, bool]:
    model, microcode, flags = "", "", ""
    for line in read("/proc/cpuinfo").splitlines():
        key, _, val = line.partition(":")
        key, val = key.strip(), val.strip()
        if key == "model name" and not model:
            model = val
        elif key == "microcode" and not microcode:
            microcode = val
        elif key == "flags" and not flags:
            flags = val
    return model, microcode, "hypervisor" in flags.split()


def hypervisor(flag: bool) -> str | None:
    vendor = read("/sys/hypervisor/type")
    if not vendor and shutil.which("systemd-detect-virt"):
        out = run(["systemd-detect-virt"])
        vendor = "" if out is None or out == "none" else out
    if not vendor:
        dmi = read("/sys/class/dmi/id/sys_vendor") + " " + read("/sys/class/dmi/id/product_name")
        for needle, name in (
            ("VMware", "vmware"),
            ("QEMU", "kvm"),
            ("KVM", "kvm"),
            ("Microsoft", "hyperv"),
            ("Xen", "xen"),
        ):
            if needle in dmi:
                vendor = name
                break
    if not vendor and flag:
        vendor = "unknown"
    return vendor or None


def nic_speeds() -> dict[str, int | None]:
    """Link speed in Mb/s of every network interface but lo (None when the driver has none)."""
    out: dict[str, int | None] = {}
    for path in sorted(glob.glob("/sys/class/net/*")):
        name = os.path.basename(path)
        if name == "lo":
            continue
        try:
            speed = int(read(path + "/speed", "-1") or -1)
        except ValueError:
            speed = -1
        out[name] = speed if speed > 0 else None
    return out


def limits() -> dict[str, Any]:
    """Open-files limits of this context (Ansible's user, after become), and whether it may
    raise them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    cap_eff = 0
    for line in read("/proc/self/status").splitlines():
        if line.startswith("CapEff:"):
            cap_eff = int(line.split()[1], 16)
    return {
        "nofile_soft": None if soft == resource.RLIM_INFINITY else soft,
        "nofile_hard": None if hard == resource.RLIM_INFINITY else hard,
        "cap_sys_resource": bool(cap_eff & (1 << 24)),  # CAP_SYS_RESOURCE: may raise hard limits
        "euid": os.geteuid(),
    }


def net_namespace() -> str | None:
    """This process's network namespace (``net:[inode]``), or None where unreadable."""
    try:
        return os.readlink("/proc/self/ns/net")
    except OSError:
        return None


def version_of(argv: list[str], pattern: str) -> str | None:
    if not shutil.which(argv[0]):
        return None
    out = run(argv) or ""
    m = re.search(pattern, out)
    return m.group(1) if m else out.splitlines()[0] if out else None


def nginx_builds(nginx_v: str | None) -> tuple[str | None, str | None]:
    """nginx's version and the OpenSSL it was built with, from ``nginx -V``."""
    version = re.search(r"nginx/(\S+)", nginx_v or "")
    openssl = re.search(r"built with OpenSSL (\S+)", nginx_v or "")
    return (version.group(1) if version else None, openssl.group(1) if openssl else None)


def os_name() -> str:
    debian = read("/etc/debian_version")
    return "Debian " + debian if debian else platform.platform()


def main() -> None:
    lscpu, online = topology()
    model, microcode, hv_flag = cpuinfo()
    nginx_version, nginx_openssl = nginx_builds(
        run(["nginx", "-V"]) if shutil.which("nginx") else None
    )
    facts: dict[str, Any] = {
        "hostname": platform.node(),
        # Which machine this is, whatever the inventory calls it: two inventory names with
        # the same machine-id (in the same network namespace) are one host (pre-flight).
        "machine_id": read("/etc/machine-id") or None,
        "net_ns": net_namespace(),
        "kernel": platform.release(),
        "os": os_name(),
        "arch": platform.machine(),
        "cpu_model": model,
        "microcode": microcode or None,
        "governor": read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") or None,
        "smt_control": read("/sys/devices/system/cpu/smt/control") or None,
        "lscpu": lscpu,
        "online": online,
        "hypervisor": hypervisor(hv_flag),
        "nginx_version": nginx_version,
        "nginx_openssl": nginx_openssl,
        "openssl_version": version_of(["openssl", "version"], r"OpenSSL (\S+)"),
        **limits(),
        "nic_speeds_mbps": nic_speeds(),
        "somaxconn": int(read("/proc/sys/net/core/somaxconn", "0") or 0),
        "ip_local_port_range": read("/proc/sys/net/ipv4/ip_local_port_range"),
        "mem_total_kb": int(re.sub(r"\D", "", read("/proc/meminfo").splitlines()[0]) or 0),
    }
    facts["began"] = BEGAN
    facts["time"] = time.time()  # last: compared with the controller's clock around this task
    print(json.dumps(facts))


if __name__ == "__main__":
    main()
