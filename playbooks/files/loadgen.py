#!/usr/bin/env python3
"""Run timed load windows on one host and print one JSON document (stdlib only).

Copied to every server and client host by playbooks/clients.yml and started by
playbooks/load.yml with one argument: a JSON spec. All hosts of a point receive the same
``start_at`` (epoch seconds), so their windows begin together whatever Ansible's fan-out
delay was; the real start of each window is recorded so the skew can be stored.

Spec: {"start_at": float, "windows": [{"index": int, "offset": float, "duration": float}],
       "windows[i].commands" or "commands": [[argv...], ...],  # run in parallel (clients)
       "sample_cpu": bool,              # /proc/stat before and after every window
       "pidfile": str | null}           # check that this nginx master still lives
Nothing here builds a shell string: commands are argv lists.
"""

import json
import os
import subprocess
import sys
import time


def cpu_times():
    out = {}
    with open("/proc/stat", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("cpu") and line[3:4].isdigit():
                parts = line.split()
                out[parts[0][3:]] = [int(v) for v in parts[1:]]
    return out


def pid_alive(pidfile):
    try:
        with open(pidfile, encoding="ascii") as fh:
            pid = int(fh.read().strip())
        os.kill(pid, 0)
        return True
    except (OSError, ValueError):
        return False


def sleep_until(t):
    while True:
        left = t - time.time()
        if left <= 0:
            return
        time.sleep(min(left, 0.5))


def main():
    spec = json.loads(sys.argv[1])
    start_at = float(spec["start_at"])
    results = []
    for win in spec["windows"]:
        commands = win.get("commands") or spec.get("commands", [])
        planned = start_at + float(win["offset"])
        sleep_until(planned)
        before = cpu_times() if spec.get("sample_cpu") else None
        t0 = time.time()
        outs = []
        if commands:
            procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True) for argv in commands]
            limit = float(win["duration"]) * 3 + 30
            for argv, proc in zip(commands, procs):
                try:
                    so, se = proc.communicate(timeout=max(1.0, t0 + limit - time.time()))
                except subprocess.TimeoutExpired:
                    proc.kill()
                    so, se = proc.communicate()
                outs.append({"argv": argv, "rc": proc.returncode, "stdout": so, "stderr": se[-2000:]})
        else:
            sleep_until(t0 + float(win["duration"]))
        t1 = time.time()
        after = cpu_times() if spec.get("sample_cpu") else None
        alive = pid_alive(spec["pidfile"]) if spec.get("pidfile") else None
        results.append({"index": win["index"], "planned_start": planned, "start": t0, "end": t1,
                        "cpu_before": before, "cpu_after": after, "commands": outs,
                        "server_alive": alive, "clk_tck": os.sysconf("SC_CLK_TCK")})
        if alive is False:
            break
    print(json.dumps({"windows": results}))


if __name__ == "__main__":
    main()
