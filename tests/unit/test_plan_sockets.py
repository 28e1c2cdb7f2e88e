"""`sizing run --plan` on a two-socket host says where the socket boundary falls: the
server takes socket 0 first, then the next, and the client cores are never a server
core's (issue 44: the 16/24/32-core points customers' servers need). Offline: the example
KVM lab (2 × 20-core Xeon Gold 6248, declared) is read in an empty network namespace."""

from __future__ import annotations

from tests.offline import check_offline

PLAN = """
import sys
from typer.testing import CliRunner
from sizing.cli import app
res = CliRunner().invoke(app, ["run", "-i", "inventories/kvm-lab.yml", "--plan", "--cores",
    sys.argv[1], "--ht", "off", "--profile", "rps", "--db", sys.argv[2]])
assert res.exit_code == 0, res.output
print(res.stdout)
"""


def _plan(cores: str, tmp_path) -> str:  # type: ignore[no-untyped-def]
    out = check_offline(PLAN, cores, str(tmp_path / "plan.db"))
    return " ".join(out.split())  # the summary wraps at 100 columns


def test_the_plan_says_which_points_stay_on_one_socket_and_which_cross_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = _plan("8,16,20,24,32", tmp_path)
    assert "socket boundary: 2 sockets of 20 cores; nginx takes socket 0 first" in text
    assert "one socket: 8c, 16c, 20c; across sockets (NUMA): 24c, 32c" in text
    assert "24c HT off 0-23" in text  # socket 0's 20 cores, then 4 of socket 1's


def test_a_plan_within_one_socket_names_the_counts_that_would_cross_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = _plan("1,2,4,8", tmp_path)
    assert "across sockets (NUMA): none" in text
    assert "to size two-socket servers add counts across it, e.g. --cores 16,20,32,40" in text
