"""Where the socket ends: a prediction beyond one socket from data measured within one
socket is refused without --allow-extrapolation, and labelled and widened with it."""

from __future__ import annotations

import random

from sizing.engine import Basis, Demand, Hardware, Workload, recommend
from sizing.engine.beyond_socket import BEYOND_SOCKET
from sizing.engine.costs import CostCatalog, ServerOffer
from sizing.engine.figures import build_series
from sizing.intervals import median_coverage, median_interval
from sizing.model import Figure


def _basis(sockets: int, per_socket: int, cores: tuple[int, ...]) -> Basis:
    rng = random.Random(7)
    figs = []
    for n in cores:
        reps = tuple(
            30_000.0 * n / (1 + 0.03 * (n - 1)) * rng.lognormvariate(0, 0.02) for _ in range(10)
        )
        got = median_interval(reps)
        assert got is not None
        lo, hi = got
        cover = median_coverage(len(reps))
        figs.append(
            Figure(
                "baremetal",
                n,
                "off",
                "rps",
                sorted(reps)[5],
                "requests/s",
                "measured",
                ci_low=lo,
                ci_high=hi,
                coverage=cover,
                reps=reps,
                basis="h/baremetal/static",
            )
        )
    return Basis(
        id="h/baremetal/static",
        origin="measured",
        platform="baremetal",
        hardware=Hardware("Xeon", sockets, per_socket, 2),
        workload=Workload(role="static", file_size=128),
        software="nginx 1.22",
        physical_host="h",
        figures=tuple(figs),
    )


def _series(b: Basis, allow: bool):  # type: ignore[no-untyped-def]
    (s,) = build_series(b.figures, bases=[b], allow_extrapolation=allow).values()
    return s


def test_beyond_one_socket_is_a_floor_without_allow_extrapolation() -> None:
    s = _series(_basis(2, 8, (1, 2, 4, 8)), allow=False)
    got = s.estimate(16)
    # at least what one socket's 8 cores carry (issue 44): never predicted, never refused
    assert isinstance(got, Figure) and got.source == "floor" and got.lower_bound
    assert got.conservative == s.estimate(8).conservative  # type: ignore[union-attr]
    assert isinstance(s.estimate(6), Figure)  # within the socket: as before


def test_beyond_one_socket_is_labelled_widened_and_has_no_draws() -> None:
    b = _basis(2, 8, (1, 2, 4, 8))
    s = _series(b, allow=True)
    got = s.estimate(16)
    assert isinstance(got, Figure) and BEYOND_SOCKET in got.flags
    eight = s.estimate(8)
    assert isinstance(eight, Figure)
    assert got.ci_low is not None and got.ci_low <= eight.conservative  # no gain beyond
    assert "beyond one socket" in got.interval and got.coverage is None
    # no stated confidence rests on it
    cat = CostCatalog(servers=(ServerOffer(cores=16, price=7900.0),))
    answer = recommend(
        b.figures,
        cat,
        Demand(rps=300_000),
        bases=[b],
        article_prices=True,
        allow_extrapolation=True,
    )
    assert answer.recommendation is not None and answer.recommendation.confidence is None


def test_measured_across_the_socket_or_one_socket_hosts_are_not_labelled() -> None:
    across = _series(_basis(2, 8, (1, 2, 4, 8, 16)), allow=True).estimate(24)
    assert isinstance(across, Figure) and BEYOND_SOCKET not in across.flags
    single = _series(_basis(1, 32, (1, 2, 4, 8)), allow=True).estimate(16)
    assert isinstance(single, Figure) and BEYOND_SOCKET not in single.flags
