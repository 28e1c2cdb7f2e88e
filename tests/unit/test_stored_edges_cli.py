"""The stored data of issue 45 through the commands a user types (Typer's CliRunner, in
process, on databases written through the Store API as a run writes them): the two
two-run pairs that overflowed, a point with one disturbed repetition, rates no server
has, a recovery file holding absurd numbers, and the guide's cover on a database of
this machine's virtualized-host points. Each answers, or refuses in one line; none is an
internal error. Then the data ``recommend``, ``table`` and ``guide`` build, on generated
series (the in-process use cases; the store read is the one part replaced, by the same
points in memory)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sizing.cli import app
from sizing.model import PointKey, PointResult, Status
from sizing.store import Store, StoredPoint
from sizing.store.recovery import point_record
from tests.labgen import (
    _meta,
    _samples,
    series_points,
    store_container_run,
    store_series,
)

runner = CliRunner()
PAIRS = [(60156.0, 78202.8), (60208.0, 48166.4)]
ERRATIC = [52000.0, 51000.0, 20000.0]  # one disturbed repetition: the point is erratic


def cli(*args: str) -> tuple[int, str, str]:
    got = runner.invoke(app, list(args))
    return got.exit_code, got.stdout, got.stderr


def lab(tmp_path: Path, series: dict[int, Sequence[float]], name: str = "lab") -> Path:
    db = tmp_path / f"{name}.sqlite"
    with Store(db) as store:
        store_series(store, series)
    return db


def no_internal_error(code: int, err: str) -> None:
    assert "internal error" not in err and "Traceback" not in err
    assert code in (0, 1, 2, 3), err


@pytest.mark.parametrize("pair", PAIRS)
def test_a_two_run_pair_answers_in_recommend_table_and_guide(tmp_path: Path, pair: tuple) -> None:
    db = lab(tmp_path, {1: list(pair)})
    code, out, err = cli("recommend", "--rps", "100000", "--article-prices", "--db", str(db))
    assert code == 0, err  # was: internal error: OverflowError: math range error
    assert "× baremetal 1-core" in out and "(measured; range of 2 runs, 50%)" in out
    # the runs that would size the floors name each server once ("the a 2-core server" was)
    assert (
        "To size the 2-core server (1 × 2 cores) on its own figures" in out and "the a " not in out
    )
    code, out, err = cli("table", "--article-prices", "--db", str(db))
    assert code == 0 and f"{sorted(pair)[0] / 2 + sorted(pair)[1] / 2:,.0f} m" in out, err
    html = tmp_path / "g.html"
    code, _, err = cli(
        "guide",
        "--rps",
        "100000",
        "--article-prices",
        "--db",
        str(db),
        "--format",
        "html",
        "--out",
        str(html),
    )
    assert code == 0 and html.is_file(), err


def test_two_runs_claim_no_confidence_in_the_terminal_the_json_or_the_guide(
    tmp_path: Path,
) -> None:
    # below 3 runs a point cannot say how much runs vary (docs/engine.md): the terminal said
    # so while the guide's summary and --json stated a share of the plausible outcomes
    db = lab(tmp_path, {1: list(PAIRS[0])})
    ask = ("recommend", "--rps", "100000", "--article-prices", "--db", str(db))
    code, out, err = cli(*ask)
    assert code == 0 and "is not claimed: 2 repetitions of a point" in out, err
    code, out, err = cli(*ask, "--json")
    assert code == 0, err
    assert json.loads(out)["recommendation"]["confidence"] is None
    html = tmp_path / "g.html"
    code, _, err = cli("guide", *ask[1:], "--format", "html", "--out", str(html))
    assert code == 0, err
    text = html.read_text(encoding="utf-8")
    assert "not claimed: 2 repetitions of a point cannot say how much runs vary" in text
    assert "of the plausible outcomes" not in text
    # --confidence does not size the measured 2-run server type on its draws
    code, out, err = cli(*ask, "--confidence", "0.9")
    no_internal_error(code, err)
    assert "1-core: --confidence needs 3 or more repetitions per point: 2" in out + err


def test_a_point_whose_every_figure_is_erratic_is_charted_without_a_curve(tmp_path: Path) -> None:
    db = lab(tmp_path, {1: ERRATIC})
    code, out, err = cli("recommend", "--rps", "100000", "--article-prices", "--db", str(db))
    assert code == 1 and "1-core figure" in err and "is erratic" in err and "re-measure" in err
    assert err.count("\n") == 1  # one line
    code, out, err = cli("table", "--article-prices", "--db", str(db))
    assert code == 0 and "is erratic" in out, err
    html = tmp_path / "g.html"
    code, _, err = cli("guide", "--db", str(db), "--format", "html", "--out", str(html))
    assert code == 0, err  # was: internal error: IndexError: list index out of range
    text = html.read_text(encoding="utf-8")
    assert "no curve: no figure to fit" in text  # the legend, in the chart
    assert "No curve for Bare metal: none of its figures can be fitted" in text  # caption


def test_a_series_with_one_erratic_count_is_fitted_on_the_others(tmp_path: Path) -> None:
    db = lab(tmp_path, {1: [50e3, 51e3, 50.5e3], 2: ERRATIC, 4: [150e3, 152e3], 8: [2.6e5] * 2})
    html = tmp_path / "g.html"
    code, _, err = cli("guide", "--db", str(db), "--format", "html", "--out", str(html))
    assert code == 0, err
    text = html.read_text(encoding="utf-8")
    assert "Crosses (×): erratic figures" in text and "No curve for" not in text


@pytest.mark.parametrize("scale", [1e-160, 1e100])
def test_rates_no_server_has_are_not_sized_on(tmp_path: Path, scale: float) -> None:
    # stored by an import before it checked them: read back invalid, with the reason
    db = lab(tmp_path, {n: [n * scale, n * scale * 1.01, n * scale * 0.99] for n in (1, 2, 4)})
    code, out, err = cli("recommend", "--rps", "1000", "--article-prices", "--db", str(db))
    assert code == 0, err  # was: OverflowError (1e100), ZeroDivisionError (1e-160)
    assert "no measured basis qualifies" in out and "3 invalid" in out
    code, out, err = cli("table", "--article-prices", "--db", str(db))
    assert code == 0, err
    code, out, err = cli("results", "--verbose", "--db", str(db))
    assert code == 0 and "stored figure out of range" in out and "absurd" in out, err


def _recovery(tmp_path: Path, values: Sequence[float]) -> tuple[Path, Path]:
    db = lab(tmp_path, {1: [50000.0, 51000.0, 50500.0]})
    lines = []
    for cores, v in enumerate(values, start=2):
        key = PointKey("r640-01", "baremetal", cores, "off", "rps")
        meta = _meta("r640-01", "baremetal", cores, "off", "rps", 1.0, "r640-01")
        r = PointResult(
            key,
            Status.MEASURED,
            value=v,
            unit="requests/s",
            repetitions=3,
            ci_low=v,
            ci_high=v,
            metadata=meta,
        )
        lines.append(json.dumps(point_record(1, r, _samples([v, v, v], "rps", first=1))))
    rec = tmp_path / "lab.sqlite.recovery.jsonl"
    rec.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return db, rec


def test_import_refuses_absurd_negative_and_non_finite_numbers(tmp_path: Path) -> None:
    db, rec = _recovery(tmp_path, [98000.0, 1e200, -5.0, math.nan, 1e-160])
    code, out, err = cli("import", str(rec), "--db", str(db))
    assert code == 3 and out == ""
    lines = err.splitlines()
    assert lines[0] == f"error: {rec}:"
    assert lines[1].startswith("  - line 2: value: 1e+200 is absurd (above 1e+12)")
    assert lines[2].startswith("  - line 3: value: -5 is negative")
    assert lines[3].startswith("  - line 4: value: nan is not a finite number")
    assert lines[4].startswith("  - line 5: value: 1e-160/s is absurd (a rate below 0.001/s)")
    assert len(lines) == 5
    with Store.open_readonly(db) as store:
        assert len(store.points()) == 1  # nothing imported


def test_import_takes_numbers_in_range(tmp_path: Path) -> None:
    db, rec = _recovery(tmp_path, [98000.0, 0.0, 1e12, 1e-3])
    code, out, err = cli("import", str(rec), "--db", str(db))
    assert code == 0 and "imported 4 point(s) into run 1" in out, err


def _container(tmp_path: Path, valid: bool) -> Path:
    db = tmp_path / "local.sqlite"
    with Store(db) as store:
        run = store_container_run(store, valid=valid)
        # a core count the 2-core host cannot give: skipped, and it carries no flag
        key = PointKey("localhost", "baremetal", 2, "off", "rps")
        store.add_point(run, PointResult(key, Status.SKIPPED, reason="cannot give 2 cores"), [])
    return db


@pytest.mark.parametrize("valid", [True, False])
def test_the_cover_of_virtualized_host_points_says_one_thing(tmp_path: Path, valid: bool) -> None:
    db = _container(tmp_path, valid)
    html = tmp_path / "g.html"
    code, _, err = cli("guide", "--db", str(db), "--format", "html", "--out", str(html))
    assert code == 0, err
    cover = html.read_text(encoding="utf-8").split('<nav class="toc">')[0]
    # was: "Measured on localhost (virtualized host …); localhost (bare metal …)" beside
    # "Nothing has been measured for this guide"
    assert "Nothing has been measured" not in cover and "bare metal, AMD" not in cover
    assert "<th>Measured on</th>" not in cover
    assert "Reference data only." in cover
    assert "Points were measured on localhost" in cover and "none qualifies for sizing" in cover
    assert "a virtualized host" in cover and "--include-virtualized" in cover


def test_the_cover_of_measured_and_of_reference_data(tmp_path: Path) -> None:
    db = lab(tmp_path, {n: [n * 48e3, n * 48.5e3, n * 47.5e3] for n in (1, 2, 4)})
    code, out, err = cli("guide", "--db", str(db), "--format", "md")
    assert code == 0, err
    assert "**Measured on your hosts.**" in out and "Reference data only" not in out
    code, out, err = cli("guide", "--db", str(tmp_path / "none.sqlite"), "--format", "md")
    assert code == 0, err
    assert "Nothing has been measured for this guide" in out and "Measured on your" not in out


# -- the data the commands build, on generated series ----------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real database: the runs' record, facts and the fit cache's place."""
    db = tmp_path_factory.mktemp("edges") / "lab.sqlite"
    with Store(db) as store:
        store_series(store, {1: [1.0, 1.0]})
    return db


