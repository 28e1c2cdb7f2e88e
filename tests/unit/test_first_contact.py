"""Issue 15 part B: offline planning on declared facts, -e/--limit with Ansible's meaning,
./ansible.cfg for ansible-runner, tables that fit 100 columns, CSV, labels, N-run compare."""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.errors import UsageError
from sizing.extravars import parse_extra_vars
from sizing.inventory import load_inventory
from sizing.model import PointKey, PointResult, Sample, Status
from sizing.provision.ansible import ansible_config
from sizing.provision.facts import declared_facts, declared_topology
from sizing.records import PointMeta, SampleMeta
from sizing.report.data.evidence import Evidence, point_evidence
from sizing.report.render.points import WIDTH, no_valid_figure, points_csv, points_table
from sizing.store import Store
from tests.offline import check_offline

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventories" / "lab.yml"


def test_declared_topology_numbers_first_threads_then_siblings() -> None:
    topo = declared_topology(2, 8, 2)
    assert len(topo.cpus) == 32 and topo.sockets == 2 and topo.threads_per_core == 2
    # cpu 0 and cpu 16 are the two threads of socket 0's first core, as Linux numbers them
    assert topo.physical_cores()[0] == (0, 16)
    assert topo.physical_cores()[8] == (8, 24)  # socket 1's first core


