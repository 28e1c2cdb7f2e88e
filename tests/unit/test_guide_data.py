"""The sizing guide's data preparation (sizing.report.data/build) and the command's edges.

TEST FIXTURE: every measured value below (throughputs, intervals, CPU shares, versions) is
invented for these tests and written through the real Store API; none is a measurement.
The reference figures are the bundled published dataset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sizing import paths
from sizing.app.guide import prepare
from sizing.catalog import load_catalog, load_reference
from sizing.cli import app
from sizing.engine import Demand
from sizing.model import PointKey, PointResult, Sample, Source, Status
from sizing.records import PointMeta, SampleMeta
from sizing.report.data import (
    Guide,
    GuideRequest,
    build_guide,
    money,
    nginx_fixed_directives,
    number,
    percent,
)
from sizing.report.render import charts as charts_mod
from sizing.report.render.html import render_markdown
from sizing.sizing_request import Inputs, SizingRequest
from sizing.sources import load_bases, read_runs
from sizing.store import Store

runner = CliRunner()

# TEST FIXTURE values (platform, cores, profile, value, ci_low, ci_high), invented.
FIXTURE_POINTS: list[tuple[str, int, str, float, float, float]] = [
    ("baremetal", 1, "rps", 50_000.0, 49_000.0, 51_000.0),
    ("baremetal", 2, "rps", 98_000.0, 96_500.0, 99_500.0),
    ("baremetal", 4, "rps", 190_000.0, 187_000.0, 193_000.0),
    ("baremetal", 1, "tps", 820.0, 810.0, 830.0),
    ("baremetal", 2, "tps", 1_630.0, 1_610.0, 1_650.0),
    ("baremetal", 4, "tps", 3_150.0, 3_100.0, 3_200.0),
    ("libvirt", 1, "rps", 42_000.0, 41_000.0, 43_000.0),
    ("libvirt", 2, "rps", 80_000.0, 78_500.0, 81_500.0),
    ("libvirt", 4, "rps", 140_000.0, 137_000.0, 143_000.0),
    ("libvirt", 1, "tps", 760.0, 750.0, 770.0),
    ("libvirt", 2, "tps", 1_480.0, 1_460.0, 1_500.0),
    ("libvirt", 4, "tps", 2_950.0, 2_900.0, 3_000.0),
]
FIXTURE_HOST_FACTS: dict[str, Any] = {
    "hostname": "srv1",
    "kernel": "6.1.0-test",
    "os": "Debian 12.5",
    "arch": "x86_64",
    "cpu_model": "Test CPU Model 9000",
    "lscpu": "# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,0\n2,2,0,0\n3,3,0,0\n",
    "hypervisor": None,
    "nginx_version": "1.22.1",
    "nginx_openssl": "3.0.11",
    "openssl_version": "3.0.11",
    "mem_total_kb": 16 * 1024 * 1024,
    "governor": "performance",
}


def _meta(platform: str, cores: int, profile: str) -> dict[str, Any]:
    return {
        "host": "srv1",
        "platform": platform,
        "cores": cores,
        "ht": "off",
        "profile": profile,
        "file_size": 128,
        "connections": 50,
        "duration_s": 10.0,
        "server_cpus": ",".join(str(i) for i in range(cores)),
        "client_cpus": {"gen1": "0-3"},
        "clients": ["gen1"],
        "target": "srv1",
        "nginx_version": "1.22.1",
        "openssl_version": "3.0.11",
        "kernel": "6.1.0-test",
        "cpu_model": "Test CPU Model 9000",
        "tool": "wrk",
        "tool_version": "4.1.0",
        "tls_key": "rsa2048" if profile == "tps" else None,
        "keepalive": profile == "rps",
        "stop_rule": {"fixed": None, "min": 3, "max": 10, "target_half_width": 0.02},
        **({"tls_suites": {"TLSv1.3 TLS_AES_256_GCM_SHA384": 3000}} if profile == "tps" else {}),
    }


def _samples(value: float, profile: str, busy: float) -> list[tuple[int, Sample]]:
    metric = "requests_per_second" if profile == "rps" else "handshakes_per_second"
    out: list[tuple[int, Sample]] = []
    for rep, factor in ((0, 0.9), (1, 0.99), (2, 1.0), (3, 1.01)):
        meta: dict[str, Any] = {"server_cpu": {"busy": busy, "steal": 0.0}, "repetition": rep}
        if profile == "tps":
            meta.update(tls_full=1000, tls_reused=0)
        out.append((rep, Sample(metric, value * factor, "x/s", SampleMeta.parse(meta))))
        client = SampleMeta.parse({"client": "gen1"})
        out.append((rep, Sample(metric + ".client", value * factor, "x/s", client)))
    return out


def fill_store(store: Store, inventory: str = "/lab/inventories/lab.yml") -> int:
    """One run of TEST FIXTURE points: measured, invalid, skipped and emulated ones."""
    run_id = store.start_run(
        inventory=inventory,
        argv=["sizing", "run"],
        tool_version="0.1.0",
        options={"cores": [1, 2, 4, 8], "warmup_s": 3.0},
    )
    store.set_environment(run_id, {"srv1": FIXTURE_HOST_FACTS, "gen1": {"cpu_model": "Gen"}})
    for platform, cores, profile, value, lo, hi in FIXTURE_POINTS:
        store.add_point(
            run_id,
            PointResult(
                key=PointKey("srv1", platform, cores, "off", profile),
                status=Status.MEASURED,
                value=value,
                unit="requests/s" if profile == "rps" else "handshakes/s",
                repetitions=3,
                ci_low=lo,
                ci_high=hi,
                metadata=PointMeta.parse(_meta(platform, cores, profile)),
            ),
            _samples(value, profile, 97.0 + cores / 4),
        )
    store.add_point(
        run_id,
        PointResult(
            key=PointKey("srv1", "baremetal", 8, "off", "rps"),
            status=Status.INVALID,
            reason="client-bound: the load generator's CPUs were 98% busy",
            value=210_000.0,
            unit="requests/s",
            repetitions=3,
            flags=("client-bound",),
            metadata=PointMeta.parse(_meta("baremetal", 8, "rps")),
        ),
        _samples(210_000.0, "rps", 61.0),
    )
    store.add_point(
        run_id,
        PointResult(
            key=PointKey("srv1", "baremetal", 8, "off", "tps"),
            status=Status.SKIPPED,
            reason="needs 8 server cores plus at least 1 client core",
        ),
        [],
    )
    store.add_point(
        run_id,
        PointResult(
            key=PointKey("tcg1", "libvirt", 8, "off", "rps"),
            status=Status.MEASURED,
            value=5_600.0,
            unit="requests/s",
            repetitions=3,
            flags=("emulated",),
            metadata=PointMeta.parse(_meta("libvirt", 8, "rps")),
        ),
        [],
    )
    store.finish_run(run_id, "complete")
    return run_id


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "sizing.sqlite"
    with Store(path) as store:
        fill_store(store)
    return path


def guide_request(db: Path | None, **kw: Any) -> GuideRequest:
    """The guide's request as `sizing guide` builds it: the demand (rps, tps, headroom)
    and where the figures come from (Inputs' fields; ``bases``: --basis)."""
    d = {k: kw.pop(k) for k in ("rps", "tps", "headroom") if k in kw}
    if "bases" in kw:
        kw["basis"] = kw.pop("bases")
    if "source" in kw:
        kw["source"] = Source(kw["source"])
    demand = Demand(**d) if ("rps" in d or "tps" in d) else None
    inputs = Inputs(db=db if db is not None else Path("/nonexistent/db"), **kw)
    return GuideRequest(date="2024-01-02", sizing=SizingRequest(demand=demand, inputs=inputs))


def _guide(db: Path | None, **kw: Any) -> Guide:
    return prepare(guide_request(db, **kw)).guide


def _row(block: Any, cores: int) -> list[str]:
    return [c.text for c in next(r for r in block.rows if r[1].text == str(cores))]


# -- formatting --------------------------------------------------------------------------


def test_number_money_percent() -> None:
    assert number(48000.4) == "48,000"
    assert number(None) == "–"
    assert money(2200) == "$2,200"
    assert money(15.625) == "$15.62"
    assert money(15.625, "EUR") == "EUR 15.62"
    assert percent(12.345) == "12.3%"


# -- reference only -----------------------------------------------------------------------


def test_reference_only_guide_is_labelled_and_in_the_articles_shape() -> None:
    g = _guide(None, source="both")
    assert g.reference_only and g.basis == "reference"
    # the buyer's words on the cover and the summary; the ids and why in an appendix
    assert g.basis_text.startswith("Sized on the published reference data (NGINX blog")
    assert "not on measurements of your hardware: Bare metal, ESXi; PowerEdge" in g.basis_text
    assert "reference/" not in g.basis_text and "qualifies" not in g.basis_text
    assert [f.label for f in g.bases][:2] == ["reference/baremetal", "reference/esxi"]
    assert any("reference: no measured basis qualifies" in f.value for f in g.bases)
    first = g.tables[0]
    assert [h for h, _ in first.groups] == ["Hardware cost", "CPU cores", "RPS", "SSL TPS"]
    assert _row(first, 4) == ["$1,300", "4", "192,000", "132,000", "3,200", "2,900"]
    assert {c.source for c in first.rows[0][2:]} == {"reference"}
    cost = g.tables[1]
    one = [c.text for c in cost.rows[0]]
    assert one[1] == "$15.62" and one[5] == "16.7%"  # $750 / 48 and (48k-40k)/48k
    assert g.validity is None and g.runs == ()
    # the chosen group (the testbed's bare metal and ESXi): 4 series x 4 core counts;
    # Kubernetes is another basis, not in this guide
    assert len(g.provenance.rows) == 16
    assert {r[4].text for r in g.provenance.rows} == {"reference"}
    assert "≥300,000 (client-bound)" in {r[3].text for r in g.provenance.rows}
    eight = next(r for r in first.rows if r[1].text == "8")
    assert eight[2].text == "≥300,000 (client-bound)" and eight[3].text == "280,000"
    assert g.overhead_table is None  # reference figures carry no interval


def test_recommendation_and_headlines() -> None:
    g = _guide(None, source="reference", rps=150_000)
    rec = g.recommendation
    assert rec is not None and rec.feasible
    assert rec.headline == "1 server, bare metal, 4 cores each, HT off for $1,300"
    assert any(f.value == "192,000 (published reference figure)" for f in rec.figures)
    labels = {h.label: h for h in g.headlines}
    assert labels["Lowest cost per 1k RPS"].value == "$6.77"
    assert labels["RPS per core, bare metal"].value == "48,000"
    assert labels["RPS per core, bare metal"].source == "reference"


def test_no_demand_no_recommendation() -> None:
    assert _guide(None).recommendation is None


# -- measured -----------------------------------------------------------------------------


def test_measured_figures_win_and_are_labelled(db: Path) -> None:
    g = _guide(db, article_prices=True)
    assert g.basis == "measured"  # one basis group: srv1's bare metal and its KVM guest
    assert g.choice.ids == ("srv1/baremetal/static-128b", "srv1/kvm/static-128b")
    assert g.basis_text.startswith("Sized on figures measured with sizing on srv1: Bare metal,")
    assert g.bases[0].label == "srv1/baremetal/static-128b"
    assert g.bases[0].value.startswith("baremetal; Test CPU")
    assert g.measured_on == (
        "srv1 (bare metal, Test CPU Model 9000)",
        "srv1 (KVM guest, Test CPU Model 9000)",
    )
    # the emulated guest is not in the body, and the summary says where it is
    assert [(x.host, x.option) for x in g.left_out] == [("tcg1", "--include-emulated")]
    assert g.inventories == ("lab",)
    first = g.tables[0]
    assert "srv1/baremetal/static-128b + srv1/kvm/static-128b" in first.title
    assert first.headers[2:4] == ("RPS – Bare metal", "RPS – KVM")
    row = _row(first, 2)
    assert row[2:] == ["98,000", "80,000", "1,630", "1,480"]
    assert {c.source for c in next(r for r in first.rows if r[1].text == "2")[2:]} == {"measured"}
    eight = next(r for r in first.rows if r[1].text == "8")
    # beyond the measured counts: a floor (issue 44), never the emulated 8-core point of
    # another basis
    assert eight[2].source == "floor"
    assert eight[3].source == "floor"
    # no reference table beside it: the reference is another basis, not stitched in
    assert not any("reference/" in t.title for t in g.tables)


def test_unpriced_measured_basis_gets_no_cost(db: Path) -> None:
    g = _guide(db)
    costs = g.tables[1]
    assert {c.text for r in costs.rows for c in r[1:5]} == {"–"}
    assert not any(h.label.startswith("Lowest cost") for h in g.headlines)


def test_headline_never_quotes_an_extrapolated_or_virtualized_figure(db: Path) -> None:
    g = _guide(db, article_prices=True)
    lowest = next(h for h in g.headlines if h.label == "Lowest cost per 1k RPS")
    assert lowest.source == "measured" and "4 cores" in lowest.detail
    assert "srv1/baremetal/static-128b" in lowest.detail
    ref = _guide(None)
    lowest = next(h for h in ref.headlines if h.label == "Lowest cost per 1k RPS")
    assert lowest.source == "reference" and "reference/baremetal" in lowest.detail


def test_overhead_interval_from_both_measured_legs(db: Path) -> None:
    g = _guide(db, article_prices=True)
    ov = {(p.profile, p.cores): p for p in g.overhead}
    p = ov[("rps", 1)]
    assert p.pct == pytest.approx(16.0)  # (50,000 - 42,000) / 50,000
    # the medians' intervals from the three repetitions (0.99x to 1.01x of each figure)
    assert p.low == pytest.approx((1 - 42_000 * 1.01 / (50_000 * 0.99)) * 100)
    assert p.high == pytest.approx((1 - 42_000 * 0.99 / (50_000 * 1.01)) * 100)
    assert ("rps", 8) not in ov  # extrapolated: no overhead
    assert g.overhead_table is not None
    assert any("to" in r[4].text for r in g.overhead_table.rows)


def test_a_paired_overhead_is_marked_paired_in_the_guide(db: Path) -> None:
    """The 1-core RPS legs as one pair (the record a paired run stores on both legs): the
    guide's overhead is the pair's, with its interval, marked paired; the others unpaired."""
    import json
    import sqlite3

    record = {"id": "bm | vm", "kind": "virtualization", "ratios": [0.83, 0.84, 0.85, 0.84]}
    with sqlite3.connect(db) as conn:
        for platform in ("baremetal", "libvirt"):
            (meta,) = conn.execute(
                "SELECT metadata FROM points WHERE platform = ? AND cores = 1 AND profile = 'rps'",
                (platform,),
            ).fetchone()
            conn.execute(
                "UPDATE points SET metadata = ? "
                "WHERE platform = ? AND cores = 1 AND profile = 'rps'",
                (json.dumps({**json.loads(meta), "pair": record}), platform),
            )
    g = _guide(db, article_prices=True)
    ov = {(p.profile, p.cores): p for p in g.overhead}
    one, two = ov[("rps", 1)], ov[("rps", 2)]
    assert one.pairs == 4 and one.pct == pytest.approx(16.0)
    assert (one.low, one.high) == pytest.approx((15.0, 17.0))
    assert two.pairs == 0
    assert g.overhead_table is not None
    legs = {(r[0].text, r[2].text): r[5].text for r in g.overhead_table.rows}
    # the buyer's words: measured in alternation, or apart; never "legs"
    assert legs[("RPS", "1")] == "in alternation (4 pairs, range of 4, 87.5%)"
    assert legs[("RPS", "2")] == "apart (from both figures' intervals, each 75%)"
    assert g.overhead_table.headers[5] == "How measured"
    md = render_markdown(g)
    assert "in alternation (4 pairs, range of 4, 87.5%)" in md


def test_validity_appendix_lists_invalid_skipped_and_emulated(db: Path) -> None:
    g = _guide(db)
    assert g.validity is not None
    statuses = {(r[1].text, r[3].text, r[5].text): r[6].text for r in g.validity.rows}
    assert statuses[("srv1", "8", "RPS")].startswith("invalid")
    assert statuses[("srv1", "8", "SSL TPS")] == "skipped"
    assert statuses[("tcg1", "8", "RPS")].startswith("measured, emulated")
    reasons = " ".join(r[9].text for r in g.validity.rows)
    assert "client-bound" in reasons and "needs 8 server cores" in reasons
    assert any("emulated" in r[6].text for r in g.validity.rows)
    assert any(n.startswith("client-bound:") for n in g.validity.notes)


def test_emulated_figures_shown_not_used_unless_asked(db: Path) -> None:
    g = _guide(db)
    assert g.emulated_table is not None
    assert g.emulated_table.rows[0][2].text == "5,600"
    assert "not used for sizing" in g.emulated_table.notes[0]
    assert not any(f.emulated for f in g.choice.figures)
    g2 = _guide(db, include_emulated=True, bases=("tcg1",), article_prices=True)
    assert g2.choice.ids == ("tcg1/kvm/static-128b-emulated",)
    cell = next(r for r in g2.tables[0].rows if r[1].text == "8")[3]
    assert (cell.text, cell.source, cell.mark) == ("5,600", "emulated", "e")


def test_cpu_points_are_timed_repetitions_only(db: Path) -> None:
    g = _guide(db)
    # 12 measured points and 1 invalid, 3 timed repetitions each; warm-ups and client
    # samples left out; the emulated point stored no samples.
    assert len(g.cpu_points) == 13 * 3
    invalid = [c for c in g.cpu_points if c.status == "invalid"]
    assert {c.busy for c in invalid} == {61.0}


def test_methodology_comes_from_the_stored_metadata(db: Path) -> None:
    m = _guide(db).methodology
    assert m.measured
    srv = next(h for h in m.hosts if h.name == "srv1")
    facts = {f.label: f.value for f in srv.facts}
    assert facts["CPU"] == "Test CPU Model 9000"
    assert facts["CPUs"] == "4 logical, 4 physical cores"
    assert facts["nginx"] == "1.22.1, built with OpenSSL 3.0.11"
    assert "server (nginx)" in srv.role
    settings = {f.label: f.value for f in m.settings}
    assert settings["Load generator"] == "wrk 4.1.0 (every figure)"
    assert settings["Warm-up before the timed repetitions"] == "3 s"
    assert "±2%" in settings["Repetitions"]
    assert "TLS_AES_256_GCM_SHA384" in settings["TLS protocol and cipher negotiated"]
    assert settings["TLS handshakes logged by nginx"] == "18,000 full, 0 resumed"
    assert m.workloads is not None
    rps_row = [c.text for c in m.workloads.rows[0]]
    assert rps_row[:3] == ["RPS", "128 B", "yes"]
    assert "sendfile on;" in m.nginx_directives


def test_nginx_fixed_directives_leave_out_what_depends_on_the_point() -> None:
    template = """{# comment; not a directive; #}
worker_processes {{ nginx_workers }};
{% if nginx_affinity %}
worker_cpu_affinity {{ nginx_affinity }};
{% endif %}
http {
    sendfile on;
    keepalive_requests 1000000;
    # commented_out on;
{% if reuse %}
    ssl_session_cache shared:SIZING:10m;
{% else %}
    ssl_session_cache off;
{% endif %}
    ssl_prefer_server_ciphers on;
}
"""
    assert nginx_fixed_directives(template) == [
        "sendfile on;",
        "keepalive_requests 1000000;",
        "ssl_prefer_server_ciphers on;",
    ]
    real = nginx_fixed_directives((paths.TEMPLATES / "nginx.conf.j2").read_text("utf-8"))
    assert "sendfile on;" in real and not any("{{" in d for d in real)


def test_runs_are_chosen_by_id_or_latest(db: Path) -> None:
    with Store(db) as store:
        second = fill_store(store, inventory="/lab/inventories/other.yml")
    assert [r.record.id for r in read_runs(db, ["latest"])] == [second]
    assert [r.record.id for r in read_runs(db, [])] == [1, second]
    assert _guide(db).inventories == ("lab", "other")
    with pytest.raises(Exception, match="no such run"):
        read_runs(db, ["99"])


def test_build_guide_is_pure_over_its_inputs(db: Path) -> None:
    inputs = load_bases(Inputs(db=db, source=Source.MEASURED), with_runs=True)
    g = build_guide(GuideRequest(date="d"), load_catalog(), load_reference(), inputs, inputs.runs)
    assert g.basis == "measured"
    assert not g.methodology.reference  # no reference series: no reference conditions
    assert g.to_dict()["tables"][0]["rows"][0][2] == "50,000"
    assert g.to_dict()["bases"]["bases"][0]["id"] == "srv1/baremetal/static-128b"


def test_markdown_carries_the_table_and_sections(db: Path) -> None:
    md = render_markdown(_guide(db, rps=100_000))
    for text in ("## 1. Executive summary", "## 3. Sizing table", "Appendix A", "98,000 ^m^"):
        assert text in md
    assert "| Hardware cost |" in md


# -- the chart registry (the hook for latency charts) ------------------------------------


def test_a_registered_chart_is_rendered_and_an_empty_one_left_out() -> None:
    g = _guide(None)
    seen: list[str] = []

    def fake(guide: Guide) -> charts_mod.Chart | None:
        seen.append(guide.basis)
        return charts_mod.Chart("fake", "Fake", "caption", "<svg/>")

    charts_mod.register("fake")(fake)
    charts_mod.register("nothing")(lambda guide: None)
    try:
        out = charts_mod.render_charts(g, only=["fake", "nothing"])
    finally:
        charts_mod.CHARTS.pop("fake")
        charts_mod.CHARTS.pop("nothing")
    assert [c.id for c in out] == ["fake"] and seen == ["reference"]


# -- the command's edges ---------------------------------------------------------------


def test_unknown_run_is_one_clear_line(db: Path, tmp_path: Path) -> None:
    res = runner.invoke(
        app, ["guide", "--db", str(db), "--run", "42", "--out", str(tmp_path / "g.md")]
    )
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [f"error: --run 42: no such run in {db}"]


def test_unwritable_output_is_one_clear_line(tmp_path: Path) -> None:
    out = tmp_path / "missing" / "guide.pdf"
    res = runner.invoke(app, ["guide", "--source", "reference", "--out", str(out)])
    assert res.exit_code == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot write the guide" in lines[0]


def test_format_from_suffix_and_conflicts(tmp_path: Path) -> None:
    out = tmp_path / "g.md"
    res = runner.invoke(app, ["guide", "--source", "reference", "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    assert "# NGINX Sizing Guide" in out.read_text(encoding="utf-8")
    res = runner.invoke(app, ["guide", "--out", str(tmp_path / "g.md"), "--format", "pdf"])
    assert res.exit_code == 2 and "does not match --format pdf" in res.stderr
    res = runner.invoke(app, ["guide", "--out", str(tmp_path / "g.txt")])
    assert res.exit_code == 2 and "cannot tell the format" in res.stderr


def test_markdown_to_stdout(db: Path) -> None:
    res = runner.invoke(app, ["guide", "--db", str(db), "--format", "md", "--run", "latest"])
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith("# NGINX Sizing Guide")
