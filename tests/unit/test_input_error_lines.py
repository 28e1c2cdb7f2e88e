"""A file with thousands of problems is refused in a bounded number of lines: an inventory of
100,000 hosts that all name one address printed 200,000 lines on stderr (one duplicate-host
line each). The message lists the first problems and how many more; ``problems`` keeps every
one. The inventory names documentation addresses and is read without a network."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sizing.errors import InputError
from tests.offline import check_offline


@given(n=st.integers(min_value=1, max_value=500))
def test_the_message_lists_at_most_the_first_problems_and_counts_the_rest(n: int) -> None:
    problems = [f"host h{i}: problem {i}" for i in range(n)]
    exc = InputError("inv.yml", problems)
    lines = str(exc).splitlines()
    assert exc.problems == problems
    shown = min(n, InputError.SHOWN)
    if n == 1:
        assert lines == ["inv.yml: host h0: problem 0"]
        return
    assert lines[1 : shown + 1] == [f"  - {p}" for p in problems[:shown]]
    if n > shown:
        assert lines[-1] == f"  - and {n - shown:,} more problem{'s' if n - shown > 1 else ''}" + (
            f" (the first {shown} are listed)"
        )
    assert len(lines) <= InputError.SHOWN + 2


_CHECK = """
import sys
from typer.testing import CliRunner
from sizing.cli import app
res = CliRunner().invoke(app, ["inventory", "check", sys.argv[1]])
print(res.exit_code)
print(res.stderr, end="")
"""


def test_a_thousand_servers_at_one_address_are_refused_in_a_screenful(tmp_path: Path) -> None:
    inv = tmp_path / "hosts.yml"
    inv.write_text(
        "all:\n  children:\n    servers:\n      hosts:\n        web[000:999]:\n"
        "          ansible_host: 192.0.2.10\n"
        "    clients:\n      hosts:\n        load1: {ansible_host: 192.0.2.20}\n"
    )
    code, _, err = check_offline(_CHECK, str(inv)).partition("\n")
    assert code == "3"
    assert err.startswith(f"error: {inv}:\n  - host web001: duplicate host:")
    assert err.rstrip().endswith("  - and 979 more problems (the first 20 are listed)")
    assert len(err.splitlines()) < 50
