"""The simulated lab database of the tests and benchmarks, under the name they import it by.

The builder is ``examples/labdb.py``: ``examples/simulated.py`` writes the docs' lab stores
with it, and an example script imports nothing of ``tests/``. The figures are simulated,
never shown as measurements of real hardware.
"""

from __future__ import annotations

from examples.labdb import (
    CORES,
    GOLD,
    KINDS,
    TRUTH,
    Stored,
    build_lab,
    environment,
    lab_points,
    lscpu,
    store_run,
    truth,
    usl,
)

__all__ = [
    "CORES",
    "GOLD",
    "KINDS",
    "TRUTH",
    "Stored",
    "build_lab",
    "environment",
    "lab_points",
    "lscpu",
    "store_run",
    "truth",
    "usl",
]
