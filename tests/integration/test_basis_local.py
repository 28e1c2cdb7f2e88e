"""A real local sweep, then `recommend`: the answer names its basis and its flags, does not
pass this container's figures off as bare metal, and never scales one core count ×N."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from tests.integration.localnginx import stop_nginx, write_inventory
from tests.integration.quiet import measure_on_a_quiet_machine

runner = CliRunner()


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A world-readable temp dir: nginx workers (www-data) must read the content there."""
    path = Path(tempfile.mkdtemp(prefix="sizing-basis-"))
    path.chmod(0o755)
    yield path
    stop_nginx(path / "nginx.pid")
    shutil.rmtree(path, ignore_errors=True)


def test_recommend_names_the_local_basis_and_refuses_blind_scaling(
    tmp_path: Path, tools: None
) -> None:
    inv = write_inventory(tmp_path, 28180, 28543)
    db = tmp_path / "results.sqlite"
    tries = iter(range(1, 10))

    def measure() -> dict[str, Any]:
        # each try in its own database: the basis below must be one run's measured point
        nonlocal db
        db = tmp_path / f"results-{next(tries)}.sqlite"
        run = runner.invoke(
            app,
            [
                "run",
                "-i",
                str(inv),
                "--cores",
                "1",
                "--profile",
                "static-rps",
                "--duration",
                "2",
                "--warmup",
                "1",
                "--repeat",
                "3",
                "--db",
                str(db),
                "--json",
            ],
        )
        assert run.exit_code == 0, run.output
        point: dict[str, Any] = json.loads(run.stdout)["points"][0]
        return point

    point = measure_on_a_quiet_machine(measure)

    bases = runner.invoke(app, ["results", "--bases", "--db", str(db), "--json"])
    assert bases.exit_code == 0, bases.output
    listed = {b["id"]: b for b in json.loads(bases.stdout)["bases"]}
    local = [b for b in listed.values() if b["origin"] == "measured"]
    assert len(local) == 1, listed
    local_basis = local[0]
    assert local_basis["core_counts"] == {"rps": [1]}
    assert local_basis["runs"] == [1]
    assert local_basis["software"].startswith("nginx ")
    assert local_basis["hardware"]["cpu_model"]
    virtualized = "virtualized-host" in point["flags"]

    rec = runner.invoke(app, ["recommend", "--rps", "200000", "--db", str(db), "--json"])
    assert rec.exit_code == 0, rec.output
    doc = json.loads(rec.stdout)
    basis = doc["basis"]
    assert basis["ids"] and basis["why"]
    chosen = doc["recommendation"]
    assert chosen["basis"] in basis["ids"]
    assert "flags" in chosen and all("flags" in f for f in chosen["figures"])
    if virtualized:
        # this machine is a container: its figures are a virtualized host, not bare metal
        assert local_basis["id"].split("/")[1] == "virtualized-host"
        assert local_basis["id"] not in basis["ids"]
        assert "virtualized host" in basis["why"]
        assert {p["basis"]: p["reason"] for p in basis["passed_over"]}[local_basis["id"]]
        assert chosen["basis"].startswith("reference/")
        assert all(c["platform"] != "virtualized-host" for c in doc["alternatives"])

    # asked for by name, the local basis is used, says so, and scales no further than 1 core
    asked = runner.invoke(
        app,
        [
            "recommend",
            "--rps",
            "200000",
            "--db",
            str(db),
            "--json",
            "--basis",
            local_basis["id"],
            "--article-prices",
        ],
    )
    doc = json.loads(asked.stdout) if asked.stdout.strip() else {}
    assert doc, asked.output
    assert doc["basis"]["ids"] == [local_basis["id"]]
    assert "as asked" in doc["basis"]["why"]
    configs = [c for c in [doc["recommendation"], *doc["alternatives"]] if c is not None]
    for c in configs:
        assert c["basis"] == local_basis["id"]
        # a 2-, 4- or 8-core server is never sized by scaling the 1-core figure ×N: it is
        # refused, shaped, or on a floor, at least what the 1 measured core carries (and
        # never more than it)
        for f in c["figures"]:
            assert f["source"] in ("measured", "interpolated", "shape", "floor"), f
            if f["source"] == "floor":
                assert f["value"] <= point["ci_high"] + 1e-6, (f, point)
            if virtualized:
                assert "virtualized-host" in f["flags"]
    refused = [r for r in doc["rejected"] if (r["cores_per_server"] or 0) > 1]
    shaped = [c for c in configs if c["cores_per_server"] > 1]
    assert refused or all(
        f["source"] in ("shape", "floor") for c in shaped for f in c["figures"]
    ), doc["rejected"]
    if refused:
        assert any("only 1 core count" in r["reason"] for r in refused), refused
