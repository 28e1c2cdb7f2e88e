"""``recommend --demand`` and ``guide --demand`` size on the replay of the demand's own
workload (issue 57): when the lab replayed that very mix (the demand file's workload key),
its figures size the demand before any profile's, and every rendering names that basis;
another customer's replay, or an invalid one, does not. Real SQLite stores filled through
the Store API (simulated figures, no load), and the demand file written by ``sizing
demand`` as typed."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from sizing.cli import app
from sizing.demand.file import load_demand
from sizing.model import Status
from tests.unit.test_sources import REPS, point
from tests.unit.test_stored_profile import _fill, _named, _profile

runner = CliRunner()
T0 = 1_764_300_000
FMT = (
    '$remote_addr [$time_local] "$request" $status $bytes_sent $msec $request_time'
    " $connection_requests $ssl_session_reused"
)


def _demand(tmp_path: Path, role: str = "static", tls: bool = False) -> Path:
    lines = []
    for s in range(60):
        ts = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(T0 + s))
        for k in range(8):
            size = (300, 3000, 30000)[k % 3]
            reused = "." if k % 2 else "r" if k % 3 else "-"
            if tls and k % 4 == 0:  # a connection's first request: full handshakes too
                reused = "." if k == 0 else "r"
            lines.append(
                f'203.0.113.9 [{ts}] "GET / HTTP/1.1" 200 {size} {T0 + s}.5 0.001'
                f" {k % 4 + 1} {reused}\n"
            )
    log = tmp_path / "access.log"
    log.write_text("".join(lines))
    out = tmp_path / "demand.yml"
    got = runner.invoke(
        app, ["demand", str(log), "--log-format", FMT, "--role", role, "-o", str(out)]
    )
    assert got.exit_code == 0, got.output
    return out


def _lab(db: Path, key: str, *, valid: bool = True, factor: float = 0.3) -> None:
    points: list[Any] = []
    defs = [_profile("static-rps", "requests_per_second")]
    for cores in (1, 2, 4):
        reps = [v * cores for v in REPS]
        points.append(
            _named(point("r640-01", "baremetal", cores, "rps", reps, role="web"), "static-rps")
        )
        replay = point(
            "r640-01",
            "baremetal",
            cores,
            "rps",
            [v * factor for v in reps],
            role="web",
            tool="vegeta-replay",
            file_size=0,
            customer=key,
            status=Status.MEASURED if valid else Status.INVALID,
            flags=() if valid else ("mix-mismatch",),
        )
        points.append(_named(replay, key))
    definition = {**_profile(key, "requests_per_second"), "generator": "vegeta-replay"}
    _fill(db, points, [*defs, {**definition, "file_size": 0, "workload": "{}"}])


def test_the_demands_own_replay_sizes_it_and_every_rendering_names_it(tmp_path: Path) -> None:
    demand = _demand(tmp_path)
    mix = load_demand(demand).workload
    assert mix is not None
    key = mix.key()
    db = tmp_path / "sizing.sqlite"
    _lab(db, key)
    basis = f"r640-01/baremetal/{key}"
    args = ["--demand", str(demand), "--db", str(db), "--article-prices"]
    doc = json.loads(runner.invoke(app, ["recommend", *args, "--json"]).stdout)
    assert doc["basis"]["ids"] == [basis]
    assert "your own workload, replayed in the lab" in doc["basis"]["why"]
    text = runner.invoke(app, ["recommend", *args])
    assert text.exit_code == 0, text.output
    assert basis in " ".join(text.stdout.split())
    md = runner.invoke(app, ["guide", *args, "--format", "md", "--out", "-"])
    assert md.exit_code == 0, md.output
    assert basis in md.stdout
    # the traffic chapter says the mix was measured, not carried over from the article's
    flat = " ".join(md.stdout.split())
    assert "This guide is sized on your own mix, replayed in the lab" in flat
    assert "an upper bound on cost" not in flat
    # --rps alone (no demand file): the replay is the customer's, never switched to
    plain = json.loads(
        runner.invoke(app, ["recommend", "--rps", "5000", "--db", str(db), "--json"]).stdout
    )
    assert basis not in plain["basis"]["ids"]


def test_a_tls_demand_is_sized_on_its_replay_by_requests_alone(tmp_path: Path) -> None:
    """A demand with full TLS handshakes (nearly every customer's): the replay served them in
    the customer's share, so its RPS figure sizes the demand alone, said so; the handshakes
    are not counted again on a TPS figure (nor does a replay without one fail to serve)."""
    demand = _demand(tmp_path, tls=True)
    d = load_demand(demand)
    assert d.full_handshakes is not None and d.full_handshakes.peak > 0
    key = d.workload.key()  # type: ignore[union-attr]
    db = tmp_path / "sizing.sqlite"
    _lab(db, key)
    args = ["--demand", str(demand), "--db", str(db), "--article-prices"]
    got = runner.invoke(app, ["recommend", *args, "--json"])
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    assert doc["basis"]["ids"] == [f"r640-01/baremetal/{key}"]
    assert doc["demand"]["tps"] is None and doc["demand"]["rps"] == d.requests.peak
    text = runner.invoke(app, ["recommend", *args])
    assert "sized on your requests per second alone" in " ".join(text.output.split())


def test_another_workloads_replay_or_an_invalid_one_does_not_size_the_demand(
    tmp_path: Path,
) -> None:
    demand = _demand(tmp_path)
    key = load_demand(demand).workload.key()  # type: ignore[union-attr]
    other = tmp_path / "other.sqlite"
    _lab(other, "customer-000000000000")
    args = ["--demand", str(demand), "--article-prices", "--json"]
    doc = json.loads(runner.invoke(app, ["recommend", *args, "--db", str(other)]).stdout)
    assert not any(i.endswith("customer-000000000000") for i in doc["basis"]["ids"])
    bad = tmp_path / "bad.sqlite"
    _lab(bad, key, valid=False)
    doc = json.loads(runner.invoke(app, ["recommend", *args, "--db", str(bad)]).stdout)
    assert not any(key in i for i in doc["basis"]["ids"])  # a mix-mismatch is never sized


def test_a_replay_that_cannot_size_is_said(tmp_path: Path) -> None:
    """The replay of the demand's workload on a virtualized host (a container or VM measured
    as bare metal) is left out unless asked: the refusal names it and why; with
    --include-virtualized it sizes the demand."""
    demand = _demand(tmp_path)
    key = load_demand(demand).workload.key()  # type: ignore[union-attr]
    db = tmp_path / "vm.sqlite"
    _lab(db, key, valid=True)
    import sqlite3

    con = sqlite3.connect(db)
    con.execute("UPDATE points SET flags = '[\"virtualized-host\"]'")
    con.commit()
    con.close()
    args = ["--demand", str(demand), "--article-prices", "--db", str(db)]
    got = runner.invoke(app, ["recommend", *args])
    # nothing of the role qualifies either: one line, naming the replay and why
    assert got.exit_code == 2, got.output
    assert f"{key}: virtualized host" in got.output
    # the run that would replay it names the demand file as given
    assert f"--workload {demand}`" in " ".join(got.output.split())
    sized = runner.invoke(app, ["recommend", *args, "--include-virtualized", "--json"])
    assert sized.exit_code == 0, sized.output
    assert json.loads(sized.stdout)["basis"]["ids"] == [f"r640-01/virtualized-host/{key}"]


def test_the_demand_file_and_the_replay_name_one_workload(tmp_path: Path) -> None:
    """The key recommend looks for (the demand file's reader) is the key the replay stores
    its points under (the replay's reader of the same file), numbers spelt either way."""
    from sizing.plan.workload_spec import load_workload

    demand = _demand(tmp_path)
    mix, key = load_workload(demand)
    assert load_demand(demand).workload.key() == key == mix.key()  # type: ignore[union-attr]
    text = demand.read_text().replace("share: 1.0", "share: 1")
    respelt = tmp_path / "respelt.yml"
    respelt.write_text(text)
    assert load_workload(respelt)[1] == key


def test_both_readers_of_a_demand_file_refuse_the_same_sizes_and_bodies_stay_bounded() -> None:
    from sizing.demand.file import MAX_BYTES
    from sizing.plan.replay import MAX_FILE_BYTES, body_size
    from sizing.plan.workload_spec import MAX_DEMAND_BYTES

    assert MAX_DEMAND_BYTES == MAX_BYTES
    from sizing.plan.workload_spec import MAX_CLASS_BYTES

    # a class of 1 to 4 MiB is served at its middle, not at its lower edge
    assert body_size(1 << 20, 4 << 20, "body_bytes_sent") == 2 << 20
    # the open class above 4 MiB just above its edge; nothing beyond what the readers allow
    assert body_size((4 << 20) + 1, None, "body_bytes_sent") == (4 << 20) + 1
    assert body_size(0, None, "body_bytes_sent") <= MAX_FILE_BYTES
    assert body_size(MAX_CLASS_BYTES, None, "body_bytes_sent") == MAX_CLASS_BYTES
