"""The sizing engine: scaling fits, costs, figure selection, recommendation properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.catalog import load_catalog, load_reference
from sizing.engine import (
    CostCatalog,
    Demand,
    Licence,
    ServerOffer,
    build_series,
    build_table,
    fit,
    latest,
    recommend,
    servers_needed,
    usl,
)
from sizing.engine.scaling import nnls2
from sizing.errors import UsageError
from sizing.model import Figure

REFERENCE = load_reference().figures
CATALOG = load_catalog()


def fig(
    platform: str,
    cores: int,
    value: float,
    *,
    profile: str = "rps",
    ht: str = "off",
    source: str = "measured",
    origin: str = "",
) -> Figure:
    return Figure(
        platform=platform,
        cores=cores,
        ht=ht,
        profile=profile,
        value=value,
        unit="requests/s",
        source=source,
        origin=origin,
    )


# -- scaling ---------------------------------------------------------------------------


def test_nnls2_unconstrained_solution_when_feasible() -> None:
    rows = [(1.0, 2.0), (3.0, 12.0), (7.0, 56.0)]
    b = [0.1 * r[0] + 0.01 * r[1] for r in rows]
    s, k, rss = nnls2(rows, b)
    assert s == pytest.approx(0.1) and k == pytest.approx(0.01) and rss == pytest.approx(0.0)


def test_nnls2_clamps_to_the_sigma_only_boundary() -> None:
    # the free solution has a negative κ (concave-up linearised data): κ = 0, σ alone
    rows = [(1.0, 2.0), (3.0, 12.0), (7.0, 56.0)]
    b = [0.3, 0.6, 0.9]
    s, k, _ = nnls2(rows, b)
    assert k == 0.0 and s > 0.0


def test_nnls2_all_zero_when_superlinear() -> None:
    rows = [(1.0, 2.0), (3.0, 12.0)]
    s, k, _ = nnls2(rows, [-0.1, -0.2])
    assert (s, k) == (0.0, 0.0)


@given(
    sigma=st.floats(0.0, 0.2),
    kappa=st.floats(0.0, 0.01),
    lam=st.floats(100.0, 1e6),
)
def test_fit_recovers_usl_parameters(sigma: float, kappa: float, lam: float) -> None:
    pts = [(n, usl(n, lam, sigma, kappa)) for n in (1, 2, 4, 8, 16)]
    f = fit(pts)
    # retrograde or not, the law is the model (never replaced by a straight line)
    assert f.model == "usl"
    for n, x in pts:
        assert f.predict(n) == pytest.approx(x, rel=1e-3)


def test_fit_searches_lambda_instead_of_pinning_one_core() -> None:
    # A noisy-high 1-core point no longer pins the curve: λ lands below it.
    f = fit([(1, 110000), (2, 190000), (4, 360000), (8, 680000)])
    assert f.model == "usl" and f.lam is not None and f.lam < 110000


def test_a_retrograde_fit_is_kept_and_the_catalog_never_changes_it() -> None:
    pts = [(n, usl(n, 1000.0, 0.05, 0.02)) for n in (1, 2, 4)]  # peaks near 6.9 cores
    f = fit(pts)
    assert f.model == "usl" and fit(pts, upto=32) == f
    assert f.predict(8) < f.predict(6)  # past its peak the law predicts less: so be it
    assert f.r2 is None and "no residual" in f.describe()


def test_fit_falls_back_to_linear_with_last_efficiency() -> None:
    f = fit([(1, 70000), (2, 130000)])
    assert f.model == "linear" and "USL needs 3" in f.note
    assert f.predict(8) == pytest.approx(520000)  # 65,000 per core, the 2-core efficiency
    assert f.predict(1) == pytest.approx(70000)


def test_fit_poor_r2_is_kept_and_flagged_misfit() -> None:
    f = fit([(1, 100), (2, 300), (4, 150), (8, 900)])
    assert f.model == "usl" and f.r2 is not None and f.r2 < 0.9 and f.misfit
    assert "disagree" in f.describe()


def test_fit_rejects_bad_points() -> None:
    with pytest.raises(ValueError):
        fit([])
    with pytest.raises(ValueError):
        fit([(1, 10), (1, 12), (2, 20)])


def test_reference_series_fit_well() -> None:
    series = build_series(REFERENCE)
    assert len(series) == 7  # 2 platforms x 2 profiles + Kubernetes RPS, TPS, TPS with HT
    for s in series.values():
        assert s.fit.model == "usl"
        if len(s.fit.points) > 3:  # Kubernetes: 4 counts, a residual
            assert s.fit.r2 is not None and s.fit.r2 > 0.98
        else:  # three counts (8-core bare metal is a lower bound): no R² to print
            assert s.fit.r2 is None and "R²" not in s.fit.describe()


def test_extrapolated_figures_are_labelled() -> None:
    s = next(v for v in build_series(REFERENCE).values() if v.key == ("baremetal", "off", "rps"))
    assert s.at(4).source == "reference"
    assert s.at(8).bound == "lower"  # client-bound: shown, never fitted
    # beyond the measured counts: a floor on the client-bound 8-core figure (issue 44)
    floor = s.at(16)
    assert floor.source == "floor" and floor.lower_bound and floor.conservative == 300000
    s = next(
        v
        for v in build_series(REFERENCE, allow_extrapolation=True).values()
        if v.key == ("baremetal", "off", "rps")
    )
    f16 = s.at(16)
    assert f16.source == "extrapolated" and f16.origin.startswith("USL fit of")
    assert f16.ci_low is not None and f16.ci_high is not None
    assert f16.ci_low <= f16.value <= f16.ci_high <= 16 * 48000
    # no repetitions: from "no gain beyond the 8-core client-bound lower bound" to the fit
    assert f16.ci_low == 300000
    assert "no repetitions" in f16.interval


# -- costs -----------------------------------------------------------------------------


def test_costs_hardware_only_by_default() -> None:
    assert CATALOG.basis == "hardware only"
    assert CATALOG.server_cost("hypervisor", 4).total == 1300
    with pytest.raises(KeyError):
        CATALOG.server_cost("baremetal", 3)


def test_costs_licence_per_core_yearly_and_power() -> None:
    cat = CostCatalog(
        servers=(ServerOffer(cores=8, price=2200, sockets=2, watts=250),),
        licences={"hypervisor": Licence(per="core", price=100, term="yearly")},
        price_per_kwh=0.2,
        amortisation_months=24,
    )
    bm = cat.server_cost("baremetal", 8)
    hv = cat.server_cost("hypervisor", 8)
    power = 0.25 * 24 * 730 * 0.2  # kW x hours x $/kWh = 876
    assert bm.licence == 0 and bm.power == pytest.approx(power)
    assert hv.licence == pytest.approx(100 * 8 * 2)  # 8 cores, two years
    assert hv.total == pytest.approx(2200 + 1600 + power)
    assert "total cost of ownership over 24 months" in cat.basis


def test_costs_licence_per_socket_once() -> None:
    cat = CostCatalog(
        servers=(ServerOffer(cores=8, price=2200, sockets=2),),
        licences={"hypervisor": Licence(per="socket", price=1500)},
    )
    assert cat.server_cost("hypervisor", 8).total == 2200 + 3000


# -- figure selection ------------------------------------------------------------------


def test_latest_figure_wins() -> None:
    figs = [fig("baremetal", 1, 1.0, origin="run 1"), fig("baremetal", 1, 2.0, origin="run 2")]
    assert [f.origin for f in latest(figs)] == ["run 2"]


# -- demand ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("demand", "message"),
    [
        (Demand(), "no demand"),
        (Demand(rps=0), "--rps must be a positive number"),
        (Demand(tps=-3), "--tps must be a positive number"),
        (Demand(rps=math.nan), "--rps must be a positive number"),
        (Demand(rps=1, headroom=0.95), "--headroom must be between 0 and 90"),
        (Demand(rps=1, headroom=-0.01), "--headroom must be between 0 and 90"),
        (Demand(rps=1, redundancy="n+2"), "unknown redundancy"),
    ],
)
def test_bad_demands(demand: Demand, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        demand.validate()


def test_headroom_bounds_are_allowed() -> None:
    Demand(rps=1, headroom=0.0).validate()
    Demand(rps=1, headroom=0.9).validate()


def test_servers_needed_is_exact_at_capacity() -> None:
    assert servers_needed(2.0, 0.0) == 2
    assert servers_needed(1.6, 0.2) == 2  # 1.6 / 0.8 is 2.0000000000000004 in floats
    assert servers_needed(0.01, 0.5) == 1


def test_max_servers_must_be_positive() -> None:
    with pytest.raises(UsageError, match="--max-servers"):
        recommend(REFERENCE, CATALOG, Demand(rps=1), max_servers=0)


def test_unknown_platform_is_rejected_with_reason() -> None:
    r = recommend(REFERENCE, CATALOG, Demand(rps=1000), platforms=["xen"])
    assert r.recommendation is None
    assert r.rejected[0].reason == "no xen figures"


def test_recommendation_json_shape() -> None:
    doc = recommend(REFERENCE, CATALOG, Demand(rps=200000)).to_dict()
    assert set(doc) >= {"demand", "source", "recommendation", "alternatives"}
    keys = {
        "platform",
        "ht",
        "cores_per_server",
        "servers",
        "total_cost",
        "capacity_rps",
        "capacity_tps",
        "utilization",
        "extrapolated",
    }
    assert keys <= set(doc["recommendation"])
    assert all(keys <= set(a) for a in doc["alternatives"])
    assert doc["source"] == "reference"


def test_table_marks_every_figure_with_its_source() -> None:
    cat = CostCatalog(servers=(*CATALOG.servers, ServerOffer(cores=16, price=4000)))
    t = build_table(REFERENCE, cat)
    assert t.sources_used == ("floor", "reference")
    row16 = t.rows[-1]
    assert row16.cores == 16 and {c.source for c in row16.cells} == {"floor"}
    t = build_table(REFERENCE, cat, allow_extrapolation=True)
    assert {c.source for c in t.rows[-1].cells} == {"extrapolated"}
    assert all(c.overhead_pct is None for c in row16.cells)  # never from extrapolations


# -- properties ------------------------------------------------------------------------

targets = st.one_of(st.none(), st.floats(1.0, 3e6))


def _cost(demand: Demand, **kw: object) -> float | None:
    r = recommend(REFERENCE, CATALOG, demand, **kw)  # type: ignore[arg-type]
    return None if r.recommendation is None else r.recommendation.total_cost


@settings(max_examples=150, deadline=None)
@given(
    rps=targets,
    tps=st.one_of(st.none(), st.floats(1.0, 60000.0)),
    more=st.floats(1.0, 3.0),
    headroom=st.floats(0.0, 0.9),
    redundancy=st.sampled_from(["none", "n+1"]),
    platform=st.sampled_from([None, ["baremetal"], ["hypervisor"], ["kubernetes"]]),
)
def test_higher_demand_never_cheaper(
    rps: float | None,
    tps: float | None,
    more: float,
    headroom: float,
    redundancy: str,
    platform: list[str] | None,
) -> None:
    if rps is None and tps is None:
        rps = 1000.0
    low = Demand(rps=rps, tps=tps, headroom=headroom, redundancy=redundancy)
    high = Demand(
        rps=None if rps is None else rps * more,
        tps=None if tps is None else tps * more,
        headroom=headroom,
        redundancy=redundancy,
    )
    c_low, c_high = _cost(low, platforms=platform), _cost(high, platforms=platform)
    if c_high is not None:
        assert c_low is not None and c_low <= c_high


@settings(max_examples=150, deadline=None)
@given(
    rps=targets,
    tps=st.one_of(st.none(), st.floats(1.0, 60000.0)),
    h1=st.floats(0.0, 0.9),
    h2=st.floats(0.0, 0.9),
    redundancy=st.sampled_from(["none", "n+1"]),
)
def test_more_headroom_never_cheaper(
    rps: float | None, tps: float | None, h1: float, h2: float, redundancy: str
) -> None:
    if rps is None and tps is None:
        tps = 100.0
    lo, hi = sorted((h1, h2))
    c_lo = _cost(Demand(rps=rps, tps=tps, headroom=lo, redundancy=redundancy))
    c_hi = _cost(Demand(rps=rps, tps=tps, headroom=hi, redundancy=redundancy))
    if c_hi is not None:
        assert c_lo is not None and c_lo <= c_hi


@settings(max_examples=100, deadline=None)
@given(rps=st.floats(1.0, 2e6), tps=st.floats(1.0, 40000.0), headroom=st.floats(0.0, 0.9))
def test_recommendation_carries_the_demand(rps: float, tps: float, headroom: float) -> None:
    r = recommend(REFERENCE, CATALOG, Demand(rps=rps, tps=tps, headroom=headroom))
    best = r.recommendation
    if best is None:
        return
    assert best.capacity_rps is not None and best.capacity_tps is not None
    used = rps / best.capacity_rps + tps / best.capacity_tps
    assert used == pytest.approx(best.utilization)
    assert used <= 1 - headroom + 1e-9
    assert all(a.total_cost >= best.total_cost for a in r.alternatives)
