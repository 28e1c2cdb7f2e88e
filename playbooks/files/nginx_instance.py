#!/usr/bin/env python3
"""Provision and stop a dedicated nginx instance on a host: one program for the steps that
were each an Ansible module call (playbooks/nginx.yml, upstream.yml, tasks/nginx-stop-instance.yml).

An Ansible module task costs about half a second on a small host (a Python start that
unpacks and compiles Ansible's module code), and every ``sizing run`` provisions: this
script runs through ``ansible.builtin.script`` in a few tens of milliseconds per step.

Usage: ``nginx_instance.py STEP SPEC_JSON`` with STEP one of ``probe``, ``paths``,
``certs``, ``conf``, ``up`` and ``stop`` (see each function). It prints one JSON document
(``changed`` says whether it changed anything); on failure it prints one line on stderr
that names the host and exits 1. Standard library only: it runs on the hosts' Python.
"""

from __future__ import annotations

import json
import os
import pwd
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any, NoReturn

STOP_TIMEOUT_S = 60.0  # a master that takes longer to exit is reported, not waited for
START_TIMEOUT_S = 30.0  # until /healthz answers and exactly N workers run
PORT_TIMEOUT_S = 5.0  # until a port the sizing nginx needs is free


class Failed(Exception):
    """One line for the operator: what failed, on which host."""


def fail(message: str) -> NoReturn:
    raise Failed(message)


def pgrep(*args: str) -> list[str]:
    """pgrep's output lines (no match: none); its own failure raises."""
    res = subprocess.run(["pgrep", *args], capture_output=True, text=True, check=False)
    if res.returncode not in (0, 1):
        fail(f"pgrep {' '.join(args)} failed: {res.stderr.strip()}")
    return res.stdout.split()


def owned(path: str, mode: int) -> bool:
    st = os.stat(path)
    return (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, 0, mode)


def write_file(path: str, data: bytes, mode: int) -> None:
    """Replace ``path`` with ``data`` (root-owned, ``mode``) in one rename."""
    tmp = path + ".sizing-tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.chown(tmp, 0, 0)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def probe(spec: dict[str, Any]) -> dict[str, Any]:
    """Who the tasks run as, whether nginx and openssl are installed, and the open-files
    limit a nginx started by these tasks can get (``rlimit`` asked for, or the hard limit
    when it cannot be raised: no CAP_SYS_RESOURCE in some containers)."""
    want = int(spec["rlimit"])
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
        rlimit = want
    except (ValueError, OSError):
        rlimit = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return {
        "changed": False,
        "user": pwd.getpwuid(os.geteuid()).pw_name,
        "programs": all(shutil.which(p) for p in ("nginx", "openssl")),
        "rlimit": rlimit,
    }


def paths(spec: dict[str, Any]) -> dict[str, Any]:
    """Directories (path, octal mode) and content files of exact sizes (``x`` bytes), all
    owned by root; only what differs is changed."""
    changed = []
    for path, text_mode in spec["dirs"]:
        mode = int(text_mode, 8)
        if not os.path.isdir(path) or not owned(path, mode):
            os.makedirs(path, exist_ok=True)
            os.chown(path, 0, 0)
            os.chmod(path, mode)
            changed.append(path)
    for name, size in sorted(spec["files"].items()):
        path, want = os.path.join(spec["root"], name), b"x" * int(size)
        try:
            with open(path, "rb") as fh:
                same = fh.read(len(want) + 1) == want and owned(path, 0o644)
        except OSError:
            same = False
        if not same:
            write_file(path, want, 0o644)
            changed.append(path)
    return {"changed": bool(changed), "paths": changed}


