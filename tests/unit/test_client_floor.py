"""A measured client-bound point is a lower bound, a floor too, never a reason to refuse
(ENGINE.md, "Beyond the measured cores"), and never more than that.

On a host whose load generator cannot saturate the server (this 2-core machine replaying a
customer's mix with vegeta), the point is flagged client-bound: what the server served is
the least it carries. It sizes as "≥ value" at its count and as a floor above it; a point
with any other invalidating flag (errors, a mix mismatch, an upstream limit, erratic runs)
sizes nothing; an exact figure at the same count replaces it; and with exact figures below
it, the figure at its count is the series' own rule raised to it. The figures here are
constructed (simulated), not measurements.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.engine.figures import build_series, measured_figures
from sizing.engine.predict import bootstrap, remembering
from sizing.engine.series import Series
from sizing.model import Figure, FigureKind, PointKey, PointResult, Status, client_floor


def _point(flags: tuple[str, ...], status: Status = Status.INVALID, cores: int = 1) -> PointResult:
    return PointResult(
        PointKey("lab1", "baremetal", cores, "off", "rps"),
        status,
        value=10_000.0 * cores,
        unit="requests/s",
        ci_low=9_500.0 * cores,
        ci_high=10_500.0 * cores,
        flags=flags,
    )


def test_only_a_point_the_client_alone_limited_is_a_floor() -> None:
    assert client_floor(_point(("client-bound", "not-saturated")))
    assert client_floor(_point(("client-bound", "not-saturated", "virtualized-host", "noisy")))
    for other in ("errors", "mix-mismatch", "upstream-bound", "erratic", "drift", "connections"):
        assert not client_floor(_point(("client-bound", other))), other
    assert not client_floor(_point(("not-saturated",)))  # nothing says the client held it
    assert not client_floor(_point(("client-bound",), Status.MEASURED))  # exact already
    assert not client_floor(_point(("client-bound",), Status.FAILED))


def test_the_floor_is_a_lower_bound_and_an_exact_figure_replaces_it() -> None:
    floor = _point(("client-bound", "not-saturated"))
    (fig,) = measured_figures([(1, 1, floor)], include_emulated=False)
    assert fig.lower_bound and fig.value == 10_000.0 and "client-bound" in fig.flags
    exact = _point((), Status.MEASURED)
    # the exact one wins whichever is newer
    for pts in ([(1, 1, exact), (2, 2, floor)], [(1, 1, floor), (2, 2, exact)]):
        (fig,) = measured_figures(pts, include_emulated=False)
        assert not fig.lower_bound
    assert measured_figures([(1, 1, _point(("client-bound", "errors")))], False) == []


def _fig(cores: int, value: float, bound: str = "", reps: int = 5) -> Figure:
    return Figure(
        platform="baremetal",
        cores=cores,
        ht="off",
        profile="rps",
        value=value,
        unit="requests/s",
        source=FigureKind.MEASURED,
        origin=f"run 1, lab1 ({cores}c)",
        ci_low=value * 0.97,
        ci_high=value * 1.03,
        reps=tuple(value * (1 + 0.01 * (i - reps // 2)) for i in range(reps)),
        coverage=0.9375,
        bound=bound,
        flags=("client-bound", "not-saturated") if bound else (),
        basis="lab1/baremetal/web-1k",
    )


BOOT = remembering(bootstrap)


def _series(figs: list[Figure], allow: bool = False) -> Series:
    (s,) = build_series(figs, bootstrapper=BOOT, allow_extrapolation=allow).values()
    return s


def test_a_series_of_one_client_bound_point_sizes_every_larger_server_on_a_floor() -> None:
    s = _series([_fig(1, 10_000.0, "lower")])
    at1 = s.estimate(1)
    assert isinstance(at1, Figure) and at1.lower_bound and at1.conservative == 9_700.0
    for n in (2, 4, 8, 32):
        got = s.estimate(n)
        assert isinstance(got, Figure), got
        assert got.lower_bound and got.source == FigureKind.FLOOR
        assert got.conservative == at1.conservative and got.ci_high is None
        assert "at least" in got.origin and "lower bound" in got.origin
    bigger = _series([_fig(2, 20_000.0, "lower")]).estimate(1)
    assert isinstance(bigger, str)  # a bound at 2 cores says nothing of 1


@settings(max_examples=60, deadline=None)
@given(
    per_core=st.floats(min_value=1_000.0, max_value=1e6),
    gain=st.floats(min_value=0.5, max_value=1.0),
    bound_at=st.sampled_from([2, 4, 8]),
    bound_ratio=st.floats(min_value=0.2, max_value=3.0),
    allow=st.booleans(),
)
def test_a_bound_above_exact_points_raises_never_lowers(
    per_core: float, gain: float, bound_at: int, bound_ratio: float, allow: bool
) -> None:
    # with --allow-extrapolation too: the fit beyond the exact points is raised to the bound
    exact = [_fig(n, per_core * n**gain) for n in (1, 2, 4, 8) if n < bound_at]
    bound = _fig(bound_at, per_core * bound_at**gain * bound_ratio, "lower")
    without = _series(exact, allow)
    with_bound = _series([*exact, bound], allow)
    for n in (1, 2, 4, 8, 16, 32):
        a, b = without.estimate(n), with_bound.estimate(n)
        if isinstance(b, str):
            assert isinstance(a, str), (n, b)
            continue
        if n >= bound_at:  # the truth there is at least what the server served
            assert b.conservative >= bound.conservative * (1 - 1e-9), (n, b)
        if isinstance(a, Figure):
            assert b.conservative >= a.conservative * (1 - 1e-9), (n, a, b)
        assert math.isfinite(b.value) and b.value >= 0
