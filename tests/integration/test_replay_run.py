"""``sizing run --workload DEMAND.yml`` on a local inventory: a real sweep replays the
demand's workload and stores a point of the customer-workload basis, with the closed
loop's comparison (issue 57). Drives load but asserts no figure: every verdict a busy
machine explains is accepted (``robust``); its run holds its own lock (write_inventory)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.model import Status, client_floor
from sizing.plan.workload_spec import load_workload
from sizing.store import Store
from tests.integration.localnginx import stop_nginx, write_inventory

pytestmark = [pytest.mark.integration, pytest.mark.robust]
runner = CliRunner()
DEMAND = """\
workload:
  role: web
  role_source: stated with --role
  size_field: bytes_sent
  sizes: [{upto: 1024, share: 0.5}, {upto: 16384, share: 0.3}, {upto: null, share: 0.2}]
  per_connection: [{from: 1, to: 1, share: 0.125}, {from: 2, to: 5, share: 0.362},
                   {from: 6, to: null, share: 0.513}]
  requests_per_connection: 8.0
  tls_share: 0.6
  resumption_share: 0.4
  status: {2xx: 1.0}
  assumed: []
  missing: []
"""
GUARDS = {"not-saturated", "client-bound", "unstable", "errors", "noisy", "mix-mismatch"}


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A world-readable temp dir: nginx workers (www-data) must read the content there."""
    path = Path(tempfile.mkdtemp(prefix="sizing-replay-"))
    path.chmod(0o755)
    yield path
    stop_nginx(path / "nginx.pid")
    shutil.rmtree(path, ignore_errors=True)


def test_run_workload_stores_a_point_of_the_customer_basis(tmp_path: Path, tools: None) -> None:
    inv = write_inventory(tmp_path, 28190, 28553)  # the resuming listener: 28554
    demand = tmp_path / "demand.yml"
    demand.write_text(DEMAND)
    key = load_workload(demand)[1]
    db = tmp_path / "results.sqlite"
    args = ["run", "-i", str(inv), "--cores", "1", "--workload", str(demand)]
    args += ["--duration", "2", "--warmup", "1", "--repeat", "3", "--db", str(db), "--json"]
    run = runner.invoke(app, args)
    assert run.exit_code == 0, run.output
    assert [p["profile"] for p in json.loads(run.stdout)["points"]] == [key]
    with Store.open_readonly(db) as store:
        (stored,) = store.points(1)
    result = stored.result
    assert result.key.profile == key and result.unit == "requests/s"
    assert result.status.value in ("measured", "invalid"), result
    assert (result.status.value == "invalid") == bool(GUARDS & set(result.flags)), result
    assert result.metadata.workload.customer == key
    replay = result.metadata.replay
    assert replay is not None and replay.key == key and replay.requests_logged > 0
    assert {r.figure for r in replay.rows} >= {"requests per connection", "TLS share"}
    assert ("mix-mismatch" in result.flags) == (not replay.ok)
    assert "(yours 8.0)" in replay.words and "(yours 60%)" in replay.words
    # a point that sizes (valid, or client-bound alone: a lower bound) is what `recommend`
    # sizes on when asked for its basis, "≥" when it is a lower bound (issue 57; on this
    # 2-core VM the replay is client-bound when the machine is quiet, not-saturated when not)
    if result.status is Status.MEASURED or client_floor(result):
        listed = runner.invoke(app, ["results", "--bases", "--db", str(db), "--json"])
        (mine,) = [b for b in json.loads(listed.stdout)["bases"] if b["origin"] == "measured"]
        assert mine["id"].endswith(f"/{key}"), mine["id"]
        asked = ["recommend", "--rps", "1000", "--basis", mine["id"], "--db", str(db)]
        got = runner.invoke(app, [*asked, "--include-virtualized", "--article-prices", "--json"])
        assert got.exit_code == 0, got.output
        doc = json.loads(got.stdout)
        assert doc["basis"]["ids"] == [mine["id"]]
        (fig,) = doc["recommendation"]["figures"]
        assert (fig["bound"] == "lower") == client_floor(result), fig
