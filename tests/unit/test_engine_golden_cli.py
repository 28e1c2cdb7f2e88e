"""Every golden engine case (tests/data/engine/*.yml) once more, through the CLI as a user
types it: the case's catalog written to a file, its figures in a results database (through
the Store API) or the bundled reference data (``--source reference``), then ``sizing
recommend`` / ``sizing table --json`` in process (Typer's CliRunner), and the case's numbers
compared with the JSON answer.

:mod:`tests.unit.test_engine_golden` builds its inputs in process, where a platform name
may differ from the one the CLI sizes (the reference data's ``hypervisor`` column is the
``reference/esxi`` basis, platform ``esxi``): a seam such as a licence looked up under one
name and sized under the other only shows here. A case the CLI cannot express says why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from sizing.catalog import REFERENCE_BASES
from sizing.cli import app
from sizing.model import PointKey, PointResult, Status
from sizing.store import Store
from tests.unit.test_engine_golden import _cases, _match

runner = CliRunner()

# The platform each reference column is sized as by the CLI (its basis' platform).
CLI_PLATFORM = {name: basis.split("/")[1] for name, (_, basis) in REFERENCE_BASES.items()}

# Cases the CLI cannot express, and why (the engine test still runs them).
NOT_THROUGH_CLI = {
    "bases": (
        "the case hands the engine bases built by hand (ids, hardware, intervals given as "
        "numbers); through the CLI a basis and its interval are derived from the run's "
        "recorded host facts and repetitions, which the case does not state"
    ),
}


def _cli_case(case: dict[str, Any]) -> str:
    """Why a case cannot go through the CLI, or ``""``."""
    if "bases" in case:
        return NOT_THROUGH_CLI["bases"]
    return ""


def _write_catalog(case: dict[str, Any], tmp_path: Path) -> list[str]:
    """``--catalog FILE`` for a case's own catalog (none: the bundled default)."""
    raw = case.get("catalog", "default")
    if raw == "default":
        return []
    path = tmp_path / "catalog.yml"
    path.write_text(yaml.safe_dump({"kind": "catalog", **raw}), encoding="utf-8")
    return ["--catalog", str(path)]


def _store_figures(case: dict[str, Any], db: Path) -> None:
    """The case's measured figures as points of one run per ``origin`` (``run 1``,
    ``run 2``: a later run's figure supersedes an earlier one's, as in the case)."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for f in case["figures"]:
        runs.setdefault(str(f.get("origin", "run 1")), []).append(f)
    with Store(db) as store:
        for origin in sorted(runs):
            run_id = store.start_run(
                inventory="test", argv=["sizing", "run"], tool_version="0", options={}
            )
            for f in runs[origin]:
                key = PointKey("lab1", f["platform"], f["cores"], f["ht"], f["profile"])
                unit = "requests/s" if f["profile"] == "rps" else "handshakes/s"
                result = PointResult(key=key, status=Status.MEASURED, value=f["value"], unit=unit)
                store.add_point(run_id, result, [])
            store.finish_run(run_id, "complete")


def _args(case: dict[str, Any], tmp_path: Path, db: Path) -> list[str]:
    """What the user types for a case's inputs (without the command and the demand)."""
    args = [*_write_catalog(case, tmp_path), "--db", str(db), "--json"]
    if case["figures"] == "reference":
        return [*args, "--source", "reference"]
    _store_figures(case, db)
    # the case's figures carry no basis price: the catalog prices them, as the engine does
    return [*args, "--source", "measured", "--article-prices"]


def _demand(case: dict[str, Any]) -> list[str]:
    d = case["demand"]
    out = ["--headroom", str(d.get("headroom", 20))]
    for name in ("rps", "tps"):
        if d.get(name) is not None:
            out += [f"--{name}", str(d[name])]
    if d.get("redundancy"):
        out += ["--redundancy", d["redundancy"]]
    return out


def _options(case: dict[str, Any]) -> list[str]:
    """The case's search options as the CLI's: the engine test's default of 64 servers,
    platforms, HT modes, extrapolation."""
    out = ["--max-servers", str(case.get("max_servers", 64))]
    if case.get("platforms"):
        out += ["--platform", ",".join(case["platforms"])]
    if case.get("ht"):
        out += ["--ht", ",".join(case["ht"])]
    if case.get("allow_extrapolation"):
        out.append("--allow-extrapolation")
    return out


def _as_cli(expect: dict[str, Any]) -> dict[str, Any]:
    """An expectation with the reference columns' platform names as the CLI sizes them."""
    want = dict(expect)
    if want.get("platform") in CLI_PLATFORM:
        want["platform"] = CLI_PLATFORM[want["platform"]]
    return want


def _invoke(args: list[str]) -> dict[str, Any]:
    result = runner.invoke(app, args)
    assert result.exit_code in (0, 1), (args, result.stdout, result.stderr)
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


@pytest.mark.parametrize("case", _cases("recommend"))
def test_recommend_golden_through_the_cli(case: dict[str, Any], tmp_path: Path) -> None:
    why = _cli_case(case)
    if why:
        pytest.skip(why)
    db = tmp_path / "sizing.sqlite"
    doc = _invoke(["recommend", *_args(case, tmp_path, db), *_demand(case), *_options(case)])
    # what the CLI answers differently by design, said in the case (cli_expect)
    expect = {**case["expect"], **case.get("cli_expect", {})}
    if expect.get("none"):
        assert doc["recommendation"] is None
    else:
        rec = doc["recommendation"]
        _match(rec, _as_cli(expect["recommendation"]), "recommendation")
        # the answer's cost is its parts: nothing priced is missing from the total
        assert rec["cost"]["total"] == pytest.approx(rec["total_cost"], abs=0.01)
    for i, alt in enumerate(expect.get("alternatives", [])):
        _match(doc["alternatives"][i], _as_cli(alt), f"alternatives[{i}]")
    if "source" in expect:
        assert doc["source"] == expect["source"]
    if "cost_basis" in expect:
        assert doc["cost_basis"] == expect["cost_basis"]


@pytest.mark.parametrize("case", _cases("table"))
def test_table_golden_through_the_cli(case: dict[str, Any], tmp_path: Path) -> None:
    why = _cli_case(case)
    if why:
        pytest.skip(why)
    db = tmp_path / "sizing.sqlite"
    doc = _invoke(["table", *_args(case, tmp_path, db)])
    expect = case["expect"]
    assert doc["source"] == expect["source"]
    assert doc["sources_used"] == expect["sources_used"]
    cells = {
        (c["platform"], c["ht"], c["profile"], c["cores"]): c
        for row in doc["rows"]
        for c in row["cells"]
    }
    for want in expect["cells"]:
        want = _as_cli(want)
        key = (want.pop("platform"), want.pop("ht"), want.pop("profile"), want.pop("cores"))
        _match(cells[key], want, f"cell{key}")
