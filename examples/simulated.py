#!/usr/bin/env python3
"""Write the SIMULATED results databases that docs/ceilings.md, engine.md and recommend.md size on.

No figure in them was measured: each point's repetitions are made-up numbers around a chosen
curve, stored through sizing's own Store API as a run stores them, so that a reader can run
the pages' commands as printed. Everything they say carries the word: the host (and so
every basis) is ``simulated-r640``, its run's inventory says ``SIMULATED``, and every point
is flagged ``simulated``. A reader's own figures come from ``sizing run``; these never do.

    .venv/bin/python examples/simulated.py            # writes .cache/examples/*.sqlite
    .venv/bin/python examples/simulated.py --out DIR  # elsewhere

The stores (``tests/unit/test_docs.py`` builds the same ones to run the pages):

- ``ceilings.sqlite``: TLS handshakes at 1, 2 and 4 cores (about 1,000, 1,950 and 3,800/s,
  9 repetitions each) on a Xeon Silver 4110, with a crypto ceiling of 1,000 signs/s per core;
- ``ceiling-bound.sqlite``: the same figures with a ceiling of 500/s per core (as a stubbed
  openssl reports in ``tests/integration/test_ceiling.py``): above the ceiling, held down;
- ``contended.sqlite``: requests at 30,000, 57,000 and 100,000/s at 1, 2 and 4 cores (3
  repetitions each): a series that bends under contention.

and the labs of docs/recommend.md, made by ``examples/labdb.py`` (the tests' lab, its figures
drawn around known curves), every host's name starting ``simulated-``:

- ``lab.sqlite``: a PowerEdge ``simulated-r640-01`` (Xeon Gold 6248, 2 x 20 cores) and its
  ESXi guest, ``rps`` and ``tps`` at 1, 2, 4 and 8 cores, HT off and on, 10 repetitions;
- ``gateway-lab.sqlite``: that host alone, HT off, load balancing and an API gateway's calls
  (``api-jwt``), its inventory declaring a price of $9,000; ``lb-lab.sqlite``: the same
  without the gateway's calls;
- ``roles-lab.sqlite``: the host with ESXi and KVM guests, two runs: load balancing, then a
  reverse proxy (5 repetitions each).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from examples.labdb import build_lab  # noqa: E402
from sizing.model import PointKey, PointResult, Sample, Status  # noqa: E402
from sizing.records import PointMeta, SampleMeta  # noqa: E402
from sizing.store import Store  # noqa: E402

HOST = "simulated-r640"
FLAG = "simulated"  # on every point: no output can show one of these figures as measured
CPU = "Intel(R) Xeon(R) Silver 4110 CPU @ 2.10GHz"
OUT = ROOT / ".cache" / "examples"
# the figures around each curve: a tight spread, so that intervals are narrow and stated
TPS_REPS = (1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0, 998.0, 1003.0, 997.0)


def _lscpu(sockets: int, cores: int, threads: int) -> str:
    lines = ["# CPU,Core,Socket,Node"]
    cpu = 0
    for _ in range(threads):
        for s in range(sockets):
            for c in range(cores):
                lines.append(f"{cpu},{s * cores + c},{s},{s}")
                cpu += 1
    return "\n".join(lines) + "\n"


def _environment(ceiling: float | None) -> dict[str, Any]:
    env: dict[str, Any] = {
        "cpu_model": CPU,
        "lscpu": _lscpu(2, 8, 2),
        "nginx_version": "1.22.1",
        "nginx_openssl": "3.0.11",
        "declared": {},
    }
    if ceiling is not None:
        env["ceilings"] = {
            "openssl": "OpenSSL 3.0.19 27 Jan 2026",
            "crypto": [{"alg": "rsa2048", "cpus": "0", "threads": 1, "sign_per_s": ceiling}],
        }
    return env


def _point(cores: int, profile: str, reps: Sequence[float]) -> tuple[PointResult, list[Any]]:
    """One point as the sweep stores it: a warm-up, then each timed repetition."""
    unit = "requests/s" if profile == "rps" else "handshakes/s"
    metric = "requests_per_second" if profile == "rps" else "handshakes_per_second"
    median = sorted(reps)[len(reps) // 2]
    samples = [(0, Sample(metric, reps[0] * 0.9, unit, SampleMeta.parse({"warmup": True})))]
    for i, v in enumerate(reps, start=1):
        timed = SampleMeta.parse({"repetition": i, "warmup": False})
        samples.append((i, Sample(metric, v, unit, timed)))
        client = SampleMeta.parse({"client": "simulated-client"})
        samples.append((i, Sample(f"{metric}.client", v, unit, client)))
    meta = {
        "host": HOST,
        "file_size": 128,
        "keepalive": profile == "rps",
        "tls_key": "rsa2048" if profile == "tps" else None,
        "nginx_version": "1.22.1",
        "openssl_version": "3.0.11",
        "cpu_model": CPU,
        "platform_settings": {},
    }
    result = PointResult(
        key=PointKey(HOST, "baremetal", cores, "off", profile),
        status=Status.MEASURED,
        value=median,
        unit=unit,
        repetitions=len(reps),
        ci_low=min(reps),
        ci_high=max(reps),
        flags=(FLAG,),
        metadata=PointMeta.parse(meta),
    )
    return result, samples


INVENTORY = "SIMULATED: no figure was measured (made up by simulated.py in examples)"


def _write(db: Path, env: dict[str, Any], points: list[tuple[PointResult, list[Any]]]) -> Path:
    db.parent.mkdir(parents=True, exist_ok=True)
    db.unlink(missing_ok=True)  # a store is appended to: start each one empty
    with Store(db) as store:
        run_id = store.start_run(
            inventory=INVENTORY,
            argv=["examples/simulated.py"],
            tool_version="simulated",
            options={},
        )
        store.set_environment(run_id, {HOST: env})
        for result, samples in points:
            store.add_point(run_id, result, samples)
        store.finish_run(run_id, "complete")
    return db


def tps_store(db: Path, per_core: float) -> Path:
    """TLS handshakes at 1, 2 and 4 cores with a crypto ceiling of ``per_core``."""
    points = [
        _point(n, "tps", [v * k for v in TPS_REPS]) for n, k in ((1, 1.0), (2, 1.95), (4, 3.8))
    ]
    return _write(db, _environment(per_core), points)


def contended_store(db: Path) -> Path:
    """Requests at 30k / 57k / 100k per second at 1 / 2 / 4 cores, 3 repetitions each."""
    points = [
        _point(n, "rps", [v * 0.99, v, v * 1.01])
        for n, v in ((1, 30_000.0), (2, 57_000.0), (4, 100_000.0))
    ]
    return _write(db, _environment(None), points)


# a lab store's inventory: one word, because the run an answer names to size a server on its
# own figures is typed with it (``sizing run -i SIMULATED --cores 20,40``), and it says it
LAB_INVENTORY = "SIMULATED"


def lab_store(db: Path, *runs: dict[str, Any]) -> Path:
    """The tests' lab (``examples/labdb.py``), one run per ``runs`` entry (its keywords),
    every host ``simulated-...`` and every point flagged ``simulated``."""
    db.parent.mkdir(parents=True, exist_ok=True)
    db.unlink(missing_ok=True)
    for kw in runs:
        build_lab(
            db,
            inventory=LAB_INVENTORY,
            argv=["examples/simulated.py"],
            tool_version="simulated",
            prefix="simulated-",
            flags=(FLAG,),
            **kw,
        )
    return db


# the gateway's lab: the host alone, HT off, load balancing (and its calls), priced
GATEWAY: dict[str, Any] = {
    "guests": False,
    "ht": ("off",),
    "role": "load-balance",
    "price_usd": 9000.0,
}

STORES: dict[str, Callable[[Path], Path]] = {
    "ceilings": lambda db: tps_store(db, 1000.0),
    "ceiling-bound": lambda db: tps_store(db, 500.0),
    "contended": contended_store,
    "lab": lambda db: lab_store(db, {"role": "load-balance"}),
    "gateway-lab": lambda db: lab_store(db, {**GATEWAY, "profiles": ("rps", "tps", "api-jwt")}),
    "lb-lab": lambda db: lab_store(db, GATEWAY),
    "roles-lab": lambda db: lab_store(
        db,
        *(
            {"reps": 5, "kvm": True, "role": r, "seed": s}
            for s, r in ((1, "load-balance"), (2, "proxy"))
        ),
    ),
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="directory (default: %(default)s)")
    args = parser.parse_args(argv)
    out: Path = args.out
    for name, build in STORES.items():
        db = build(out / f"{name}.sqlite")
        shown = db.relative_to(ROOT) if db.is_relative_to(ROOT) else db
        print(f"wrote {shown} (SIMULATED: no figure in it was measured)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
