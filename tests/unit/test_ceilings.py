"""Issue 24: physical ceilings. The openssl speed parser on real output, a figure's share
of its crypto and NIC ceilings (or why one is unknown), the far-below warning, predictions
bounded by a ceiling (point and bootstrap draws), and TLS figures translated to another
CPU by the ratio of the ceilings (recommend --cpu, refused without --allow-translation)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sizing import paths
from sizing.ceilings import (
    Ceiling,
    HostCeilings,
    StatedCeiling,
    crypto_ceiling,
    far_below,
    nic_ceiling,
)
from sizing.cli import app
from sizing.load.openssl_speed import OPENSSL_ALG, SpeedParseError, parse_speed
from sizing.records import HostRecord, PointMeta, SampleMeta, dump
from tests.unit.test_sources import ENV, fill, point

runner = CliRunner()


def _ceiling_script() -> Any:
    """``playbooks/files/ceiling.py``, the script the hosts run, as a module."""
    path = paths.PLAYBOOKS / "files" / "ceiling.py"
    spec = importlib.util.spec_from_file_location("sizing_ceiling_script", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_parser_reads_real_openssl_speed_output() -> None:
    """Real `openssl speed -mr` (1 s per operation, pinned to CPU 0): RSA's +F2 and
    ECDSA's +F4 lines; the rates are positive and signing RSA-2048 is far slower than
    verifying it."""
    for key, faster in (("rsa2048", "verify"), ("ecdsa-p256", "sign")):
        argv = _ceiling_script().speed_argv("taskset", "openssl", OPENSSL_ALG[key], "0", 1)
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
        rate = parse_speed(out.stdout, key, cpus="0")
        assert rate.sign_per_s > 0 and rate.verify_per_s is not None
        if faster == "verify":
            assert rate.verify_per_s > 5 * rate.sign_per_s
        else:
            assert rate.sign_per_s > rate.verify_per_s


def test_the_parser_takes_the_parents_sum_under_multi_and_refuses_what_is_not_a_rate() -> None:
    text = (
        "Got: +F2:2:2048:2313.000000:25085.148515 from 0\n"
        "Got: +F2:2:2048:1972.000000:25899.000000 from 1\n"
        "+F2:2:2048:4285.000000:50984.148515\n"
    )
    rate = parse_speed(text, "rsa2048", cpus="0,1", threads=2)
    assert (rate.sign_per_s, rate.threads) == (4285.0, 2)
    with pytest.raises(SpeedParseError, match="no RSA-2048 signing rate"):
        parse_speed("speed: Unknown algorithm rsa2048\n", "rsa2048")
    with pytest.raises(SpeedParseError, match="cut short"):
        parse_speed("+F2:2:2048\n", "rsa2048")
    with pytest.raises(SpeedParseError, match="rate of 0"):
        parse_speed("+F2:2:2048:0:1\n", "rsa2048")
    with pytest.raises(SpeedParseError, match="no ECDSA P-256 signing rate"):
        parse_speed(text, "ecdsa-p256")


def _host(per_core: float, pair: float | None = None) -> HostCeilings:
    raw: dict[str, Any] = {
        "openssl": "OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.0.19 27 Jan 2026)",
        "crypto": [{"alg": "rsa2048", "cpus": "0", "threads": 1, "sign_per_s": per_core}],
    }
    if pair is not None:
        raw["crypto"].append({"alg": "rsa2048", "cpus": "0,8", "threads": 2, "sign_per_s": pair})
    got = HostCeilings.of(HostRecord.parse({"ceilings": raw}))
    assert got is not None
    return got


def test_a_handshake_figure_is_shown_as_a_share_of_its_crypto_ceiling() -> None:
    one = crypto_ceiling(_host(4133.0), "rsa2048", 1, "off")
    assert one is not None and one.limit == 4133.0
    assert one.words(1885.0, "handshakes/s") == (
        "1,885 hs/s = 46% of RSA-2048 signing on cpu 0 (4,133/s, OpenSSL 3.0.19)"
    )
    four = crypto_ceiling(_host(4133.0), "rsa2048", 4, "off")
    assert four is not None and four.limit == 4 * 4133.0
    assert "4 × RSA-2048 signing on cpu 0 (4,133/s per core" in four.words(7000.0)
    # HT on: the siblings measured together, never guessed from the single core
    on = crypto_ceiling(_host(4133.0, 5587.0), "rsa2048", 2, "on")
    assert on is not None and on.limit == 2 * 5587.0
    unknown = crypto_ceiling(_host(4133.0), "rsa2048", 2, "on")
    assert unknown is not None and unknown.limit is None
    assert unknown.words(100.0) == (
        "RSA-2048 signing ceiling not measured on one core's HT siblings together"
    )
    missing = crypto_ceiling(
        HostCeilings(missing="no openssl binary on the host's PATH"), "rsa2048", 1, "off"
    )
    assert missing is not None and "no openssl binary" in missing.words(100.0)
    assert crypto_ceiling(_host(4133.0), "", 1, "off") is None  # no certificate


def test_the_nic_ceiling_is_the_link_over_the_bytes_a_request_costs() -> None:
    lo = nic_ceiling(
        PointMeta.parse(
            {
                "server_net_interface": "lo",
                "server_net_tx_bytes_per_s": 4.7e7,
                "server_net_rx_bytes_per_s": 4.7e7,
                "server_link_bytes_per_s": None,
            }
        ),
        44568.0,
    )
    assert lo is not None and lo.limit is None
    assert lo.words(44568.0) == "no NIC ceiling: loopback has no line rate"
    # 10 GbE, 500 B per request sent: 2.5 M requests/s
    ten = nic_ceiling(
        PointMeta.parse(
            {
                "server_net_interface": "eth0",
                "server_net_tx_bytes_per_s": 2.5e7,
                "server_net_rx_bytes_per_s": 1e7,
                "server_link_bytes_per_s": 1.25e9,
            }
        ),
        50000.0,
    )
    assert ten is not None and ten.limit == pytest.approx(2.5e6)
    assert ten.words(50000.0, "requests/s") == (
        "50,000 req/s = 2% of 10 Gb/s on eth0 (500 B per request on the wire)"
    )
    assert nic_ceiling(PointMeta(), 100.0) is None


def test_a_saturated_handshake_figure_far_below_its_ceiling_is_flagged() -> None:
    c = crypto_ceiling(_host(4000.0), "rsa2048", 1, "off")
    split = {"user": 76.6, "system": 8.4, "softirq": 3.8}
    why = far_below(c, 1885.0, split)
    assert why is not None and why.startswith("far-below-ceiling: 47% of RSA-2048 signing")
    assert "(the pinned CPUs: user 77%, system 8%, softirq 4%)" in why
    assert far_below(c, 2100.0, split) is None  # 52%: near enough
    assert far_below(Ceiling("crypto", None, "x", "not measured"), 10.0) is None


CEILINGS = {
    "openssl": "OpenSSL 3.0.19 27 Jan 2026",
    "crypto": [{"alg": "rsa2048", "cpus": "0", "threads": 1, "sign_per_s": 0.0}],
}


def _tps_db(tmp_path: Path, per_core: float) -> Path:
    """Real store, real engine: r640-01 measured TPS at 1, 2 and 4 cores (9 repetitions
    each), its run's record holding a crypto ceiling of ``per_core``."""
    db = tmp_path / "s.sqlite"
    ceilings = {**CEILINGS, "crypto": [{**CEILINGS["crypto"][0], "sign_per_s": per_core}]}
    env = {"r640-01": {**ENV["r640-01"], "declared": {}, "ceilings": ceilings}}
    reps = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0, 998.0, 1003.0, 997.0]
    fill(
        db,
        env,
        [
            point("r640-01", "baremetal", n, "tps", [v * k for v in reps])
            for n, k in ((1, 1.0), (2, 1.95), (4, 3.8))
        ],
    )
    return db


