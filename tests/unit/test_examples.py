"""Issue 62: the files the docs' commands read exist in the repository, are synthetic, and
are what examples/generate.py writes (the demand file as this sizing's `sizing demand`
writes it), so a page's example cannot drift from the file it names."""

from __future__ import annotations

import re
import subprocess
import sys

from sizing.paths import ROOT
from tests.unit.test_docs import ALL

EXAMPLES = ROOT / "examples"


def test_the_example_files_are_what_the_generator_writes() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "generate.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_the_example_logs_hold_no_routable_address() -> None:
    # synthetic: every client address is in RFC 5737's documentation ranges
    for name in ("access.log", "access-rich.log"):
        addrs = {line.split(" ", 1)[0] for line in (EXAMPLES / name).read_text().splitlines()}
        assert addrs and all(re.fullmatch(r"(198\.51\.100|203\.0\.113)\.\d+", a) for a in addrs)


def test_every_file_a_documented_command_names_exists() -> None:
    named = {w for e in ALL for w in re.findall(r"\b(?:examples|profiles)/[\w./-]+", e.command)}
    assert named, "no page names an example file"
    assert sorted(w for w in named if not (ROOT / w).exists()) == []