@st.composite
def small_series(draw: st.DrawFn) -> dict[int, list[float]]:
    counts = draw(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=3, unique=True))
    base = 10.0 ** draw(st.floats(-3.0, 12.0))
    spread = draw(st.sampled_from([1.0, 1.02, 1.6, 4.0]))  # identical, noise, wide, erratic
    k = draw(st.sampled_from([2, 2, 3]))
    out = {}
    for n in counts:
        m = min(1e12, base * n)
        out[n] = [min(1e12, max(1e-3, m * spread**i)) for i in range(k)]
    return out


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(series=small_series(), profile=st.sampled_from(["rps", "tps"]))
def test_the_commands_data_answer_on_any_stored_series(
    template: Path, monkeypatch: pytest.MonkeyPatch, series: dict[int, list[float]], profile: str
) -> None:
    import sizing.sources as sources
    from sizing.app.guide import prepare
    from sizing.app.sizing import recommend, table
    from sizing.engine.answer import Demand
    from sizing.report.data.model import GuideRequest
    from sizing.report.render.charts import render_charts
    from sizing.sizing_request import Inputs, SizingRequest

    (run,) = sources.read_runs(template, ())
    points = []
    samples = {}
    for i, (result, s) in enumerate(series_points(series, profile=profile), start=1000):
        points.append(StoredPoint(i, run.record.id, 0.0, result))
        samples[i] = tuple(s)
    fake = [type(run)(run.record, tuple(points), samples)]
    # the store read replaced by the same points in memory (the file is the boundary)
    monkeypatch.setattr(sources, "read_runs", lambda db, selectors, **_: fake)
    inputs = Inputs(db=template, article_prices=True)
    demand = Demand(**{profile: 5000.0})
    got = recommend(SizingRequest(demand=demand, inputs=inputs))
    assert all(isinstance(line, str) for line in got.explanation)
    table(inputs)
    guide = prepare(GuideRequest(sizing=SizingRequest(demand=demand, inputs=inputs))).guide
    charts = render_charts(guide, only=["throughput"])
    assert all(c.svg for c in charts)