def certs(spec: dict[str, Any]) -> dict[str, Any]:
    """Self-signed certificates ``DIR/NAME.{key,crt}`` that do not exist yet."""
    made = []
    for cert in spec["certs"]:
        crt = os.path.join(spec["dir"], cert["name"] + ".crt")
        if os.path.exists(crt):
            continue
        argv = [
            "openssl",
            "req",
            "-x509",
            "-nodes",
            "-sha256",
            "-days",
            "3650",
            *cert["newkey"],
            "-subj",
            "/CN=sizing-nginx",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout",
            os.path.join(spec["dir"], cert["name"] + ".key"),
            "-out",
            crt,
        ]
        res = subprocess.run(argv, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            last = (res.stderr.strip().splitlines() or ["no message"])[-1]
            fail(f"{spec['host']}: openssl could not create the {cert['name']} certificate: {last}")
        made.append(cert["name"])
    return {"changed": bool(made), "made": made}


def conf(spec: dict[str, Any]) -> dict[str, Any]:
    """Install ``content`` as ``dest`` (root, 0644) when it differs. With ``validate``, the
    real nginx tests the candidate first (``nginx -t``), so a bad variable fails here and
    the running instance keeps its configuration."""
    dest, data = spec["dest"], spec["content"].encode()
    try:
        with open(dest, "rb") as fh:
            if fh.read() == data and owned(dest, 0o644):
                return {"changed": False}
    except OSError:
        pass
    if spec.get("validate"):
        with tempfile.NamedTemporaryFile("wb", prefix="sizing-nginx-", suffix=".conf") as fh:
            fh.write(data)
            fh.flush()
            res = subprocess.run(
                ["nginx", "-t", "-q", "-c", fh.name], capture_output=True, text=True, check=False
            )
        if res.returncode != 0:
            first = (res.stderr.strip().splitlines() or ["no message"])[0]
            fail(f"{spec['host']}: the nginx configuration failed nginx -t: {first}")
    write_file(dest, data, 0o644)
    return {"changed": True}


def masters(pattern: str) -> list[str]:
    return pgrep("-f", pattern)


def stop_masters(pattern: str, host: str) -> list[str]:
    """SIGTERM (nginx's fast shutdown) to every master matching ``pattern``, then wait
    until none matches. By command line, not pid file: the file may be stale or gone
    while the master runs, and a zombie master (PID 1 does not reap) has an empty one."""
    found = masters(pattern)
    for pid in found:
        try:
            os.kill(int(pid), signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while found and masters(pattern):
        if time.monotonic() > deadline:
            fail(
                f"{host}: the nginx master {', '.join(found)} did not exit within "
                f"{STOP_TIMEOUT_S:.0f} s of SIGTERM"
            )
        time.sleep(0.05)
    return found


def stop_orphans(pidfile: str | None, host: str) -> list[str]:
    """Stop the workers a killed master left behind (kill -9 of the master: they keep
    serving, parent PID 1, and hold the instance's ports). They are found by the pid file's
    pid, which is their process group (nginx's master leads its group, the workers inherit
    it), and only when that master is gone (or a zombie nobody reaps) and each one is an
    ``nginx: worker process`` (or cache process) whose parent is no nginx master: another
    instance's workers are never touched."""
    if not pidfile:
        return []
    try:
        with open(pidfile) as fh:
            group = int(fh.read().strip())
    except (OSError, ValueError):
        return []
    if group <= 1 or _alive(str(group)):
        return []  # the master lives (stop_masters' business), or the pid is reused
    orphans = []
    for pid in pgrep("-g", str(group)):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
            with open(f"/proc/{pid}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if cmd.startswith(("nginx: worker process", "nginx: cache")) and not _is_master(ppid):
            orphans.append(pid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in orphans:
            try:
                os.kill(int(pid), sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + STOP_TIMEOUT_S / 2
        while any(os.path.exists(f"/proc/{p}/cmdline") and _alive(p) for p in orphans):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        else:
            break
    still = [p for p in orphans if _alive(p)]
    if still:
        fail(f"{host}: the orphaned nginx workers {', '.join(still)} did not exit")
    return orphans


def _is_master(pid: int) -> bool:
    """Whether ``pid`` is a running nginx master (an orphan's parent is PID 1 or the
    nearest subreaper, never one)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().startswith(b"nginx: master")
    except OSError:
        return False


def _alive(pid: str) -> bool:
    """Running, not a zombie (a zombie has an empty command line)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return bool(fh.read())
    except OSError:
        return False


def stop(spec: dict[str, Any]) -> dict[str, Any]:
    """Stop the instance whose master matches ``pattern``, and the workers a killed master
    left behind (``pidfile``); nothing running is no change."""
    stopped = stop_masters(spec["pattern"], spec["host"])
    orphans = stop_orphans(spec.get("pidfile"), spec["host"])
    return {"changed": bool(stopped or orphans), "stopped": stopped, "orphans": orphans}


def current(spec: dict[str, Any], found: list[str]) -> bool:
    """The running master has loaded the current configuration: the pid file names it and
    no file under the configuration directory is newer than the pid file (nginx writes it
    when it starts; a new nginx.conf or certificate is newer). This also catches a run
    interrupted between writing the configuration and restarting."""
    if len(found) != 1:
        return False
    try:
        with open(spec["pidfile"]) as fh:
            if fh.read().strip() != found[0]:
                return False
        since = os.stat(spec["pidfile"]).st_mtime
    except OSError:
        return False
    for root, _dirs, files in os.walk(spec["confdir"]):
        for name in files:
            try:
                if os.stat(os.path.join(root, name)).st_mtime > since:
                    return False
            except OSError:
                return False
    return True


def port_free(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return False
    except OSError:
        return True


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# Redirects not followed (a redirect is not the content), no proxy from the environment.
OPENER = urllib.request.build_opener(NoRedirect, urllib.request.ProxyHandler({}))


def get(url: str) -> tuple[int, bytes]:
    """Status and body of one GET, redirects not followed; (0, b"") when it fails."""
    try:
        with OPENER.open(url, timeout=5) as response:
            return int(response.status), response.read()
    except urllib.error.HTTPError as err:
        return int(err.code), b""
    except (OSError, ValueError):
        return 0, b""


def workers(pattern: str) -> int:
    found = masters(pattern)
    if not found:
        return 0
    return len(pgrep("-P", ",".join(found), "-f", "^nginx: worker process"))


def up(spec: dict[str, Any]) -> dict[str, Any]:
    """Leave the instance running its current configuration and answering.

    A master that runs an older configuration is restarted (stopped, waited for, started)
    rather than reloaded: a reload lets old workers finish their connections, so for a
    while more than N workers run, some with the old affinity. Then /healthz must answer
    ``ok``, ``content`` (a content file, when given) must be readable by the workers, and
    exactly ``workers`` workers must run (when given)."""
    host, pattern = spec["host"], spec["pattern"]
    found = masters(pattern)
    stopped: list[str] = []
    started = False
    if not (found and current(spec, found)):
        if found:
            stopped = stop_masters(pattern, host)
        stopped += stop_orphans(spec.get("pidfile"), host)
        for port in spec.get("ports", []):
            deadline = time.monotonic() + PORT_TIMEOUT_S
            while not port_free(spec["probe_host"], int(port)):
                if time.monotonic() > deadline:
                    fail(
                        f"{host}: port {port} is taken by another process (an orphaned nginx "
                        "worker, another instance?); free it or choose other sizing ports."
                    )
                time.sleep(0.1)
        with tempfile.TemporaryFile("w+") as err:
            res = subprocess.run(
                ["nginx", "-c", spec["conf"]],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                check=False,
            )
            err.seek(0)
            text = err.read().strip()
        if res.returncode != 0:
            first = (text.splitlines() or ["no message"])[0]
            fail(f"{host}: nginx -c {spec['conf']} did not start: {first}")
        started = True
    deadline = time.monotonic() + START_TIMEOUT_S
    while get(spec["health"]) != (200, b"ok\n"):
        if time.monotonic() > deadline:
            fail(
                f"{host}: nginx does not answer {spec['health']} with ok within "
                f"{START_TIMEOUT_S:.0f} s"
            )
        time.sleep(0.1)
    if spec.get("content"):
        status, _ = get(spec["content"])
        if status != 200:
            fail(
                f"{host}: the nginx workers cannot read the content files: {spec['content']} "
                f"answered HTTP {status or 'nothing'}"
            )
    want = spec.get("workers")
    if want is not None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while (now := workers(pattern)) != int(want):
            if time.monotonic() > deadline:
                fail(
                    f"{host}: {now} nginx workers run, not {want}, {START_TIMEOUT_S:.0f} s "
                    "after the start"
                )
            time.sleep(0.1)
    return {"changed": started, "started": started, "stopped": stopped}


STEPS = {"probe": probe, "paths": paths, "certs": certs, "conf": conf, "up": up, "stop": stop}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in STEPS:
        print(f"usage: nginx_instance.py {{{','.join(STEPS)}}} SPEC_JSON", file=sys.stderr)
        return 2
    try:
        out = STEPS[argv[0]](json.loads(argv[1]))
    except Failed as exc:
        print(exc, file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
