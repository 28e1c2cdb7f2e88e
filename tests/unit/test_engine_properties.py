"""Properties of the engine's inferences (issue 22), on generated series, catalogs and
demands: the fleet search is exact (proved against SciPy's integer-program solver), more
demand never costs less, a wider catalog never costs more, capacities are never negative,
a figure lies inside its interval, a prediction's interval is never relatively narrower
than the nearest measured one, and the catalog never changes a figure."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.engine import CostCatalog, Demand, ServerOffer, recommend
from sizing.engine.figures import build_series
from sizing.engine.fleet import Offer, cheapest
from sizing.model import Figure

# derandomized: the same examples every run (CI never meets a new one by chance)
SETTINGS = settings(max_examples=120, deadline=None, derandomize=True)
EXACT = {"mip_rel_gap": 0.0}  # HiGHS stops within 0.01% of the optimum by default

offers_st = st.lists(
    st.builds(
        Offer,
        price=st.floats(100.0, 20000.0, allow_nan=False),
        share=st.floats(0.002, 2.0, allow_nan=False),
    ),
    min_size=1,
    max_size=6,
)


def milp_cost(offers: list[Offer], need: float, n_plus_1: bool) -> float:
    """The same problem, solved by SciPy's mixed-integer solver (HiGHS)."""
    np = pytest.importorskip("numpy")
    opt = pytest.importorskip("scipy.optimize")
    c = np.array([o.price for o in offers])
    m = np.array([o.share for o in offers])
    ones = np.ones(len(offers))
    if not n_plus_1:
        res = opt.milp(
            c,
            constraints=opt.LinearConstraint(m[None, :], need, np.inf),
            integrality=ones,
            bounds=opt.Bounds(0, np.inf),
            options=EXACT,
        )
        assert res.success
        return float(res.fun)
    best = math.inf
    for k in range(len(offers)):  # k: the largest server present, lost under N+1
        small = m <= m[k]
        lb = np.zeros(len(offers))
        lb[k] = 1
        ub = np.where(small, np.inf, 0.0)
        res = opt.milp(
            c,
            constraints=opt.LinearConstraint((m * small)[None, :], need + m[k], np.inf),
            integrality=ones,
            bounds=opt.Bounds(lb, ub),
            options=EXACT,
        )
        if res.success:
            best = min(best, float(res.fun))
    return best


@SETTINGS
@given(offers=offers_st, need=st.floats(0.05, 60.0), n_plus_1=st.booleans())
def test_fleet_search_is_exact_against_an_integer_program(
    offers: list[Offer], need: float, n_plus_1: bool
) -> None:
    got = cheapest(offers, need, n_plus_1=n_plus_1)
    assert got is not None
    cost, counts = got.cost, got.counts
    carried = sum(o.share * x for o, x in zip(offers, counts, strict=True))
    if n_plus_1:
        carried -= max(o.share for o, x in zip(offers, counts, strict=True) if x > 0)
    assert carried >= need - 1e-6  # feasible
    assert cost == pytest.approx(sum(o.price * x for o, x in zip(offers, counts, strict=True)))
    best = milp_cost(offers, need, n_plus_1)
    if got.exact:
        assert cost == pytest.approx(best, rel=1e-7)  # optimal
    else:  # the node budget ran out (exact ties): within the gap it states
        assert best >= got.bound * (1 - 1e-9) and cost <= best / (1 - got.gap) * (1 + 1e-9)


@SETTINGS
@given(
    offers=offers_st,
    need=st.floats(0.05, 40.0),
    more=st.floats(1.0, 3.0),
    extra=st.builds(Offer, price=st.floats(100.0, 20000.0), share=st.floats(0.002, 2.0)),
)
def test_more_demand_never_costs_less_and_more_choice_never_costs_more(
    offers: list[Offer], need: float, more: float, extra: Offer
) -> None:
    base = cheapest(offers, need)
    bigger = cheapest(offers, need * more)
    wider = cheapest([*offers, extra], need)
    assert base is not None and bigger is not None and wider is not None
    if base.exact and bigger.exact and wider.exact:
        assert bigger.cost >= base.cost - 1e-6
        assert wider.cost <= base.cost + 1e-6


