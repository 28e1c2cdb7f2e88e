#!/usr/bin/env python3
"""Measure private-key operation rates with `openssl speed` (stdlib only).

Run on a server host by playbooks/ceiling.yml. Its one argument lists the jobs as
ALG:CPUS:THREADS separated by spaces (e.g. "rsa2048:0:1 rsa2048:0,1:2"): each runs
`taskset -c CPUS openssl speed -mr -seconds 1 [-multi THREADS] ALG`. Prints one JSON
document: the `openssl version` of the binary measured and each job's output, which sizing
parses (sizing/load/openssl_speed.py). No openssl binary is said, not guessed around.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time


def speed_argv(taskset: str, openssl: str, alg: str, cpus: str, threads: int) -> list[str]:
    """`taskset -c CPUS openssl speed -mr -seconds 1 [-multi THREADS] ALG` (ALG: openssl's
    name, rsa2048 or ecdsap256): the one argv a ceiling is measured with."""
    argv = [taskset, "-c", cpus, openssl, "speed", "-mr", "-seconds", "1"]
    if threads > 1:
        argv += ["-multi", str(threads)]
    return argv + [alg]


def main() -> None:
    jobs = [j.split(":") for j in (sys.argv[1] if len(sys.argv) > 1 else "").split()]
    openssl = shutil.which("openssl")
    taskset = shutil.which("taskset")
    done_jobs: list[dict[str, object]] = []
    out: dict[str, object] = {"openssl": None, "jobs": done_jobs, "missing": ""}
    if openssl is None:
        out["missing"] = "no openssl binary on the host's PATH"
    elif taskset is None:
        out["missing"] = "no taskset on the host (util-linux) to pin openssl speed"
    else:
        ver = subprocess.run([openssl, "version"], capture_output=True, text=True, timeout=10)
        out["openssl"] = ver.stdout.strip()
        for alg, cpus, threads in jobs:
            argv = speed_argv(taskset, openssl, alg, cpus, int(threads))
            t0 = time.monotonic()
            try:
                done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
                rc, stdout, stderr = done.returncode, done.stdout, done.stderr
            except subprocess.TimeoutExpired:
                rc, stdout, stderr = -1, "", "openssl speed ran over 60 s"
            done_jobs.append(
                {
                    "alg": alg,
                    "cpus": cpus,
                    "threads": int(threads),
                    "rc": rc,
                    "stdout": stdout[-4000:],
                    "stderr": stderr[-1000:],
                    "seconds": round(time.monotonic() - t0, 3),
                }
            )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
