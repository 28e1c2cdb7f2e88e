"""The shortcuts that keep ``recommend`` fast give what the plain definitions give.

- :func:`sizing.engine.lawdraw.denominator_falls` checks a draw's law denominator at a few whole
  counts (the ends and beside the parabola's vertex) instead of every count below
  ``cores``: over generated σ, κ of either sign it answers as the scan does.
- :meth:`Series.draws <sizing.engine.series.Series.draws>` raises a count's draws to the
  running most of the smaller counts' (kept per count) instead of a pass over each
  smaller count: on the series of a generated lab (tests/labdb.py, simulated figures, not
  measurements) and the reference data, every count's draws equal
  :func:`~sizing.engine.reach.envelope_draws` over every smaller count's, both with and
  without ``--allow-extrapolation``.
- A bootstrap's curve draws are remembered per count (one bootstrap serves recommend, its
  platform comparison and its table): asked again they are the same object, and equal to
  the draws computed as first written.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.catalog import load_reference
from sizing.engine.figures import build_series
from sizing.engine.lawdraw import Falls, curve_at, denominator_falls, held, law_at
from sizing.engine.predict import Bootstrap, bootstrap, remembering
from sizing.engine.reach import envelope_draws, lower_counts
from sizing.engine.series import Series
from sizing.sources import read_runs
from sizing.sources.bases import measured_bases, reference_bases
from sizing.sources.declared import declared_of
from tests.labdb import build_lab


def _scan(sigma: float, kappa: float, cores: int) -> bool:
    """The definition: the denominator at every whole count from 1 to cores - 1."""
    return any(1.0 + sigma * (m - 1.0) + kappa * m * (m - 1.0) <= 1e-3 for m in range(1, cores))


coefficient = st.one_of(
    st.floats(-1.0, 1.0, allow_nan=False),
    st.floats(-1e-3, 1e-3, allow_nan=False),
    st.sampled_from([0.0, -0.0, 1e-300, -1e-300, 5e-324]),
)


@settings(max_examples=500, deadline=None)
@given(sigma=coefficient, kappa=coefficient, cores=st.integers(0, 400))
def test_the_denominators_fall_is_found_as_the_scan_finds_it(
    sigma: float, kappa: float, cores: int
) -> None:
    assert denominator_falls(sigma, kappa, cores) is _scan(sigma, kappa, cores)


@pytest.mark.parametrize(
    "sigma,kappa,cores",
    [
        (-0.4, 0.01, 64),  # the vertex inside: the parabola dips below 1e-3 there only
        (-0.2, -0.001, 10),  # opening downwards: the last count is the least
        (0.05, -0.002, 40),
        (-0.1, 0.0, 12),  # a line: the last count
    ],
)
def test_pinned_falls(sigma: float, kappa: float, cores: int) -> None:
    assert denominator_falls(sigma, kappa, cores) is _scan(sigma, kappa, cores)


@pytest.fixture(scope="module")
def series(tmp_path_factory: pytest.TempPathFactory) -> list[Series]:
    db: Path = tmp_path_factory.mktemp("lab") / "lab.db"
    build_lab(db, inventory="/lab/inventories/lab.yml", cores=(1, 2, 4, 8, 16, 40))
    runs = read_runs(db, ())
    bases = [*measured_bases(runs, declared_of(runs)), *reference_bases(load_reference())]
    figures = [f for b in bases for f in b.figures]
    out: list[Series] = []
    for allow in (False, True):
        made = build_series(
            figures, bases=bases, allow_extrapolation=allow, bootstrapper=remembering(bootstrap)
        )
        out += made.values()
    return out


def test_the_running_envelope_is_the_envelope_over_every_smaller_count(
    series: list[Series],
) -> None:
    checked = 0
    for s in series:
        for cores in (*range(1, 140), 160, 200, 256):
            got = s.draws(cores)
            smaller = [s._draws_at(m) for m in lower_counts(cores)]
            plain = envelope_draws(s._draws_at(cores), smaller)
            assert got == plain, (s.name, s.ht, s.profile, cores)
            checked += got is not None
    assert checked > 1000  # the lab's series have draws: the comparison was made


def _plain_curve(boot: Bootstrap, cores: int) -> tuple[float, ...]:
    """The curve's draws as first written: each draw's linear bound from its medians."""
    d = boot.distance(cores)
    spread = boot.spread or (0.0,) * len(boot.params)
    c = boot.counts
    return tuple(
        held(law_at(cores, p), w * d, cores * max(x / n for x, n in zip(m, c, strict=True)))
        for p, m, w in zip(boot.params, boot.medians, spread, strict=True)
    )


def test_a_bootstraps_curve_draws_are_remembered_and_unchanged(series: list[Series]) -> None:
    boots = {id(s.boot): s.boot for s in series if s.boot is not None and s.boot.params}
    assert boots
    for boot in boots.values():
        for cores in (1, 3, 8, 24, 40, 64, 96):
            first = boot.curve_draws(cores)
            assert boot.curve_draws(cores) is first
            assert first == _plain_curve(Bootstrap.from_json(boot.to_json()), cores)


def test_equal_series_of_one_command_share_what_they_made(
    tmp_path: Path,
) -> None:
    """recommend, its platform comparison and its table build the same series again: with
    one bootstrapper (one command) an equal series shares the first one's figures, and they
    are those of a series built alone."""
    db = tmp_path / "lab.db"
    build_lab(db, inventory="/lab/inventories/lab.yml")
    runs = read_runs(db, ())
    bases = measured_bases(runs, declared_of(runs))
    figures = [f for b in bases for f in b.figures]
    boot = remembering(bootstrap)
    first = build_series(figures, bases=bases, bootstrapper=boot)
    firsts = {k: [s.estimate(n) for n in range(1, 33)] for k, s in first.items()}
    again = build_series(figures, bases=bases, bootstrapper=boot)
    alone = build_series(figures, bases=bases, bootstrapper=remembering(bootstrap))
    shared = 0
    for key, s in again.items():
        if s.boot is not None:
            assert s._memo is first[key]._memo
            shared += 1
        assert [s.estimate(n) for n in range(1, 33)] == firsts[key]
        assert [alone[key].estimate(n) for n in range(1, 33)] == firsts[key]
        assert alone[key]._memo is not s._memo
    assert shared


@settings(max_examples=300, deadline=None)
@given(
    params=st.lists(
        st.tuples(st.floats(1.0, 1e5), coefficient, coefficient), min_size=1, max_size=12
    ),
    asks=st.lists(st.integers(1, 300), min_size=1, max_size=12),
    spread=st.floats(-1.0, 1.0),
    distance=st.floats(0.0, 4.0),
)
def test_every_draw_at_once_is_each_draw_by_the_definitions(
    params: list[tuple[float, float, float]], asks: list[int], spread: float, distance: float
) -> None:
    """:func:`curve_at` with one :class:`Falls` asked counts in any order gives each draw's
    ``held(law_at(...))``, and ``Falls.by`` the scan of every count up to the one asked."""
    falls = Falls(params)
    per_core = [p[0] * 0.9 for p in params]
    spreads = [spread * (i % 3 - 1) for i in range(len(params))]
    for cores in asks:
        got = curve_at(cores, distance, params, per_core, spreads, falls)
        want = tuple(
            held(law_at(cores, p), w * distance, cores * best)
            for p, best, w in zip(params, per_core, spreads, strict=True)
        )
        assert got == want
        for i, (_, sigma, kappa) in enumerate(params):
            assert falls.by(i, cores) is _scan(sigma, kappa, cores + 1)


def test_the_comparisons_observed_rows_give_the_full_tables_overheads(tmp_path: Path) -> None:
    """recommend's platform comparison reads only the observed overheads of a table: built
    with the observed core counts alone they are those of the full table (the catalog's
    other counts are not predicted for nothing)."""
    from sizing.catalog import catalog_from_dict
    from sizing.engine import build_table
    from sizing.engine.versus import overheads

    db = tmp_path / "lab.db"
    build_lab(db, inventory="/lab/inventories/lab.yml")
    runs = read_runs(db, ())
    bases = measured_bases(runs, declared_of(runs))
    figures = [f for b in bases for f in b.figures]
    catalog = catalog_from_dict(
        {"servers": [{"cores": n, "price": 1000.0 * n} for n in (2, 3, 6, 8, 12, 16)]}
    )
    full = build_table(figures, catalog, bases=bases, bootstrapper=remembering(bootstrap))
    some = build_table(
        figures, catalog, bases=bases, bootstrapper=remembering(bootstrap), observed_only=True
    )
    assert overheads(some, "esxi") == overheads(full, "esxi") != ()
    assert {r.cores for r in some.rows} < {r.cores for r in full.rows}
