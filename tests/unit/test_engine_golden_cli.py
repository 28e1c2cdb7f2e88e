"""Every golden engine case (tests/data/engine/*.yml) once more, through the CLI as a user
types it: the case's catalog written to a file, its figures in a results database (through
the Store API: a case's bases as runs with their host's facts, a figure's interval as the
range of three repetitions) or the bundled reference data (``--source reference``), then
``sizing recommend`` / ``sizing table --json`` in process (Typer's CliRunner), and the
case's numbers compared with the JSON answer.

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

from sizing.catalog import REFERENCE_BASES, load_reference
from sizing.cli import app
from sizing.model import PointKey, PointResult, Sample, Status
from sizing.records import PointMeta, SampleMeta
from sizing.store import Store
from tests.unit.test_engine_golden import _cases, _match

runner = CliRunner()

# The platform each reference column is sized as by the CLI (its basis' platform).
CLI_PLATFORM = {name: basis.split("/")[1] for name, (_, basis) in REFERENCE_BASES.items()}

# The inventory platform a measured basis platform is recorded under.
RECORDED_AS = {"baremetal": "baremetal", "virtualized-host": "baremetal", "kvm": "libvirt"}


def _cli_case(case: dict[str, Any]) -> str:
    """Why a case cannot go through the CLI, or ``""``."""
    bundled = {(f.basis, f.cores, f.ht, f.profile): f.value for f in load_reference().figures}
    for b in case.get("bases", []):
        if b.get("origin") == "reference":
            for f in b["figures"]:
                slot = (b["id"], f["cores"], f.get("ht", "off"), f.get("profile", "rps"))
                if bundled.get(slot) != f["value"]:
                    return (
                        f"its reference basis {b['id']} holds figures of its own ({slot}: "
                        f"{f['value']}), not the bundled dataset's: the CLI reads only the "
                        "bundled reference data"
                    )
        elif b["platform"] not in RECORDED_AS:
            return f"no inventory platform records a {b['platform']} basis"
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


def _reps(f: dict[str, Any]) -> list[float]:
    """Repetitions whose median and interval are a case figure's: its value alone, or
    [ci_low, value, ci_high], whose median is the value and whose interval of the median
    (3 runs: their range) is the case's."""
    if f.get("ci_low") is None:
        return [float(f["value"])]
    return [float(f["ci_low"]), float(f["value"]), float(f["ci_high"])]


def _point(host: str, b: dict[str, Any], f: dict[str, Any]) -> Any:
    """One stored point of a case's basis figure, shaped like the sweep's, and its samples."""
    profile = f.get("profile", "rps")
    unit = "requests/s" if profile == "rps" else "handshakes/s"
    metric = "requests_per_second" if profile == "rps" else "handshakes_per_second"
    reps = _reps(f)
    samples = [
        (i, Sample(metric, v, unit, SampleMeta.parse({"repetition": i, "warmup": False})))
        for i, v in enumerate(reps, start=1)
    ]
    settings = {"hypervisor": b.get("physical_host", host)} if b["platform"] == "kvm" else {}
    meta = {
        "host": host,
        "file_size": 128,
        "keepalive": profile == "rps",
        "tls_key": "rsa2048" if profile == "tps" else None,
        "nginx_version": "1.22.1",
        "openssl_version": "3.0.11",
        "cpu_model": _cpu(b),
        "platform_settings": settings,
    }
    result = PointResult(
        key=PointKey(host, RECORDED_AS[b["platform"]], f["cores"], f.get("ht", "off"), profile),
        status=Status.MEASURED,
        value=sorted(reps)[len(reps) // 2],
        unit=unit,
        repetitions=len(reps),
        flags=tuple(f.get("flags", ())),
        metadata=PointMeta.parse(meta),
    )
    return result, samples


def _cpu(b: dict[str, Any]) -> str:
    return str(b.get("hardware", {}).get("cpu_model", "Xeon"))


def _store_bases(case: dict[str, Any], db: Path) -> None:
    """A case's measured bases as runs of the sweep: one run per basis, the host's facts
    (CPU model, a one-socket topology as large as the largest figure; a container host for
    a virtualized host) and what the inventory declared (a basis' own price)."""
    for b in case["bases"]:
        if b.get("origin") == "reference":
            continue  # the bundled reference data (checked by _cli_case)
        host = b["id"].split("/")[0]
        cores = max(f["cores"] for f in b["figures"])
        if b.get("price"):
            cores = max(o["cores"] for o in b["price"]["offers"])
        topo = "# CPU,Core,Socket,Node\n" + "".join(f"{c},{c},0,0\n" for c in range(cores))
        facts: dict[str, Any] = {
            "cpu_model": _cpu(b),
            "lscpu": topo,
            "nginx_version": "1.22.1",
            "nginx_openssl": "3.0.11",
        }
        if b["platform"] == "virtualized-host":
            facts["hypervisor"] = "docker"
        if b.get("price"):
            facts["declared"] = {"sizing_price_usd": b["price"]["offers"][0]["price"]}
        with Store(db) as store:
            run_id = store.start_run(
                inventory="lab", argv=["sizing", "run"], tool_version="0", options={}
            )
            store.set_environment(run_id, {host: facts})
            for f in b["figures"]:
                store.add_point(run_id, *_point(host, b, f))
            store.finish_run(run_id, "complete")


def _args(case: dict[str, Any], tmp_path: Path, db: Path) -> list[str]:
    """What the user types for a case's inputs (without the command and the demand)."""
    args = [*_write_catalog(case, tmp_path), "--db", str(db), "--json"]
    if "bases" in case:
        _store_bases(case, db)
        if case.get("basis"):
            args += ["--basis", ",".join(case["basis"])]
        return [*args, *(["--article-prices"] if case.get("article_prices") else [])]
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
        want = _as_cli(expect["recommendation"])
        # the CLI names where an inventory price was recorded: "... of r640-01 (run 1)"
        assert rec.get("price_source", "").startswith(want.pop("price_source", ""))
        _match(rec, want, "recommendation")
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
