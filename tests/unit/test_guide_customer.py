"""What a customer reads in the guide (issue 34): the box describes the fleet it
recommends, a machine's invalid or virtualized points never pass for bare metal, one mark
has one meaning, money ticks are exact, a lower bound is drawn as one, the costs say what
they include, and a long "how close to the limit" chart is cut to what is close.

TEST FIXTURE: the measured values come from tests/labgen.py (invented, written through the
real Store API); the reference figures are the bundled published dataset.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sizing.app.guide import prepare
from sizing.ceilings import FAR_BELOW
from sizing.cli import app
from sizing.model import VIRTUALIZED_HOST_WORDS
from sizing.report.data import MARKS, Guide, number, percent
from sizing.report.data.chapters import Para, chapters
from sizing.report.render import charts as charts_mod
from sizing.report.render.host_charts import BARS_PER_FIGURE
from sizing.store import Store
from tests.labgen import store_container_run, store_lab
from tests.unit.test_guide_data import guide_request

runner = CliRunner()


def _guide(db: Path | None, **kw: Any) -> Guide:
    """The guide as `sizing guide` builds it (looks: customer, prepared_by; the rest is
    the sizing request, as tests/unit/test_guide_data.guide_request makes it)."""
    looks = {k: kw.pop(k) for k in ("customer", "prepared_by") if k in kw}
    request = replace(guide_request(db, **kw), date="2026-11-26", **looks)
    return prepare(request).guide


@pytest.fixture(scope="module")
def container_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("container") / "sizing.sqlite"
    with Store(path) as store:
        store_container_run(store)
    return path


def test_the_box_describes_the_mixed_fleet_it_recommends() -> None:
    g = _guide(None, rps=200_000.0)
    rec = g.recommendation
    assert rec is not None
    fleet = rec.result.cheaper_mix
    best = rec.result.recommendation
    assert fleet is not None and best is not None and fleet.mixed
    facts = {f.label: f.value for f in rec.facts}
    assert rec.headline.startswith(facts["Fleet"])
    assert facts["CPU utilisation at the target"] == percent(fleet.utilization * 100.0)
    assert facts["RPS capacity"] == f"{number(200_000.0 / fleet.utilization)} requests/s"
    # the identical fleet follows on a line of its own, its lower bound kept
    alone = facts["Instead, all servers alike"]
    assert alone.startswith("1 server, bare metal, 8 cores each") and "≥300,000 RPS" in alone
    assert percent(best.utilization * 100.0) in alone
    # the figures are those of the fleet's servers, not the identical fleet's
    parts = sorted(c.cores_per_server for c, _ in fleet.parts)
    assert [f.label for f in rec.figures] == [f"RPS of one {n}-core server" for n in parts]
    assert facts["How likely it carries the target"].startswith("not known")
    # the engine's step-by-step reasoning (much of it on the identical fleet) is in the
    # engineers' appendix, not under the box's headline
    (eng,) = [c for c in chapters(g, ()) if c.id == "engineers"]
    steps = [r.text for b in eng.blocks if isinstance(b, Para) for r in b.runs]
    assert any("identical fleet" in t for t in steps)


def test_one_mark_one_meaning() -> None:
    assert len(set(MARKS.values())) == len(MARKS)


def test_money_ticks_are_exact() -> None:
    from sizing.report.render.chartkit import chart_style, money_axis, new_figure

    with chart_style():
        fig, (ax,) = new_figure(1)
        ax.plot([1, 8], [0.0, 17.5])
        ax.set_yticks([0.0, 2.5, 5.0, 7.5, 10.0, 12.5, 15.0, 17.5])
        money_axis(ax, "USD")
        fmt = ax.yaxis.get_major_formatter()
        labels = [fmt(v, i) for i, v in enumerate(ax.get_yticks())]
        assert "$12.50" in labels and "$17.50" in labels and "$15.00" in labels
        ax.set_yticks([0.0, 20.0, 40.0, 60.0])  # whole amounts keep whole units
        assert [fmt(v, i) for i, v in enumerate(ax.get_yticks())] == ["$0", "$20", "$40", "$60"]


def test_a_client_bound_figure_is_drawn_as_a_lower_bound() -> None:
    g = _guide(None, rps=200_000.0)
    (chart,) = charts_mod.render_charts(g, only=["throughput"])
    assert "lower bound" in chart.caption and "≥" in chart.caption
    # nothing is predicted beyond the article's figures, and no interval is drawn
    assert "Dotted" not in chart.caption and "Error bars" not in chart.caption
    assert "predicted by the fitted model" not in chart.svg
    assert "≥300k" in chart.svg


def test_a_virtualized_machine_is_left_out_of_the_body(container_db: Path) -> None:
    g = _guide(container_db, rps=200_000.0)
    assert g.reference_only
    assert [(x.host, x.points, x.invalid) for x in g.left_out] == [("localhost", 2, 2)]
    # the terminal's words, and what the facts detected (issue 62: one vocabulary)
    assert f"a {VIRTUALIZED_HOST_WORDS}, detected as KVM" in g.left_out[0].sentence()
    assert "Appendix A" in g.left_out[0].sentence()
    # no chart, limit or host description of the container in the body
    assert g.cpu_points == () and g.limit_points == () and not g.methodology.measured
    assert g.measured_on == ()
    # Appendix A names it as what it is
    assert g.validity is not None
    assert {r[2].text for r in g.validity.rows} == {"Virtualized host"}


def test_included_on_request_it_is_never_bare_metal(tmp_path: Path) -> None:
    db = tmp_path / "sizing.sqlite"
    with Store(db) as store:
        store_container_run(store, valid=True)
    assert _guide(db).left_out[0].sentence().endswith("(--include-virtualized sizes on it).")
    g = _guide(db, include_virtualized=True)
    assert g.left_out == ()
    assert {c.platform for c in g.cpu_points} == {"virtualized-host"}
    assert g.measured_on == ("localhost (virtualized host, AMD EPYC 7B13)",)


def test_the_summary_says_who_when_and_what_the_costs_include() -> None:
    g = _guide(None, prepared_by="Jane Doe", customer="ACME")
    about = {f.label: f.value for f in g.about}
    assert about["Prepared by"] == "Jane Doe" and about["Prepared for"] == "ACME"
    assert about["Date"] == "2026-11-26"
    assert about["Prices"].startswith("NGINX sizing guide hardware prices")
    assert about["Costs include"].startswith("hardware")
    assert "power not priced" in about["Left out of the costs"]
    assert "support not priced" in about["Left out of the costs"]


def test_the_engineers_appendix_has_the_model_in_its_own_words() -> None:
    g = _guide(None)
    models = {f.label: f.value for f in g.methodology.models}
    words = models["Bare metal RPS (HT off)"]
    assert "no interval" in words and "repetitions" not in words


def test_how_close_to_the_limit_keeps_the_close_ones_in_the_body(tmp_path: Path) -> None:
    db = tmp_path / "lab.sqlite"
    with Store(db) as store:
        store_lab(store, hosts=2)  # 64 points
    g = _guide(db)
    assert len(g.limit_points) == 64
    near = [x for x in g.limit_points if x.share is not None and x.share >= FAR_BELOW]
    assert g.limits_table is not None and len(g.limits_table.rows) == len(near) < 64
    assert g.limits_all is not None and len(g.limits_all.rows) == 64
    assert any("Appendix C lists every figure" in x for x in g.limits_text)
    charts = charts_mod.render_charts(g, only=["limits"])
    assert len(charts) == -(-len(near) // BARS_PER_FIGURE) > 1
    assert charts[0].title.endswith(f"(1 of {len(charts)})")


def test_prepared_by_option(tmp_path: Path) -> None:
    out = tmp_path / "guide.md"
    res = runner.invoke(
        app,
        [
            "guide",
            "--db",
            str(tmp_path / "none.sqlite"),
            "--out",
            str(out),
            "--prepared-by",
            "Jane Doe",
        ],
    )
    assert res.exit_code == 0, res.stderr
    assert "Jane Doe" in out.read_text()