def fig(cores: int, reps: list[float]) -> Figure:
    s = sorted(reps)
    med = s[len(s) // 2]
    return Figure(
        platform="baremetal",
        cores=cores,
        ht="off",
        profile="rps",
        value=med,
        unit="requests/s",
        source="measured",
        basis="lab",
        ci_low=s[0],
        ci_high=s[-1],
        reps=tuple(reps),
    )


@st.composite
def measured_series(draw: st.DrawFn) -> list[Figure]:
    """1, 2, 4 (and maybe 8) cores, 3 to 5 repetitions each, a per-core rate and a
    contention that bends the curve, multiplicative noise up to ±8%."""
    lam = draw(st.floats(1000.0, 100000.0))
    sigma = draw(st.floats(0.0, 0.15))
    kappa = draw(st.floats(0.0, 0.01))
    counts = (1, 2, 4, 8) if draw(st.booleans()) else (1, 2, 4)
    out = []
    for n in counts:
        x = lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))
        k = draw(st.integers(3, 5))
        noise = draw(st.lists(st.floats(-0.08, 0.08), min_size=k, max_size=k))
        out.append(fig(n, [x * (1 + e) for e in noise]))
    return out


@settings(max_examples=40, deadline=None, derandomize=True)
@given(figs=measured_series(), cores=st.sampled_from([3, 6, 8, 12, 16, 24, 32, 64]))
def test_predictions_are_bounded_and_never_narrower_than_what_was_measured(
    figs: list[Figure], cores: int
) -> None:
    (s,) = build_series(figs, allow_extrapolation=True).values()
    got = s.estimate(cores)
    if isinstance(got, str):
        return
    assert got.ci_low is not None and got.ci_high is not None
    assert 0.0 <= got.ci_low <= got.value <= got.ci_high  # inside its interval, never < 0
    if got.source == "measured":
        return  # what was measured is shown as measured (even above the line)
    # linear scaling bounds the estimate from the measured medians, and the interval only
    # from a per-core figure the truth may have (a draw's own), never from a median below it
    assert got.value <= cores * s.linear_cap_per_core * (1 + 1e-9)
    assert s.boot is not None
    per_core = max(x / n for m in s.boot.medians for x, n in zip(m, s.boot.counts, strict=True))
    widen = max(f.ci_high / f.value - 1 for f in figs if f.ci_high is not None)
    assert got.ci_high <= cores * max(per_core, s.linear_cap_per_core * (1 + widen)) * (1 + 1e-9)
    assert got.conservative >= 0.0
    # never relatively narrower than the nearest measured figure, on either side
    below = max((f for f in figs if f.cores < cores), key=lambda f: f.cores, default=None)
    above = min((f for f in figs if f.cores > cores), key=lambda f: f.cores, default=None)
    for near in (below, above):
        if near is None or got.value <= 0:
            continue
        assert near.ci_low is not None and near.ci_high is not None
        assert got.ci_low <= got.value * near.ci_low / near.value * (1 + 1e-9)
        assert got.ci_high >= got.value * near.ci_high / near.value * (1 - 1e-9)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(figs=measured_series(), extra=st.sampled_from([16, 32, 48, 64]))
def test_the_catalog_never_changes_a_figure(figs: list[Figure], extra: int) -> None:
    small = CostCatalog(servers=(ServerOffer(4, 1300.0), ServerOffer(6, 1800.0)))
    big = CostCatalog(servers=(*small.servers, ServerOffer(extra, 9000.0)))
    demand = Demand(rps=figs[0].value * 3)

    def six(cat: CostCatalog) -> list[Figure]:
        r = recommend(figs, cat, demand, allow_extrapolation=True, article_prices=True)
        confs = [c for c in (r.recommendation, *r.alternatives) if c is not None]
        return [f for c in confs for f in c.figures if f.cores == 6]

    assert six(small)  # priced (the figures carry no price of their own), so compared
    assert six(small) == six(big)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    figs=measured_series(),
    rps=st.floats(1000.0, 5e6),
    headroom=st.floats(0.0, 0.5),
    n_plus_1=st.booleans(),
)
def test_a_recommendation_is_never_negative_and_carries_what_it_says(
    figs: list[Figure], rps: float, headroom: float, n_plus_1: bool
) -> None:
    cat = CostCatalog(servers=tuple(ServerOffer(n, 300.0 * n + 500) for n in (1, 2, 4, 8)))
    demand = Demand(rps=rps, headroom=headroom, redundancy="n+1" if n_plus_1 else "none")
    r = recommend(figs, cat, demand)
    for c in (r.recommendation, *r.alternatives):
        if c is None:
            continue
        assert c.total_cost >= 0 and c.capacity_rps is not None and c.capacity_rps >= 0
        assert c.utilization <= 1.0 - headroom + 1e-9
    if r.fleet is not None and r.recommendation is not None:
        assert r.fleet.total_cost <= r.recommendation.total_cost + 1e-6
        assert r.fleet.utilization <= 1.0 - headroom + 1e-9


