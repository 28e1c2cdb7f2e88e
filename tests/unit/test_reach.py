"""One reach rule on every basis, and capacity monotone in cores (issue 44).

Over the bases of a generated lab database (a 2 × 20-core Xeon Gold 6248 host, bare metal
and an ESXi guest, 1/2/4/8 cores, HT off and on, 10 runs: tests/labdb.py; simulated
figures, not measurements) and the bundled reference data: every series is sized at every
core count from its smallest measured one to 64, on a floor beyond its largest measured
count (a client-bound lower bound included, never refused); with --allow-extrapolation the
fit's prediction is never below a smaller count's, at either end of its interval; and a
generated catalog of 1- and 2-socket servers is sized on every basis.
"""

from __future__ import annotations

import math
import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.catalog import load_reference
from sizing.engine import Demand, recommend
from sizing.engine.costs import CostCatalog, ServerOffer
from sizing.engine.figures import build_series
from sizing.engine.predict import bootstrap, remembering
from sizing.engine.reach import measure_hint
from sizing.engine.series import Series
from sizing.model import Figure, FigureKind
from sizing.sources import read_runs
from sizing.sources.bases import measured_bases, reference_bases
from sizing.sources.declared import declared_of
from tests.labdb import build_lab

TOP = 64


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> list:  # type: ignore[type-arg]
    db: Path = tmp_path_factory.mktemp("lab") / "lab.db"
    build_lab(db, inventory="/lab/inventories/lab.yml")
    runs = read_runs(db, ())
    return [*measured_bases(runs, declared_of(runs)), *reference_bases(load_reference())]


def _series(bases: list, allow: bool) -> dict:  # type: ignore[type-arg]
    figures = [f for b in bases for f in b.figures]
    boot = remembering(bootstrap)
    return build_series(figures, bases=bases, allow_extrapolation=allow, bootstrapper=boot)


def _ends(f: Figure) -> tuple[float, float, float]:
    high = math.inf if f.lower_bound else (f.ci_high if f.ci_high is not None else f.value)
    return f.conservative, f.value, high


def _check_monotone(s: Series, allow: bool) -> int:
    lo = min(f.cores for f in s.exact)
    prev: Figure | None = None
    checked = 0
    for n in range(lo, TOP + 1):
        got = s.estimate(n)
        if isinstance(got, str):
            assert allow is False or n <= max(f.cores for f in s.exact), (s.name, n, got)
            pytest.fail(f"{s.name} {s.ht} {s.profile}: {n} cores refused: {got}")
        if prev is not None:
            (a_lo, a_v, a_hi), (b_lo, b_v, b_hi) = _ends(prev), _ends(got)
            where = f"{s.name} HT {s.ht} {s.profile} {prev.cores}->{n} (allow={allow})"
            assert b_lo >= a_lo * (1 - 1e-9), f"low end falls: {where}: {a_lo} > {b_lo}"
            if not prev.lower_bound:  # a lower bound claims no high end
                assert b_hi >= a_hi * (1 - 1e-9), f"high end falls: {where}: {a_hi} > {b_hi}"
            if not (prev.lower_bound or got.lower_bound):
                assert b_v >= a_v * (1 - 1e-9), f"value falls: {where}: {a_v} > {b_v}"
            d_a, d_b = s.draws(prev.cores), s.draws(n)
            if d_a is not None and d_b is not None and len(d_a) == len(d_b):
                assert all(y >= x * (1 - 1e-9) for x, y in zip(d_a, d_b, strict=True)), where
        prev = got
        checked += 1
    return checked


@pytest.mark.parametrize("allow", [False, True])
def test_capacity_is_monotone_in_cores_on_every_basis_at_every_end(bases, allow) -> None:  # type: ignore[no-untyped-def]
    series = _series(bases, allow)
    platforms = {s.platform for s in series.values()}
    assert {"baremetal", "esxi"} <= platforms
    assert sum(_check_monotone(s, allow) for s in series.values() if s.exact) > 500


def test_one_reach_rule_a_floor_beyond_the_largest_measured_count_on_every_basis(bases) -> None:  # type: ignore[no-untyped-def]
    series = _series(bases, allow=False)
    for s in series.values():
        if not s.exact:
            continue
        top = max(f.cores for f in s.observed)
        for n in (top + 1, 12, 16, 32, 64):
            if n <= top:
                continue
            got = s.estimate(n)
            assert isinstance(got, Figure), (s.name, n, got)
            assert got.source == FigureKind.FLOOR and got.lower_bound, (s.name, n)
            assert f"not measured beyond {top} cores" in got.origin, got.origin
            assert got.ci_high is None  # "at least": no upper end claimed
    # the reference bare metal's 8-core figure is client-bound: a floor, never a refusal
    ref = series[("reference/baremetal", "baremetal", "off", "rps")]
    got = ref.at(12)
    assert got.conservative >= 300_000 and "lower bound" in got.origin


def _catalog(sockets: int) -> CostCatalog:
    offers = tuple(
        ServerOffer(cores=n, price=1000.0 + 150.0 * n, sockets=sockets, name=f"gen-{n}")
        for n in range(max(1, sockets), TOP + 1, sockets)
    )
    return CostCatalog(servers=offers, name="generated")


@pytest.mark.parametrize("sockets", [1, 2])
def test_a_generated_catalog_is_sized_on_every_basis_and_more_cores_never_carry_less(
    bases,  # type: ignore[no-untyped-def]
    sockets: int,
) -> None:
    demand = Demand(rps=350_000, tps=12_000, headroom=0.25, redundancy="n+1")
    figures = [f for b in bases for f in b.figures if b.platform != "kubernetes"]
    for allow in (False, True):
        rec = recommend(
            figures,
            _catalog(sockets),
            demand,
            bases=bases,
            article_prices=True,
            allow_extrapolation=allow,
        )
        refused = [r for r in rec.rejected if r.cores_per_server and r.cores_per_server > 8]
        assert not refused, refused[:3]
        for c in (rec.recommendation, *rec.alternatives):
            assert c is not None
        by: dict = {}  # type: ignore[type-arg]
        for c in (rec.recommendation, *rec.alternatives):
            assert c is not None
            by.setdefault((c.basis, c.platform, c.ht), []).append(c)
        assert {k[1] for k in by} >= {"baremetal", "esxi"}
        for configs in by.values():
            configs.sort(key=lambda c: c.cores_per_server)
            for a, b in zip(configs, configs[1:], strict=False):
                for fa, fb in zip(a.figures, b.figures, strict=True):
                    assert fb.conservative >= fa.conservative * (1 - 1e-9), (a, b)


@settings(max_examples=60, deadline=None)
@given(inventory=st.text(min_size=1, max_size=40), cores=st.integers(1, 128))
def test_the_run_named_is_typed_as_printed_whatever_the_inventory(
    inventory: str, cores: int
) -> None:
    """The suggested run is one a shell reads back with the inventory as one argument: a
    path with spaces, quotes or a colon (an example store's inventory text) stays whole."""
    command, _ = measure_hint(cores, 2, inventory)
    argv = shlex.split(command)
    assert argv[:4] == ["sizing", "run", "-i", inventory]
