#!/usr/bin/env python3
"""Run timed load windows on one host and print one JSON document (stdlib only).

Copied to every server and client host by playbooks/clients.yml and started by
playbooks/load.yml with one argument: a JSON spec. All hosts of a point receive the same
``start_at`` (epoch seconds), so their windows begin together whatever Ansible's fan-out
delay was; the real start of each window is recorded so the skew can be stored, and
``began`` (when this program started) tells sizing how much start lead Ansible needs.

What it is asked and what it prints are loadproto.py's LoadSpec and RunnerOutput (copied
beside it; sizing reads and writes the same module as ``sizing.loadproto``).
Server windows also carry the network softirqs run on each CPU (/proc/softirqs).
Nothing here builds a shell string: commands are argv lists.

The runner leads a process group of its own, so its load generators are its group's
members, and it records ``<its directory>/loadgen-<run>-<pid>.pid`` (PID and start time)
while it runs; ``loadgen.py --stop RUN`` (playbooks/run-end.yml, after Ctrl-C or a
SIGTERM on the controller) kills the groups of that run, checked by start time so a
reused PID is never hit. SIGTERM, SIGHUP or SIGINT to the runner kill its group too.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import time
from types import FrameType
from typing import Dict, Optional, Tuple  # noqa: UP035 - Python 3.8 on the hosts

from loadproto import (
    Command,
    CommandOutput,
    Counters,
    LoadSpec,
    MixCounts,
    RunnerOutput,
    TlsCounts,
    UpstreamProbe,
    WindowOutput,
)

HERE = os.path.dirname(os.path.abspath(__file__))
BEGAN = time.time()  # reported: how long Ansible took to start this runner (the lead)


def cpu_times() -> Counters:
    out: Counters = {}
    with open("/proc/stat", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("cpu") and line[3:4].isdigit():
                parts = line.split()
                out[parts[0][3:]] = [int(v) for v in parts[1:]]
    return out


def net_bytes() -> Counters:
    """{interface: [rx_bytes, tx_bytes]} from /proc/net/dev (this network namespace)."""
    out: Counters = {}
    with open("/proc/net/dev", encoding="ascii") as fh:
        for line in fh.readlines()[2:]:
            name, _, rest = line.partition(":")
            fields = rest.split()
            if len(fields) >= 9:
                out[name.strip()] = [int(fields[0]), int(fields[8])]
    return out


def established_count(ports: list[int]) -> int:
    """TCP connections in state ESTABLISHED whose local port is one of ``ports``."""
    wanted = {int(p) for p in ports}
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as fh:
                next(fh, None)
                for line in fh:
                    parts = line.split()
                    if len(parts) > 3 and parts[3] == "01":
                        if int(parts[1].rsplit(":", 1)[1], 16) in wanted:
                            count += 1
        except OSError:
            continue
    return count


def nginx_cpu_seconds(pidfile: str) -> float | None:
    """CPU seconds used so far by the nginx master and its workers.

    Each process's threads' run time from /proc/PID/task/*/schedstat, in nanoseconds, where
    the kernel keeps it; else user + system from /proc/PID/stat, in 10 ms ticks. Ticks are
    too coarse for a small share: an upstream held to 0.05 CPU runs 0.1 s in a 2 s window,
    which two tick readings give only to about ±10%."""
    try:
        with open(pidfile, encoding="ascii") as fh:
            master = int(fh.read().strip())
    except (OSError, ValueError):
        return None
    tck = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat, encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(stat.split("/")[2])
        if pid == master or int(fields[1]) == master:
            ran = run_time_ns(pid)
            total += ran / 1e9 if ran else (int(fields[11]) + int(fields[12])) / tck
    return total


def run_time_ns(pid: int) -> int:
    """The nanoseconds a process's threads have run (0 where schedstat is not kept)."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/[0-9]*/schedstat"):
        try:
            with open(path, encoding="ascii") as fh:
                total += int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total


