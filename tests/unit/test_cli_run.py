"""The measuring commands, in-process: exit codes, stdout, stderr. No load is run here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.model import PointKey, PointResult, Sample, Status
from sizing.records import PointMeta, SampleMeta
from sizing.store import Store

DATA = Path(__file__).parent.parent / "data" / "inventories"
runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["run", "--cores", "0"], 2, "--cores: 0 is not a core count"),
        (["run", "--cores", "abc"], 2, "--cores: 'abc' is not a number"),
        (["run", "--cores", "300"], 2, "--cores: 300 is not a supported core count"),
        (["run", "--profile", "rps,nope"], 2, "unknown profile 'nope' (available: "),
        (["run", "-i", str(DATA / "bad_platform.yml")], 3, "sizing_platform: unknown platform"),
        (["run", "-i", str(DATA / "missing.yml")], 3, "no such inventory file"),
        (["inventory", "check", str(DATA / "bad_yaml.yml")], 3, "YAML syntax"),
        (["results", "--run", "99"], 2, "no run 99"),
    ],
)
def test_bad_input_is_one_line_and_an_exit_code(
    args: list[str], code: int, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "r.sqlite"
    Store(db).close()
    monkeypatch.setenv("SIZING_DB", str(db))
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("error:") == 1
    assert result.stdout == ""


def test_results_on_a_fresh_machine(tmp_path: Path) -> None:
    db = tmp_path / "none.sqlite"
    result = runner.invoke(app, ["results", "--db", str(db)])
    assert result.exit_code == 0
    assert "nothing measured yet" in result.stdout
    assert not db.exists()
    result = runner.invoke(app, ["results", "--db", str(db), "--json"])
    assert json.loads(result.stdout) == {"db": str(db), "runs": []}


def test_results_lists_runs_points_and_metadata(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        run_id = store.start_run(
            inventory="inv.yml", argv=["sizing", "run"], tool_version="t", options={}
        )
        key = PointKey("web1", "baremetal", 1, "off", "rps")
        meta = {"nginx_version": "1.22.1", "kernel": "6.1", "cpu_model": "Xeon", "connections": 50}
        store.add_point(
            run_id,
            PointResult(
                key,
                Status.MEASURED,
                value=70123.4,
                unit="requests/s",
                repetitions=3,
                spread=0.02,
                metadata=PointMeta.parse(meta),
            ),
            [(1, Sample("requests_per_second", 70000.0, "requests/s", SampleMeta.parse(meta)))],
        )
        store.add_point(
            run_id,
            PointResult(
                PointKey("web1", "baremetal", 2, "off", "rps"),
                Status.SKIPPED,
                "needs 2 server cores plus at least 1 client core",
            ),
            [],
        )
        store.finish_run(run_id, "complete")
    result = runner.invoke(app, ["results", "--db", str(db)])
    assert result.exit_code == 0
    assert "70,123 req/s" in result.stdout
    assert "skipped: needs 2 server cores" in result.stdout  # cut at 100 columns
    verbose = runner.invoke(app, ["results", "--db", str(db), "--verbose"]).stdout
    assert "needs 2 server cores plus at least 1 client core" in verbose  # in full
    doc = json.loads(runner.invoke(app, ["results", "--db", str(db), "--json"]).stdout)
    points = doc["runs"][0]["points"]
    assert points[0]["status"] == "measured" and points[0]["value"] == pytest.approx(70123.4)
    assert points[0]["metadata"]["nginx_version"] == "1.22.1"
    assert points[1]["status"] == "skipped"


def test_inventory_check_prints_roles_and_costs() -> None:
    result = runner.invoke(app, ["inventory", "check", str(DATA / "good_groups.yml")])
    assert result.exit_code == 0, result.output
    assert "2 server(s), 2 client(s)" in result.stdout
    assert "client,server" in result.stdout
    assert "$1,300" in result.stdout
    doc = json.loads(
        runner.invoke(app, ["inventory", "check", str(DATA / "good_groups.yml"), "--json"]).stdout
    )
    web2 = next(h for h in doc["hosts"] if h["name"] == "web2")
    assert web2["platform"] == "baremetal" and web2["roles"] == ["server"]


def test_help_lists_commands_and_exit_codes() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    flat = " ".join(result.stdout.split())  # the help wraps at the terminal's width
    for word in (
        "run",
        "results",
        "inventory",
        "probe-ceiling",
        "Exit codes",
        "6 store",
        "130 interrupted",
    ):
        assert word in flat