def test_declared_facts_say_what_to_do_for_an_undeclared_host(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yml"
    inv.write_text(
        "all:\n  children:\n    servers:\n      hosts:\n        web:\n"
        "          ansible_host: 192.0.2.1\n"
        "          sizing_cpu: {sockets: 1, cores_per_socket: 4, threads_per_core: 1}\n"
        "    clients:\n      hosts:\n        load: {ansible_host: 192.0.2.2}\n"
    )
    facts, missing = declared_facts(list(load_inventory(inv).hosts.values()))
    assert facts["web"].raw["facts"] == "declared" and len(facts["web"].topology.cpus) == 4
    assert missing == {"load": "no sizing_cpu: declare sizing_cpu or use --probe"}


def test_offline_plan_of_a_host_without_sizing_cpu_says_so(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yml"
    inv.write_text(
        "all:\n  children:\n    servers:\n      hosts:\n        web: {ansible_host: 192.0.2.1}\n"
        "    clients:\n      hosts:\n        load: {ansible_host: 192.0.2.2,"
        " sizing_client_cpus: '0-3'}\n"
    )
    res = runner.invoke(
        app, ["run", "-i", str(inv), "--cores", "1", "--profile", "rps", "--plan", "--json"]
    )
    # nothing to measure: exit 1, with one line saying why (the document is still printed)
    assert res.exit_code == 1, res.output
    assert res.stderr.strip() == (
        "error: nothing to measure: every point is skipped: "
        "web: no sizing_cpu: declare sizing_cpu or use --probe"
    )
    doc = json.loads(res.stdout)
    assert doc["probed"] is False
    assert doc["nothing_to_measure"].startswith("every point is skipped")
    (point,) = doc["points"]
    assert point["status"] == "skipped"
    assert point["reason"] == "web: no sizing_cpu: declare sizing_cpu or use --probe"


def test_probe_needs_plan() -> None:
    res = runner.invoke(app, ["run", "--probe"])
    assert res.exit_code == 2 and "--probe reads the hosts for --plan" in res.stderr


def test_extra_vars_as_ansible_parses_them(tmp_path: Path) -> None:
    f = tmp_path / "vars.yml"
    f.write_text("a: from-file\nn: 3\n")
    assert parse_extra_vars(["a=1 b=two", f"@{f}", '{"c": [1, 2]}']) == {
        "a": "from-file",
        "b": "two",
        "n": 3,
        "c": [1, 2],
    }
    for bad, said in (
        ("[1]", "not a mapping"),
        ("./x.yml", "needs .@. before it"),
        ("@/nope", "no such"),
    ):
        with pytest.raises(UsageError, match=said):
            parse_extra_vars([bad])


def test_extra_vars_override_inventory_and_are_validated() -> None:
    check_offline(  # the example lab: read without a network (tests/offline.py)
        """
        import sys
        import pytest
        from sizing.errors import InputError
        from sizing.inventory import load_inventory
        inv = load_inventory(sys.argv[1], extra_vars={"sizing_price_usd": 1234})
        assert {h.sizing.price_usd for h in inv.servers} == {1234}
        with pytest.raises(InputError, match="sizing_nic_gbps"):
            load_inventory(sys.argv[1], extra_vars={"sizing_nic_gbps": "fast"})
        """,
        str(LAB),
    )


def test_limit_is_an_ansible_host_pattern() -> None:
    check_offline(
        """
        import sys
        import pytest
        from sizing.errors import InputError
        from sizing.inventory import load_inventory
        inv = load_inventory(sys.argv[1], limit="r640-01:clients:!loadgen-04")
        assert sorted(inv.hosts) == ["loadgen-01", "loadgen-02", "loadgen-03", "r640-01"], inv.hosts
        with pytest.raises(InputError, match="matches no host"):
            load_inventory(sys.argv[1], limit="nothing-like-this")
        with pytest.raises(InputError, match="no client host"):
            load_inventory(sys.argv[1], limit="servers")
        """,
        str(LAB),
    )


def test_ansible_cfg_of_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANSIBLE_CONFIG", raising=False)
    assert ansible_config(tmp_path) is None
    (tmp_path / "ansible.cfg").write_text("[defaults]\nforks = 37\n")
    assert ansible_config(tmp_path) == tmp_path / "ansible.cfg"
    os.chmod(tmp_path, 0o777)  # Ansible ignores ansible.cfg in a world-writable directory
    assert ansible_config(tmp_path) is None
    os.chmod(tmp_path, 0o755)
    monkeypatch.setenv("ANSIBLE_CONFIG", "/elsewhere.cfg")  # Ansible reads that itself
    assert ansible_config(tmp_path) is None


def _point(host: str, profile: str, status: Status = Status.MEASURED, **kw: object) -> PointResult:
    return PointResult(PointKey(host, "baremetal", 8, "on", profile), status, **kw)  # type: ignore[arg-type]


SAMPLES = [
    Sample(
        "requests_per_second", 100.0, "requests/s", SampleMeta.parse({"warmup": True, "errors": 99})
    ),
    *(
        Sample(
            "requests_per_second",
            v,
            "requests/s",
            SampleMeta.parse(
                {
                    "errors": 1,
                    "server_busy": b,
                    "client_cpu_busy": {"c1": 50.0, "c2": c},
                    "tls_full": 10,
                    "tls_reused": 0,
                }
            ),
        )
        for v, b, c in ((100.0, 98.0, 60.0), (102.0, 99.0, 70.0), (98.0, 97.0, 65.0))
    ),
    Sample("requests_per_second.client", 50.0, "requests/s", SampleMeta.parse({"errors": 1000})),
]


def test_evidence_from_the_timed_repetitions() -> None:
    r = _point(
        "web",
        "rps",
        value=100.0,
        unit="requests/s",
        ci_low=95.0,
        ci_high=105.0,
        metadata=PointMeta.parse({"latency_p99_ms": 4.5}),
    )
    ev = point_evidence(r, SAMPLES)
    assert ev.errors == 3 and ev.tls_full == 30 and ev.tls_reused == 0
    assert ev.server_cpu_pct == 98.0 and ev.client_cpu_pct == 65.0
    # the interval of the median, from the stored repetitions (98, 100, 102: their range,
    # 75%), not the interval stored with the point: one interval in every output
    assert ev.interval_pct == pytest.approx(2.0) and ev.latency_ms == {"p99": 4.5}
    assert ev.interval_coverage == 0.75 and ev.interval == "range of 3 runs, 75%"
    # --json shows the same figures under the same names
    doc = ev.to_json()
    assert (doc["errors"], doc["server_cpu_pct"], doc["interval"]) == (3, 98.0, ev.interval)


def test_points_table_fits_100_columns_and_verbose_gives_reasons_in_full() -> None:
    long_reason = "client-bound: the load generator's CPUs were busier than the server's " * 3
    pts = [
        _point(
            "r6525-01.lab.example.com",
            "rps",
            value=1234567.0,
            unit="requests/s",
            ci_low=1200000.0,
            ci_high=1260000.0,
            repetitions=5,
            spread=0.04,
            flags=("client-bound", "noisy", "virtualized-host"),
        ),
        _point("r6525-01.lab.example.com", "tps", Status.SKIPPED, reason=long_reason),
    ]
    ev = {pts[0].key: point_evidence(pts[0], SAMPLES)}
    table = points_table(pts, ev)
    assert all(len(line) <= WIDTH for line in table.splitlines()), table
    assert "±0.0% (75%)" in table and "98%" in table and "65%" in table and "3" in table
    verbose = points_table(pts, ev, verbose=True)
    # --verbose wraps rather than widens (issue 62): every reason in full, in 100 columns
    assert all(len(line) <= WIDTH for line in verbose.splitlines()), verbose
    assert " ".join(long_reason.split()) in " ".join(verbose.split())
    assert "spread 4.0%" in verbose  # spread in verbose only
    assert "4.0%" not in table


def test_csv_one_row_per_point() -> None:
    r = _point("web", "rps", value=100.0, unit="requests/s", flags=("noisy", "x"))
    rows = list(csv.DictReader(io.StringIO(points_csv([(3, "before", r, Evidence(errors=0))]))))
    assert len(rows) == 1
    assert rows[0]["run_id"] == "3" and rows[0]["label"] == "before"
    assert rows[0]["flags"] == "noisy;x" and rows[0]["errors"] == "0"


def _db(tmp_path: Path, labels: list[str]) -> Path:
    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        for i, label in enumerate(labels):
            run_id = store.start_run(
                inventory="i", argv=[], tool_version="t", options={"label": label}
            )
            store.set_environment(run_id, {"web": {"kernel": f"6.{i}"}})
            r = _point(
                "web",
                "rps",
                value=100.0 + 10 * i,
                unit="requests/s",
                ci_low=99.0 + 10 * i,
                ci_high=101.0 + 10 * i,
                repetitions=3,
            )
            store.add_point(run_id, r, list(enumerate(SAMPLES)))
            store.finish_run(run_id, "complete")
    return db


def test_results_labels_csv_and_compare_n_runs(tmp_path: Path) -> None:
    db = _db(tmp_path, ["before", "tuned", "after"])
    shown = runner.invoke(app, ["results", "--db", str(db), "--run", "tuned"])
    assert shown.exit_code == 0, shown.output
    assert "run 2 'tuned'" in shown.stdout and "run 1" not in shown.stdout
    assert all(len(line) <= WIDTH for line in shown.stdout.splitlines())
    out = tmp_path / "points.csv"
    res = runner.invoke(app, ["results", "--db", str(db), "--csv", "--out", str(out)])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(out.open()))
    assert [r["label"] for r in rows] == ["before", "tuned", "after"]
    cmp = runner.invoke(app, ["results", "--db", str(db), "--compare", "before", "2", "after"])
    assert cmp.exit_code == 0, cmp.output
    assert "run 1 vs run 3" in cmp.stdout and "+20.0%" in cmp.stdout
    doc = json.loads(
        runner.invoke(
            app, ["results", "--db", str(db), "--json", "--compare", "1", "2", "3"]
        ).stdout
    )
    assert [c["run_b"] for c in doc["comparisons"]] == [2, 3]
    jdoc = json.loads(runner.invoke(app, ["results", "--db", str(db), "--json"]).stdout)
    ev = jdoc["runs"][0]["points"][0]["evidence"]
    assert ev["errors"] == 3 and ev["client_cpu_pct"] == 65.0
    one = runner.invoke(app, ["results", "--db", str(db), "--compare", "1"])
    assert one.exit_code == 2 and "two or more runs" in one.stderr
    bad = runner.invoke(app, ["results", "--db", str(db), "--compare", "1", "nope"])
    assert bad.exit_code == 2 and "no run 'nope'" in bad.stderr


def test_results_bases_fit_100_columns(tmp_path: Path) -> None:
    res = runner.invoke(app, ["results", "--bases", "--db", str(tmp_path / "none.sqlite")])
    assert res.exit_code == 0, res.output
    table = res.stdout.split("\n\nbasis:")[0]
    assert all(len(line) <= WIDTH for line in table.splitlines()), table
    full = runner.invoke(app, ["results", "--bases", "-v", "--db", str(tmp_path / "n.sqlite")])
    # -v gives every field in full and still fits (issue 62: -v wraps rather than widens)
    assert "  software: " in full.stdout and "  default choice: " in full.stdout
    assert all(len(line) <= WIDTH for line in full.stdout.splitlines()), full.stdout


def test_a_run_with_no_valid_figure_says_what_would_give_one() -> None:
    """Issue 26: a 2-core machine's first run ends in one paragraph on stdout: what limited
    each point (server and client CPU), why (the upstream shared the client's core), and a
    command that gives a valid figure here. Nothing when a figure is valid."""
    shared = {
        "role": "load-balance",
        "upstreams": [{"host": "localhost", "cpus": "1", "shares_with": "client"}],
    }
    pts = [
        _point(
            "localhost",
            "rps",
            Status.INVALID,
            value=50197.0,
            unit="requests/s",
            flags=("not-saturated", "noisy", "virtualized-host"),
            metadata=PointMeta.parse(shared),
        ),
        _point("localhost", "tps", Status.SKIPPED, reason="needs 2 server cores"),
    ]
    ev = {pts[0].key: Evidence(server_cpu_pct=87.4, client_cpu_pct=98.9)}
    lines = no_valid_figure(pts, ev)
    text = " ".join(lines)
    assert all(len(x) <= WIDTH for x in lines)
    assert "rps at 8 cores: not-saturated (server 87% busy, client 99%)" in text
    assert "share the client's core" in text
    assert text.count("sizing run --cores 1 --profile static-rps,static-tps") == 1
    # the profiles it suggests exist
    from sizing import profiles

    assert profiles.load("static-rps").role == "web" and profiles.load("static-tps")
    # without a shared upstream, no claim about a small host; with a valid figure, nothing
    alone = [_point("h", "rps", Status.INVALID, flags=("client-bound",), metadata=PointMeta())]
    assert "share the client's core" not in " ".join(no_valid_figure(alone, {}))
    # issue 62: a run of the static-file profiles that gave no valid figure is not told to
    # run them again, but what to add
    web = PointMeta.parse({"role": "web"})
    static = [
        _point("localhost", "static-rps", Status.INVALID, flags=("not-saturated",), metadata=web)
    ]
    said = " ".join(no_valid_figure(static, {}))
    assert "--profile static-rps" not in said and "add a client host" in said
    valid = [*pts, _point("localhost", "static-rps", value=9.0e4, unit="requests/s")]
    assert no_valid_figure(valid, ev) == []
    assert "published reference data" in " ".join(no_valid_figure(pts, ev))


def test_a_client_bound_replay_is_said_to_size_as_a_lower_bound() -> None:
    """Issue 57 on a 2-core host: vegeta cannot saturate one nginx core with a customer's
    mix, so the replay is client-bound. `recommend` sizes on it as "≥" (ENGINE: a
    client-bound lower bound is a floor too): the run says so, and does not send the user
    to the static profiles, which are not the customer's workload."""
    key = "customer-0123456789ab"
    floor = _point(
        "localhost",
        key,
        Status.INVALID,
        value=10_411.0,
        unit="requests/s",
        flags=("client-bound", "not-saturated", "virtualized-host"),
        metadata=PointMeta(),
    )
    text = " ".join(no_valid_figure([floor], {}))
    assert f"{key} at 8c is a lower bound" in text
    assert "sizes on it as" in text and "published reference data" not in text
    assert "static-rps" not in text
    wrong = replace(floor, flags=("client-bound", "mix-mismatch"))  # not a floor: never sized
    assert "published reference data" in " ".join(no_valid_figure([wrong], {}))


def test_a_run_whose_valid_figures_recommend_leaves_out_says_how_to_use_them(
    tmp_path: Path,
) -> None:
    """A run whose only valid figures come from a virtualized host (this VM's static-rps)
    ends saying that recommend leaves them out, and the command that sizes on them; that
    command, as printed, sizes on them (a real database, the CLI as typed)."""
    from sizing.report.render.points import left_out_by_default

    vm = _point(
        "localhost", "static-rps", value=9.0e4, unit="requests/s", flags=("virtualized-host",)
    )
    bad = _point("localhost", "static-tps", Status.INVALID, flags=("not-saturated",))
    lines = left_out_by_default([vm, bad])
    text = " ".join(lines)
    assert all(len(x) <= WIDTH for x in lines)
    assert "from a virtualized host (a container or VM measured as bare metal)" in text
    command = text[text.index("sizing recommend --rps") :]
    assert command == "sizing recommend --rps 200000 --include-virtualized --article-prices"
    # nothing to say when a figure is sized by default, or nothing is valid
    assert left_out_by_default([vm, _point("r640", "rps", value=1.0e5)]) == []
    assert left_out_by_default([bad]) == []
    # a run whose only valid figure is a handshake figure is told --tps, not an --rps that
    # would quietly size from the reference data (issue 62)
    tps = _point("localhost", "static-tps", value=1900.0, unit="handshakes/s", flags=vm.flags)
    said = " ".join(left_out_by_default([tps, bad]))
    assert said.endswith("sizing recommend --tps 2000 --include-virtualized --article-prices")
    both = " ".join(left_out_by_default([vm, tps]))
    assert "sizing recommend --rps 200000 --tps 2000 --include-virtualized" in both
    emulated = _point("tcg1", "rps", value=900.0, flags=("emulated",))
    said = " ".join(left_out_by_default([emulated]))
    assert "from a software-emulated guest" in said
    assert said.endswith("--rps 200000 --include-emulated --article-prices")

    from tests.unit.test_sources import ENV, fill, point

    db = tmp_path / "s.sqlite"
    fill(
        db,
        {"localhost": ENV["localhost"]},
        [
            point(
                "localhost",
                "baremetal",
                1,
                "rps",
                [9.0e4, 9.1e4, 9.2e4],
                flags=("virtualized-host",),
            )
        ],
    )
    res = runner.invoke(app, [*command.split()[1:], "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "Sized on localhost/virtualized-host/static-128b" in res.stdout.replace("\n  ", " ")