def throttle_count() -> int:
    """Thermal throttling events of all CPUs so far (0 where the kernel exposes none)."""
    total = 0
    for path in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/thermal_throttle/*_throttle_count"):
        try:
            with open(path, encoding="ascii") as fh:
                total += int(fh.read().strip() or 0)
        except (OSError, ValueError):
            continue
    return total


def truncate(path: str) -> None:
    try:
        with open(path, "r+", encoding="ascii") as fh:
            fh.truncate(0)
    except OSError:
        pass


def tls_counts(path: str) -> TlsCounts:
    """Count full and resumed handshakes in nginx's side log for this window.

    Lines are ``$ssl_session_reused $ssl_protocol $ssl_cipher $status``: nginx writes ``r``
    for a resumed session and ``.`` for a full handshake.
    """
    full = reused = 0
    suites: dict[str, int] = {}
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) < 3 or parts[0] not in ("r", "."):
                    continue
                if parts[0] == "r":
                    reused += 1
                else:
                    full += 1
                suite = parts[1] + " " + parts[2]
                suites[suite] = suites.get(suite, 0) + 1
    except OSError:
        pass
    return TlsCounts(full, reused, suites)


def mix_counts(path: str) -> MixCounts:
    """Tally this window's lines of the lab nginx's mix log, one line at a time."""
    counts = MixCounts()
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            for line in fh:
                counts.add_line(line)
    except OSError:
        pass
    return counts


def net_softirqs() -> dict[str, dict[str, int]]:
    """{"NET_RX": {cpu: count}, "NET_TX": {...}} from /proc/softirqs (network softirqs run
    so far on each CPU: where the kernel did the network work)."""
    out: dict[str, dict[str, int]] = {}
    try:
        with open("/proc/softirqs", encoding="ascii") as fh:
            cpus = [c[3:] for c in fh.readline().split()]
            for line in fh:
                parts = line.split()
                if parts and parts[0] in ("NET_RX:", "NET_TX:"):
                    out[parts[0][:-1]] = dict(zip(cpus, (int(v) for v in parts[1:])))
    except (OSError, ValueError):
        pass
    return out


# cgroup dir -> (quota in CPUs, throttled periods); typing's names: Python 3.8 on the hosts
Limits = Dict[str, Tuple[Optional[float], Optional[int]]]  # noqa: UP006, UP007


def cgroup_chain(pid: int) -> Limits:
    """Every cgroup from ``pid``'s own up to the root, by its directory: its CPU quota in
    CPUs (None: none) and the periods it throttled so far. A parent's quota (a systemd
    slice's CPUQuota, a pod's limit) holds its children too, and only its own cpu.stat
    counts its throttling. cgroup v2 (cpu.max, cpu.stat nr_throttled) or v1
    (cpu.cfs_quota_us / cfs_period_us)."""
    try:
        with open(f"/proc/{pid}/cgroup", encoding="ascii") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return {}
    for line in lines:
        hier, ctrls, path = (line.split(":", 2) + ["", ""])[:3]
        if hier == "0" and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            root, read = "/sys/fs/cgroup", _v2_quota
        elif "cpu" in ctrls.split(","):
            root = "/sys/fs/cgroup/" + ctrls
            if not os.path.isdir(root):
                root = "/sys/fs/cgroup/cpu"
            read = _v1_quota
        else:
            continue
        parts = [p for p in path.split("/") if p]
        dirs = [root + "".join("/" + p for p in parts[:n]) for n in range(len(parts), -1, -1)]
        return {d: (read(d), read_throttled(d + "/cpu.stat")) for d in dirs if os.path.isdir(d)}
    return {}


def _v2_quota(base: str) -> float | None:
    try:
        with open(base + "/cpu.max", encoding="ascii") as fh:
            quota, period = fh.read().split()
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


def _v1_quota(base: str) -> float | None:
    try:
        with open(base + "/cpu.cfs_quota_us", encoding="ascii") as fh:
            quota_us = int(fh.read())
        with open(base + "/cpu.cfs_period_us", encoding="ascii") as fh:
            period_us = int(fh.read())
        return quota_us / period_us if quota_us > 0 else None
    except (OSError, ValueError):
        return None


def cgroup_cpu(pid: int) -> tuple[float | None, int | None]:
    """The CPU limit over ``pid``: (the least quota of its cgroups in CPUs or None, their
    throttled periods so far, summed)."""
    chain = cgroup_chain(pid)
    quotas = [q for q, _ in chain.values() if q is not None]
    counts = [t for _, t in chain.values() if t is not None]
    return (min(quotas) if quotas else None), (sum(counts) if counts else None)


def read_throttled(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as fh:
            for line in fh:
                if line.startswith("nr_throttled "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def upstream_probe(pidfile: str) -> UpstreamProbe | None:
    """The upstream nginx's CPU seconds so far, its workers' cgroup limit and throttling."""
    worker = worker_pid(pidfile)
    if worker is None:
        return None
    quota, throttled = cgroup_cpu(worker)
    return UpstreamProbe(nginx_cpu_seconds(pidfile), quota, throttled)


def worker_pid(pidfile: str) -> int | None:
    """One worker of the nginx whose master ``pidfile`` names (the master itself when it
    has none; None: no such master): the workers' cgroup is the one that does the work."""
    try:
        with open(pidfile, encoding="ascii") as fh:
            master = int(fh.read().strip())
    except (OSError, ValueError):
        return None
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat, encoding="ascii", errors="replace") as fh:
                if int(fh.read().rsplit(")", 1)[1].split()[1]) == master:
                    return int(stat.split("/")[2])
        except (OSError, ValueError, IndexError):
            continue
    return master


def limit_probe(pidfile: str | None) -> Limits:
    """The cgroup CPU limits over this host's processes in the window, every cgroup once:
    this runner's (its load generator's, a child of it) and the nginx under test's
    (``pidfile``). Under a quota the CPUs look idle while these wait for it, so no busy
    share can say so."""
    pids = [os.getpid()]
    worker = worker_pid(pidfile) if pidfile else None
    if worker is not None:
        pids.append(worker)
    seen: Limits = {}
    for pid in pids:
        seen.update(cgroup_chain(pid))
    return seen


def limit_delta(before: Limits, after: Limits) -> UpstreamProbe | None:
    """The periods the limits throttled over the window, summed, and the quota that did
    (the least of the cgroups whose count rose; else the least there is). None: no
    cgroup has a limit."""
    quotas = {d: q for d, (q, _) in after.items() if q is not None}
    if not quotas:
        return None
    rose = {}
    for d, (_, thr) in after.items():
        was = before.get(d, (None, None))[1]
        if thr is not None and was is not None:
            rose[d] = thr - was
    hit = [quotas[d] for d, n in rose.items() if n > 0 and d in quotas]
    total = sum(rose.values()) if rose else None
    return UpstreamProbe(None, min(hit) if hit else min(quotas.values()), total)


def upstream_delta(
    before: UpstreamProbe | None, after: UpstreamProbe | None
) -> UpstreamProbe | None:
    if before is None or after is None or before.cpu_s is None or after.cpu_s is None:
        return None
    thr = (
        after.throttled - before.throttled
        if before.throttled is not None and after.throttled is not None
        else None
    )
    return UpstreamProbe(after.cpu_s - before.cpu_s, after.quota_cpus, thr)


def pid_alive(pidfile: str) -> bool:
    try:
        with open(pidfile, encoding="ascii") as fh:
            pid = int(fh.read().strip())
        os.kill(pid, 0)
        return True
    except (OSError, ValueError):
        return False


def start(cmd: Command) -> subprocess.Popen[str]:
    """Start one command, writing its ``stdin`` to it when it has one."""
    proc = subprocess.Popen(
        cmd.argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.PIPE if cmd.stdin is not None else None,
        text=True,
    )
    if cmd.stdin is not None and proc.stdin is not None:
        proc.stdin.write(cmd.stdin)
        proc.stdin.close()
        proc.stdin = None  # communicate() must not touch it again
    return proc


def run_after(argv: list[str]) -> CommandOutput:
    """A follow-up command (a report of the results the main command wrote), bounded."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        return CommandOutput(argv, done.returncode, done.stdout, done.stderr[-2000:])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return CommandOutput(argv, -1, "", str(exc))


def sleep_until(t: float) -> None:
    while True:
        left = t - time.time()
        if left <= 0:
            return
        time.sleep(min(left, 0.5))


def start_time(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), or None when gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def pidfile_for(run: str) -> str:
    return os.path.join(HERE, f"loadgen-{run}-{os.getpid()}.pid")


def lead_group(run: str) -> str | None:
    """Lead a process group of our own (the load generators join it) and record it."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass  # already a group (or session) leader
    path: str | None = pidfile_for(run)
    try:
        fd = os.open(pidfile_for(run), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(f"{os.getpid()} {start_time(os.getpid()) or 0}\n")
    except OSError as exc:  # a full or read-only directory: no empty record left behind
        remove(pidfile_for(run))
        sys.stderr.write(f"loadgen: cannot record this runner in {HERE}: {exc}\n")
        path = None

    def stop(signum: int, frame: FrameType | None) -> None:
        if path:
            remove(path)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            os.killpg(os.getpgrp(), signal.SIGKILL)  # the generators, and this runner
        finally:
            os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, stop)
    return path


def remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def stop_run(run: str) -> None:
    """``--stop RUN``: kill the process group of every live runner of ``run``."""
    stopped: list[int] = []
    for path in glob.glob(os.path.join(HERE, f"loadgen-{run}-*.pid")):
        try:
            with open(path, encoding="ascii") as fh:
                pid, started = (int(v) for v in fh.read().split()[:2])
        except (OSError, ValueError):
            remove(path)
            continue
        if start_time(pid) == started and pid > 1:
            try:
                os.killpg(pid, signal.SIGKILL)
                stopped.append(pid)
            except OSError:
                pass
        remove(path)
    print(json.dumps({"stopped": stopped}))


def main() -> None:
    if sys.argv[1:2] == ["--stop"]:
        if len(sys.argv) != 3 or not sys.argv[2].replace("-", "").isalnum():
            sys.exit("usage: loadgen.py --stop RUN")
        stop_run(sys.argv[2])
        return
    spec = LoadSpec.from_json(json.loads(sys.argv[1]))
    run = spec.run
    pidfile = lead_group(run) if run.replace("-", "").isalnum() else None
    try:
        measure(spec)
    finally:
        if pidfile:
            remove(pidfile)


def run_commands(
    commands: list[Command], t0: float, duration: float, ports: list[int] | None
) -> tuple[list[CommandOutput], int | None]:
    """Run a window's commands in parallel, bounded in time; count the server's established
    connections at mid-window (the poll lets this side probe while they run)."""
    mid = t0 + duration / 2
    established = None
    procs = [start(cmd) for cmd in commands]
    limit = t0 + duration * 3 + 30
    while any(p.poll() is None for p in procs) and time.time() < limit:
        if established is None and ports and time.time() >= mid:
            established = established_count(ports)
        time.sleep(0.1)
    outs = []
    for cmd, proc in zip(commands, procs):
        if proc.poll() is None:
            proc.kill()
        so, se = proc.communicate()
        out = CommandOutput(cmd.argv, proc.returncode, so, se[-2000:])
        if cmd.then:
            out.then = [run_after(a) for a in cmd.then]
        outs.append(out)
    return outs, established


def softirq_delta(
    before: dict[str, dict[str, int]] | None, after: dict[str, dict[str, int]] | None
) -> dict[str, dict[str, int]] | None:
    if before is None or after is None:
        return None
    return {
        kind: {cpu: n - before.get(kind, {}).get(cpu, 0) for cpu, n in counts.items()}
        for kind, counts in after.items()
    }


def window(
    spec: LoadSpec, index: int, offset: float, duration: float, commands: list[Command]
) -> WindowOutput:
    """Run one window at its offset after the common start and sample around it."""
    planned = spec.start_at + offset
    sleep_until(planned)
    before = cpu_times() if spec.sample_cpu else None
    net_before = net_bytes() if spec.sample_net else None
    t0 = time.time()
    for log in (spec.tls_log, spec.mix_log):
        if log:
            truncate(log)  # nginx appends (O_APPEND): the file now holds this window only
    throttle_before = throttle_count() if spec.pidfile else None
    nginx_before = nginx_cpu_seconds(spec.pidfile) if spec.pidfile else None
    up_before = upstream_probe(spec.upstream_pidfile) if spec.upstream_pidfile else None
    limit_before = limit_probe(spec.pidfile)
    sirq_before = net_softirqs() if spec.sample_net else None
    outs: list[CommandOutput] = []
    established = None
    if commands:
        outs, established = run_commands(commands, t0, duration, spec.ports)
    else:
        if spec.ports:
            sleep_until(t0 + duration / 2)
            established = established_count(spec.ports)
        sleep_until(t0 + duration)
    t1 = time.time()
    nginx_after = nginx_cpu_seconds(spec.pidfile) if spec.pidfile else None
    # Every counter is read at the window's end, before the wait for the side logs below:
    # read after it, the CPUs' shares would count 0.45 s of idle as part of the window
    # (a client busy through a 10 s window was shown 89% busy, below the client-bound line).
    cpu_after = cpu_times() if spec.sample_cpu else None
    net_after = net_bytes() if spec.sample_net else None
    sirq_after = net_softirqs() if spec.sample_net else None
    up_after = upstream_probe(spec.upstream_pidfile) if spec.upstream_pidfile else None
    limit = limit_delta(limit_before, limit_probe(spec.pidfile))
    tls = mix = None
    if spec.tls_log or spec.mix_log:
        # The side logs are buffered with flush=250ms (templates/nginx.conf.j2): the last
        # handshakes of the window are written by then. (Under load the 64k buffer fills and
        # is written several times a second whatever the flush is.)
        time.sleep(0.45)
        tls = tls_counts(spec.tls_log) if spec.tls_log else None
        mix = mix_counts(spec.mix_log) if spec.mix_log else None
    return WindowOutput(
        index=index,
        planned_start=planned,
        start=t0,
        end=t1,
        commands=outs,
        throttled=throttle_count() - throttle_before if throttle_before is not None else None,
        upstream=upstream_delta(up_before, up_after) if spec.upstream_pidfile else None,
        limit=limit,
        net_softirqs=softirq_delta(sirq_before, sirq_after),
        nginx_cpu_s=(
            nginx_after - nginx_before
            if nginx_before is not None and nginx_after is not None
            else None
        ),
        tls=tls,
        mix=mix,
        net_before=net_before,
        net_after=net_after,
        cpu_before=before,
        cpu_after=cpu_after,
        server_alive=pid_alive(spec.pidfile) if spec.pidfile else None,
        upstream_alive=pid_alive(spec.upstream_pidfile) if spec.upstream_pidfile else None,
        clk_tck=os.sysconf("SC_CLK_TCK"),
        established=established,
    )


def measure(spec: LoadSpec) -> None:
    results: list[WindowOutput] = []
    for win in spec.windows:
        out = window(spec, win.index, win.offset, win.duration, spec.window_commands(win))
        results.append(out)
        if out.server_alive is False or out.upstream_alive is False:
            break
    print(json.dumps(RunnerOutput(BEGAN, results).to_json()))


if __name__ == "__main__":
    main()
