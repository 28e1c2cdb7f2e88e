"""The proposal scenario of issue 44, through `sizing recommend` as a user types it: the
lab database of tests/labdb.py (simulated figures: a 2 × 20-core Xeon Gold 6248 host, bare
metal and an ESXi guest, 1/2/4/8 cores, HT off and on, 10 runs) and the illustrative
catalog profiles/catalog-proposal-example.yml (R460 1 × 12, R660 2 × 16, R760 2 × 32)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing import paths
from sizing.cli import app
from tests.labdb import build_lab

runner = CliRunner()
CATALOG = paths.ROOT / "profiles" / "catalog-proposal-example.yml"
DEMAND = ["recommend", "--rps", "350000", "--tps", "12000", "--headroom", "25"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("proposal") / "lab.db"
    build_lab(db, inventory="/lab/inventories/lab.yml")
    return db


def _json(db: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    res = runner.invoke(
        app, [*DEMAND, "--catalog", str(CATALOG), "--db", str(db), *extra, "--json"]
    )
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def test_every_catalog_server_is_sized_on_a_floor_and_the_run_that_would_size_it_is_named(
    lab: Path,
) -> None:
    doc = _json(lab)
    sized = {c["cores_per_server"] for c in [doc["recommendation"], *doc["alternatives"]]}
    assert sized == {12, 32, 64}
    assert not [r for r in doc["rejected"] if r.get("cores_per_server")]
    for c in [doc["recommendation"], *doc["alternatives"]]:
        for f in c["figures"]:
            assert (
                f["source"] == "floor" and "at least (not measured beyond 8 cores)" in f["origin"]
            )
    commands = {m["server"]: (m["command"], m["note"]) for m in doc["measure_next"]}
    assert commands["PowerEdge R660 (2 × 16 cores)"] == (
        "sizing run -i /lab/inventories/lab.yml --cores 16,32 --ht both",
        None,
    )
    # the lab host has 2 × 20 cores: the nearest it measures, said so
    command, note = commands["PowerEdge R760 (2 × 32 cores)"]
    assert command == "sizing run -i /lab/inventories/lab.yml --cores 20,40 --ht both"
    assert "2 × 20 cores" in note


def test_an_empty_database_prices_bare_metal_on_its_client_bound_floor(tmp_path: Path) -> None:
    res = runner.invoke(app, [*DEMAND, "--catalog", str(CATALOG), "--db", str(tmp_path / "e.db")])
    assert res.exit_code == 0, res.output
    assert "On bare metal no fleet in the catalog carries the demand" not in res.stdout
    assert "12 cores, baremetal" in res.stdout.split("Recommended:")[1].splitlines()[0]
    base = runner.invoke(
        app,
        [
            *DEMAND,
            "--catalog",
            str(CATALOG),
            "--db",
            str(tmp_path / "e.db"),
            "--platform",
            "baremetal",
        ],
    )
    assert base.exit_code == 0 and "more than twice beyond" not in base.stdout


def test_kvm_is_priced_only_from_a_stated_assumption_labelled_with_its_source(lab: Path) -> None:
    res = runner.invoke(
        app, [*DEMAND, "--catalog", str(CATALOG), "--db", str(lab), "--platform", "kvm"]
    )
    assert res.exit_code != 0
    assert "--assume guest-share=kvm:SHARE --assume-source TEXT" in res.stderr
    assert "Nginx-esxi1" not in res.stderr
    assume = ["--platform", "kvm", "--assume", "guest-share=kvm:0.92"]
    missing = runner.invoke(app, [*DEMAND, "--catalog", str(CATALOG), "--db", str(lab), *assume])
    assert missing.exit_code == 2 and "--assume-source" in missing.stderr
    src = ["--assume-source", "vendor benchmark 2025"]
    doc = _json(lab, *assume, *src)
    (a,) = doc["assumed"]
    assert a["platform"] == "kvm" and a["value"] == 0.92 and a["source"] == "vendor benchmark 2025"
    rec = doc["recommendation"]
    assert rec["platform"] == "kvm"
    assert all("assumed" in f["flags"] for f in rec["figures"])
    assert all("× 0.92, the assumed KVM guest share" in f["origin"] for f in rec["figures"])
    text = runner.invoke(
        app, [*DEMAND, "--catalog", str(CATALOG), "--db", str(lab), *assume, *src]
    ).stdout
    assert "Assumption: KVM's figures are bare metal's × 0.92" in text
    assert "source: vendor benchmark 2025" in text


def test_a_server_of_another_cpu_is_refused_in_one_line_naming_both(
    lab: Path, tmp_path: Path
) -> None:
    cat = tmp_path / "silver.yml"
    cat.write_text(
        "kind: catalog\nservers:\n  - {cores: 12, price: 6200, name: PowerEdge R460, "
        "cpu_model: Xeon Silver 4410Y}\n"
    )
    res = runner.invoke(app, [*DEMAND, "--catalog", str(cat), "--db", str(lab)])
    assert res.exit_code != 0
    assert "Xeon Silver 4410Y" in res.stderr and "Gold 6248" in res.stderr
    assert "Measured on your hosts" not in res.stdout


def test_the_summary_compares_every_platform_and_says_what_would_price_the_others(
    lab: Path,
) -> None:
    doc = _json(lab)
    assert doc["platforms"]["baremetal"]["total_cost"] > 0
    assert doc["platforms"]["guest"]["platform"] == "esxi"
    (kvm,) = doc["platforms"]["unpriced"]
    assert (
        kvm["platform"] == "kvm" and "--assume guest-share=kvm:SHARE" in kvm["what_would_price_it"]
    )
    src = ["--assume", "guest-share=kvm:0.92", "--assume-source", "vendor benchmark 2025"]
    doc = _json(lab, *src)
    (side,) = doc["platforms"]["others"]
    assert side["platform"] == "kvm" and side["total_cost"] > 0
    assert doc["platforms"]["unpriced"] == []
    text = runner.invoke(app, [*DEMAND, "--catalog", str(CATALOG), "--db", str(lab), *src]).stdout
    assert "Bare metal, ESXi or KVM for 350,000 RPS" in text
    assert all(len(line) <= 100 for line in text.splitlines())


def test_max_servers_does_not_ask_for_larger_servers_the_catalog_already_has(lab: Path) -> None:
    res = runner.invoke(
        app, [*DEMAND, "--catalog", str(CATALOG), "--db", str(lab), "--max-servers", "2"]
    )
    assert res.exit_code != 0
    assert "add larger servers to the catalog" not in res.stderr
    assert "the catalog's larger servers (32 cores, 64 cores) need as many" in res.stderr


SILVER = (
    "kind: catalog\nname: silver\nservers:\n"
    "  - {cores: 8, price: 3000, name: PowerEdge R460, cpu_model: Xeon Silver 4410Y}\n"
    "ceilings:\n"
    "  - {cpu_model: Xeon Silver 4410Y, tls_key: rsa2048, sign_per_core: SIGN,"
    " source: synthetic test figure}\n"
)


@pytest.mark.parametrize("sign", [1_170.0, 3_120.0])  # 0.75 and 2.0 × the lab's 1,560/s
def test_rps_goes_to_another_cpu_only_by_the_stated_one_sided_rule(
    tmp_path: Path, sign: float
) -> None:
    from sizing.store import Store
    from tests.labgen import SIGN_PER_CORE, store_lab

    db = tmp_path / "lab.db"
    with Store(db) as store:
        store_lab(store, guests=False, hts=("off",), reps=5)
    cat = tmp_path / "silver.yml"
    cat.write_text(SILVER.replace("SIGN", f"{sign:g}"))
    base = ["recommend", "--rps", "100000", "--tps", "2000", "--db", str(db)]
    base += ["--catalog", str(cat), "--cpu", "Xeon Silver 4410Y", "--allow-translation"]
    refused = runner.invoke(app, base)
    assert refused.exit_code == 2 and "--allow-cpu-translation" in refused.stderr
    res = runner.invoke(app, [*base, "--allow-cpu-translation", "--json"])
    assert res.exit_code == 0, res.output
    rec = json.loads(res.stdout)["recommendation"]
    (rps,) = [f for f in rec["figures"] if f["profile"] == "rps"]
    assert "translated" in rps["flags"] and "stated rule" in rps["origin"]
    measured = runner.invoke(
        app, ["recommend", "--rps", "100000", "--db", str(db), "--article-prices", "--json"]
    )
    doc = json.loads(measured.stdout)
    (own,) = [
        f
        for c in [doc["recommendation"], *doc["alternatives"]]
        for f in c["figures"]
        if c["cores_per_server"] == 8 and f["profile"] == "rps"
    ][:1]
    ratio = min(1.0, sign / SIGN_PER_CORE)
    assert rps["value"] == pytest.approx(own["value"] * ratio, rel=1e-6)


def test_a_hint_is_a_run_the_measured_host_can_do() -> None:
    """Issue 62: on a 2-core machine that is its own load generator (the bundled local
    inventory), the run named to size a 2-, 4- or 8-core server was refused ("needs 2 server
    cores plus at least 1 client core; hyper-threading is not available"). The hint keeps a
    core for the client, asks no HT the host lacks, and says what to add."""
    from sizing.engine.reach import measure_hint

    for cores in (2, 4, 8):
        command, note = measure_hint(
            cores, 1, "inventories/local.yml", (1, 2), threads=1, own_client=True
        )
        assert command == "sizing run -i inventories/local.yml --cores 1 --ht off"
        assert "keeps one for its load generator" in note and "client host" in note
    command, note = measure_hint(4, 1, "lab.yml", (1, 1), threads=1, own_client=True)
    assert "no core left beside its load generator" in note and "add a client host" in note
    # a host with SMT and its own clients elsewhere: as before
    assert measure_hint(8, 1, "lab.yml", (1, 16), threads=2) == (
        "sizing run -i lab.yml --cores 8 --ht both",
        "",
    )
