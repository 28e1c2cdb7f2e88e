"""Reading the example labs without a network.

The example labs (inventories/lab.yml, kvm-lab.yml, esxi-lab.yml) name hosts that must never
be contacted (10.x, 192.0.2.x, *.example). A test that reads them runs its code in a child
Python in a new, empty network namespace (``unshare -n``): nothing it does can reach a host.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest


def unshare_n() -> str:
    """The unshare binary, or skip the test when this machine cannot make a network namespace."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-n", "true"]).returncode != 0:
        pytest.skip("unshare -n is not available here (needs root or user namespaces)")
    return unshare


def check_offline(code: str, *args: str) -> str:
    """Run ``code`` (its asserts included) in a child Python without a network; fail the test
    with the child's traceback when it fails. Returns what the child printed."""
    proc = subprocess.run(
        [unshare_n(), "-n", sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
