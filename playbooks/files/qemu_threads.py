#!/usr/bin/env python3
"""Print the threads of a libvirt guest's QEMU process and their CPU affinity (stdlib only).

Usage: qemu_threads.py DOMAIN. Output: {"domain", "pid", "threads": [{"tid", "comm",
"cpus"}]} where "cpus" is the thread's Cpus_allowed_list from /proc/<pid>/task/<tid>/status.
The pid comes from libvirt's pid file, else from the QEMU command line (-name guest=DOMAIN).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def qemu_pid(domain: str) -> int | None:
    for run in ("/run/libvirt/qemu", "/var/run/libvirt/qemu"):
        text = read(os.path.join(run, domain + ".pid"))
        if text and text.strip().isdigit() and os.path.isdir("/proc/" + text.strip()):
            return int(text.strip())
    wanted = ("guest=" + domain + ",", "guest=" + domain)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        cmd = (read(f"/proc/{entry}/cmdline") or "").split("\0")
        if (
            cmd
            and "qemu" in os.path.basename(cmd[0])
            and any(a.startswith(wanted[0]) or a == wanted[1] for a in cmd)
        ):
            return int(entry)
    return None


def collect(domain: str) -> dict[str, Any] | None:
    """The document this script prints, or None when the domain has no QEMU process."""
    pid = qemu_pid(domain)
    if pid is None:
        return None
    threads: list[dict[str, Any]] = []
    for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
        status = read(f"/proc/{pid}/task/{tid}/status") or ""
        cpus = ""
        for line in status.splitlines():
            if line.startswith("Cpus_allowed_list:"):
                cpus = line.split(":", 1)[1].strip()
        comm = (read(f"/proc/{pid}/task/{tid}/comm") or "").strip()
        threads.append({"tid": int(tid), "comm": comm, "cpus": cpus})
    return {"domain": domain, "pid": pid, "threads": threads}


def main() -> int:
    doc = collect(sys.argv[1])
    if doc is None:
        sys.stderr.write(f"no running QEMU process for domain {sys.argv[1]}\n")
        return 1
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
