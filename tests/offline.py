"""Reading the example labs without a network.

The example labs (inventories/lab.yml, kvm-lab.yml, esxi-lab.yml) name hosts that must never
be contacted (10.x, 192.0.2.x, *.example). A test that reads them runs its code in a child
Python in a new, empty network namespace (``unshare -n``): nothing it does can reach a host.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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


# An example lab's inventory named on a command line: the command runs without a network.
LAB_INVENTORY = re.compile(r"inventories/(?:lab|kvm-lab|esxi-lab)\.yml")


@dataclass(frozen=True)
class Ran:
    """What a ``sizing`` command printed and its exit status (CliRunner's result's shape)."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def names_a_lab(argv: Sequence[str]) -> bool:
    return any(LAB_INVENTORY.search(a) for a in argv)


def sizing_offline(argv: Sequence[str], env: Mapping[str, str] | None = None) -> Ran:
    """``sizing ARGV`` in a child process in a new, empty network namespace (``unshare
    -n``), from the repository's root: for a command that reads an example lab."""
    proc = subprocess.run(
        [unshare_n(), "-n", sys.executable, "-m", "sizing", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    return Ran(proc.returncode, proc.stdout, proc.stderr)