@settings(max_examples=40, deadline=None, derandomize=True)
@given(figs=measured_series())
def test_the_usl_fit_is_as_good_as_scipy_least_squares(figs: list[Figure]) -> None:
    """The hand-written constrained fit (λ searched, σ and κ by two-variable NNLS) against
    SciPy's bounded least squares on the same per-count means, SciPy started at two
    points: never a worse optimum (0.01% of the squared error, or 1e-9 of the data's sum
    of squares). This test found that σ and κ solved on the linearised law alone were up
    to 6.5% off in squared error and 11% off at 16-32 cores; ``scaling.refine`` closed it."""
    np = pytest.importorskip("numpy")
    opt = pytest.importorskip("scipy.optimize")
    from sizing.engine.scaling import fit, usl

    pts = [(f.cores, sum(f.reps) / len(f.reps)) for f in figs]
    ours = fit(pts)
    assert ours.lam is not None and ours.sigma is not None and ours.kappa is not None
    n = np.array([p[0] for p in pts], dtype=float)
    x = np.array([p[1] for p in pts], dtype=float)

    def resid(v: Any) -> Any:
        lam, s, k = v
        return lam * n / (1 + s * (n - 1) + k * n * (n - 1)) - x

    best = math.inf
    for start in ([x[0], 0.01, 0.001], [max(x / n) * 1.5, 0.1, 0.0001]):
        res = opt.least_squares(
            resid,
            start,
            bounds=([1e-9, 0, 0], [np.inf, np.inf, np.inf]),
            xtol=1e-14,
            ftol=1e-14,
            gtol=1e-14,
        )
        best = min(best, float(np.sum(res.fun**2)))
    mine = sum((usl(c, ours.lam, ours.sigma, ours.kappa) - v) ** 2 for c, v in pts)
    scale = float(np.sum(x**2))
    assert mine <= best * 1.0001 + 1e-9 * scale


@settings(max_examples=30, deadline=None, derandomize=True)
@given(figs=measured_series())
def test_an_interval_widens_with_distance_from_the_measured_cores(figs: list[Figure]) -> None:
    # coverage direction: what is less known is never stated more narrowly
    (s,) = build_series(figs, allow_extrapolation=True).values()
    top = max(f.cores for f in figs)
    widths = []
    for cores in (2 * top, 4 * top, 8 * top):
        got = s.at(cores)
        assert got.ci_low is not None and got.ci_high is not None and got.coverage == 0.95
        if got.value <= 0:
            return
        widths.append((got.ci_high - got.ci_low) / got.value)
    assert widths == sorted(widths)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(figs=measured_series(), k=st.integers(1, 4))
def test_confidence_asked_is_one_distribution_with_the_default(figs: list[Figure], k: int) -> None:
    # asking for more confidence never buys fewer servers; each answer holds what it says
    # in the draws its default states its confidence from, and one server fewer would not
    cat = CostCatalog(servers=(ServerOffer(16, 4000.0),))
    x16 = build_series(figs, allow_extrapolation=True)
    (s,) = x16.values()
    demand = Demand(rps=k * s.at(16).value * 0.8, headroom=0.2)
    default = recommend(
        figs, cat, demand, allow_extrapolation=True, article_prices=True
    ).recommendation
    assert default is not None and default.confidence is not None
    need = 1.0 / (1.0 - demand.headroom)
    draws = s.draws(16)
    assert draws is not None
    counts = []
    for p in (0.5, 0.8, 0.9, 0.95, 0.99):
        got = recommend(
            figs, cat, demand, allow_extrapolation=True, article_prices=True, confidence=p
        )
        rec = got.recommendation
        assert rec is not None and rec.confidence is not None
        assert rec.confidence >= p - 1e-9
        held = sum(rec.servers * d / demand.rps >= need - 1e-9 for d in draws) / len(draws)
        assert held == pytest.approx(rec.confidence)
        if p <= default.confidence:
            assert rec.servers <= default.servers
        counts.append(rec.servers)
    assert counts == sorted(counts)