def _table(db: Path) -> dict[str, Any]:
    res = runner.invoke(
        app,
        [
            "table",
            "--json",
            "--db",
            str(db),
            "--source",
            "measured",
            "--allow-extrapolation",
            "--article-prices",
        ],
    )
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def _cell(doc: dict[str, Any], cores: int) -> dict[str, Any]:
    text = json.dumps(doc)
    assert "tps" in text
    found = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            if x.get("cores") == cores and x.get("profile") == "tps" and "value" in x:
                found.append(x)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc)
    assert found, f"no {cores}-core TPS figure in the table"
    return found[0]


def test_an_extrapolation_is_bound_by_a_tiny_crypto_ceiling(tmp_path: Path) -> None:
    """The same measured figures, once with a ceiling far above them and once with a tiny
    one (as a stubbed openssl reports): the 8-core prediction, its interval and its
    bootstrap draws never exceed 8 × the ceiling, and the figure says which ceiling bound
    it. The measured figures themselves are never changed."""
    free = _cell(_table(_tps_db(tmp_path / "a", 1e6)), 8)
    assert "ceiling-bound" not in free["flags"] and free["value"] > 6000
    bound = _cell(_table(_tps_db(tmp_path / "b", 500.0)), 8)
    assert bound["value"] == pytest.approx(8 * 500.0)
    assert bound["ci_high"] <= 8 * 500.0 + 1e-6
    assert "ceiling-bound" in bound["flags"]
    assert "bound by 8 × RSA-2048 signing (500/s per core" in bound["origin"]
    measured = _cell(_table(_tps_db(tmp_path / "c", 500.0)), 1)
    assert measured["value"] == pytest.approx(1000.0)  # measured: never capped


CATALOG = (
    "kind: catalog\nname: test prices\nservers:\n"
    "  - {cores: 8, price: 3000, cpu_model: EPYC 9354}\n"
    "  - {cores: 16, price: 5000, cpu_model: EPYC 9354}\n"
    "  - {cores: 8, price: 2200}\n"
    "ceilings:\n"
    "  - {cpu_model: EPYC 9354, tls_key: rsa2048, sign_per_core: 2000,"
    " source: synthetic test CPU}\n"
)


def test_recommend_translates_tls_figures_to_a_stated_cpu_only_when_allowed(
    tmp_path: Path,
) -> None:
    db = _tps_db(tmp_path, 1000.0)  # measured at 1,000/s: 100% of its ceiling
    cat = tmp_path / "cat.yml"
    cat.write_text(CATALOG)
    base = [
        "recommend",
        "--tps",
        "10000",
        "--db",
        str(db),
        "--catalog",
        str(cat),
        "--basis",
        "r640-01",
        "--cpu",
        "EPYC 9354",
    ]
    refused = runner.invoke(app, base)
    assert refused.exit_code == 2
    (line,) = [x for x in refused.stderr.splitlines() if x.strip()]
    assert line.startswith("error: --cpu EPYC 9354: the figures would be translated from r640-01")
    assert line.endswith("an estimate rather than a measurement: add --allow-translation to use it")

    res = runner.invoke(app, [*base, "--allow-translation", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    rec = doc["recommendation"]
    assert rec["basis"].startswith("r640-01/baremetal/") and rec["basis"].endswith("~epyc-9354")
    (fig,) = rec["figures"]
    # the catalog sells this CPU at 8 and 16 cores: beyond the measured 4 cores a floor on
    # the translated figures (issue 44), flagged and saying so
    assert fig["source"] in ("translated", "floor") and "translated" in fig["flags"]
    assert "translated from r640-01" in fig["origin"]
    assert "ceiling ratio 2,000/1,000 = 2.00 per core (synthetic test CPU)" in fig["origin"]
    # twice the measured figure, and an interval widened by 10 points beyond the measured
    measured_4 = 3.8 * 1000.0
    if fig["cores"] == 4:
        assert fig["value"] == pytest.approx(2 * measured_4, rel=0.01)
    assert fig["ci_low"] < fig["value"] * 0.9
    # a floor claims no high end ("at least")
    assert (
        fig["ci_high"] is None if fig["source"] == "floor" else fig["ci_high"] > fig["value"] * 1.1
    )
    assert "EPYC 9354" in rec["price_source"]
    text = runner.invoke(app, [*base, "--allow-translation"])
    assert text.exit_code == 0
    flat = " ".join(text.stdout.split())
    assert "translated from measured basis r640-01" in flat and "(an estimate:" in flat

    rps = runner.invoke(app, ["recommend", "--rps", "1000", "--db", str(db), "--cpu", "EPYC"])
    assert rps.exit_code == 2 and "plain RPS is not bound by one instruction mix" in rps.stderr
    unknown = runner.invoke(app, [*base[:-1], "Xeon 6", "--allow-translation"])
    assert unknown.exit_code == 2 and "states no crypto ceiling for it" in unknown.stderr


def test_a_stated_ceiling_matches_a_cpu_by_name() -> None:
    c = StatedCeiling("EPYC 9354", "rsa2048", 2000.0, source="x")
    assert c.matches("AMD EPYC 9354 32-Core Processor") and c.matches("epyc 9354")
    assert not c.matches("Xeon Gold 6338") and c.rate("on") is None


def test_the_sweep_flags_a_valid_handshake_figure_far_below_its_ceiling() -> None:
    """What `sizing run` does to each point it stores (sweep.against_ceiling): a valid TPS
    figure at 44% of the ceiling its run measured gets the far-below-ceiling flag with the
    CPU split of its timed repetitions; near the ceiling, invalid, or RPS: unchanged."""
    from dataclasses import replace

    from sizing import profiles
    from sizing.inventory import load_inventory
    from sizing.measure.checks import against_ceiling
    from sizing.model import Ht, PointResult, Sample, Status
    from sizing.paths import ROOT
    from sizing.plan import build_plan
    from sizing.topology import Topology

    inv = load_inventory(ROOT / "inventories" / "local.yml")
    topo = Topology.from_sysfs()
    (tps,) = build_plan(inv, {"localhost": topo}, (1,), (Ht.OFF,), (profiles.load("tps"),))
    split = {"per_cpu": {"0": {"user": 76.6, "system": 8.4, "softirq": 3.8}}}
    samples = [
        (
            0,
            Sample(
                "handshakes_per_second", 900.0, "handshakes/s", SampleMeta.parse({"warmup": True})
            ),
        ),
        *(
            (
                i,
                Sample(
                    "handshakes_per_second",
                    v,
                    "handshakes/s",
                    SampleMeta.parse({"server_cpu": split}),
                ),
            )
            for i, v in enumerate((1790.0, 1800.0, 1810.0), start=1)
        ),
    ]
    env = HostCeilings.of(
        HostRecord.parse(
            {
                "ceilings": {
                    "openssl": "OpenSSL 3.0.19",
                    "crypto": [{"alg": "rsa2048", "cpus": "0", "threads": 1, "sign_per_s": 4100.0}],
                }
            }
        )
    )
    valid = PointResult(tps.key, Status.MEASURED, value=1800.0, unit="handshakes/s")
    got = against_ceiling(env, tps, valid, samples)
    assert got.flags == ("far-below-ceiling",)
    assert got.reason.startswith("far-below-ceiling: 44% of RSA-2048 signing on cpu 0")
    assert "user 77%, system 8%, softirq 4%" in got.reason
    near = replace(valid, value=3000.0)
    assert against_ceiling(env, tps, near, samples) is near
    invalid = replace(valid, status=Status.INVALID)
    assert against_ceiling(env, tps, invalid, samples) is invalid
    assert against_ceiling(None, tps, valid, samples) is valid  # no ceiling measured: no guess
    # keyed on the profile's sizing metric, not the unit's spelling: a TPS profile that
    # spells its unit otherwise is checked, an RPS profile that spells it so is not
    spelt = replace(tps, profile=tps.profile.model_copy(update={"unit": "full handshakes/s"}))
    other = replace(valid, unit="full handshakes/s")
    assert against_ceiling(env, spelt, other, samples).flags == ("far-below-ceiling",)
    rps = replace(tps, profile=tps.profile.model_copy(update={"metric": "requests_per_second"}))
    assert against_ceiling(env, rps, valid, samples) is valid


def test_the_host_scripts_report_reads_into_a_hosts_ceilings() -> None:
    """playbooks/files/ceiling.py, run here for real (one job, 1 s of RSA-2048 on CPU 0):
    its report reads into the host's ceilings through the typed report; a failed job says
    its rc and stderr's last line; a host with no openssl says so."""
    from sizing.provision.ceiling import _host

    script = Path(__file__).parents[2] / "playbooks" / "files" / "ceiling.py"
    out = subprocess.run(
        ["python3", str(script), "rsa2048:0:1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    doc = json.loads(out.stdout)
    got = _host(doc, took=1.5)
    rate = got.rate("rsa2048", 1)
    assert rate is not None and rate.sign_per_s > 0 and rate.cpus == "0"
    assert got.openssl.startswith("OpenSSL") and got.missing == "" and got.took_s == 1.5
    failed = {**doc, "jobs": [{**doc["jobs"][0], "rc": 1, "stderr": "x\nno such alg\n"}]}
    assert _host(failed, took=1.0).missing == "openssl speed rsa2048 failed (rc 1): no such alg"
    none = _host({"openssl": None, "jobs": [], "missing": "no openssl binary"}, took=0.1)
    assert (none.missing, none.crypto) == ("no openssl binary", ())


def test_a_resumed_run_keeps_the_ceilings_its_first_part_measured() -> None:
    """sweep.stages._covers: what a run stored of a host's ceilings stands for the resumed
    part only when it has every operation on the same CPUs with the same processes."""
    from sizing.provision.ceiling import CeilingJob
    from sizing.sweep.stages import _covers

    kept = HostCeilings.of(
        HostRecord.parse(
            {
                "ceilings": {
                    "openssl": "OpenSSL 3.0.19",
                    "crypto": [{"alg": "rsa2048", "cpus": "0", "threads": 1, "sign_per_s": 4100.0}],
                }
            }
        )
    )
    assert kept is not None
    assert _covers(kept, [CeilingJob("rsa2048", "0", 1)])
    assert not _covers(kept, [CeilingJob("rsa2048", "0", 1), CeilingJob("ecdsa-p256", "0", 1)])
    assert not _covers(kept, [CeilingJob("rsa2048", "0,1", 2)])  # HT on: both siblings
    assert not _covers(kept, [CeilingJob("rsa2048", "2", 1)])  # another CPU
    assert not _covers(HostCeilings(missing="no openssl binary"), [])


def test_a_hosts_ceilings_are_stored_as_a_record_and_read_back_alike() -> None:
    """``HostRecord.ceilings`` is typed (no ``Any`` in what sizing writes): what a run
    measured reads back as measured, one measurement lacking a field it needs is left out
    (the others kept), and an older row stored as ``to_dict`` wrote it reads the same."""
    from sizing.ceilings import CryptoRate

    measured = HostCeilings(
        openssl="OpenSSL 3.0.19",
        crypto=(
            CryptoRate("rsa2048", "0", 1, 935.0, 31000.0),
            CryptoRate("rsa2048", "0-1", 2, 1850.0),
        ),
        took_s=6.5,
    )
    stored = dump(HostRecord(ceilings=measured.record()))
    assert HostCeilings.of(HostRecord.parse(stored)) == measured
    assert HostCeilings.of(HostRecord.parse({"ceilings": measured.to_dict()})) == measured
    broken = measured.to_dict()
    broken["crypto"][1].pop("sign_per_s")
    got = HostCeilings.of(HostRecord.parse({"ceilings": broken}))
    assert got is not None and got.crypto == measured.crypto[:1]
