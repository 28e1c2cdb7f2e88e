"""A small, seeded run of ``benchmarks/calibration`` (issue 38): simulated lab results from
known curves, stored through the Store API and read back through the app layer the CLI
calls. Its figures are deterministic (seeded); the bounds below are the study's targets,
loosened only for the small sample."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import statistics
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from sizing.intervals import median_coverage

ROOT = Path(__file__).resolve().parents[2]


def _benchmark() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader(
        "calibration", str(ROOT / "benchmarks" / "calibration")
    )
    spec = importlib.util.spec_from_loader("calibration", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["calibration"] = module  # its dataclasses look their module up
    loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    cal = _benchmark()
    got: list[dict[str, Any]] = cal.study(
        tmp_path_factory.mktemp("calibration"),
        ["mild", "retrograde", "client-top", "non-usl"],
        [(1, 2, 4, 8)],
        [3, 10],
        [0.03],
        list(range(8)),
        list(range(8)),
    )
    return got


def test_a_stated_95_percent_holds_beyond_the_measured_cores(rows: list[dict[str, Any]]) -> None:
    hit = [h for r in rows for n in (16, 32) for h in r["at"][n].hit]
    stated = {s for r in rows for n in (16, 32) for s in r["at"][n].stated}
    assert stated == {0.95} and len(hit) == 128
    # the percentile bootstrap it replaces held 83% pooled (issue 38)
    assert sum(hit) / len(hit) >= 0.9


def test_the_16_core_estimate_is_unbiased_from_1_2_4_8_cores(rows: list[dict[str, Any]]) -> None:
    # non-usl (faster than linear from 2 to 4 cores): fitted in throughput it was 13% low,
    # in logs with each count weighted by its runs 3% (docs/engine.md)
    curves = set()
    for r in rows:
        if r["curve"] != "client-top":  # its 8-core point is not a figure: 1/2/4 only
            curves.add(r["curve"])
            assert abs(statistics.median(r["at"][16].bias)) <= 0.10, (r["curve"], r["runs"])
    assert curves == {"mild", "retrograde", "non-usl"}


def test_a_client_bound_top_point_is_not_fitted_and_the_interval_covers(
    rows: list[dict[str, Any]],
) -> None:
    # stored as a real run's guard stores it (invalid, flagged client-bound): the 8-core
    # figure is a prediction from 1/2/4 (stated 95%), not the client's 85% measured as 8
    top = [r for r in rows if r["curve"] == "client-top"]
    assert top and all(set(r["at"][8].stated) == {0.95} for r in top)
    hit = [h for r in top for n in (8, 16, 32) for h in r["at"][n].hit]
    assert len(hit) == 48 and sum(hit) / len(hit) >= 0.85  # unflagged: 0-45% (issue 38)


def test_confidence_stated_or_asked_holds_at_boundary_demands(
    rows: list[dict[str, Any]],
) -> None:
    for key in ("default", "asked"):
        hits = [h for r in rows for h in r[key].hit]
        assert hits, key  # some answers were stated at >= 95% (or asked for)
        assert sum(hits) / len(hits) >= 0.9, key


def test_the_measured_points_state_their_own_coverage(rows: list[dict[str, Any]]) -> None:
    # 8 cores measured at 1/2/4/8 is a measured point: its interval is the range of its
    # runs, stated 75% with 3 runs and 97.9% with 10 (ENGINE.md), never a 95% prediction
    measured = [r for r in rows if r["curve"] != "client-top"]
    stated = {r["runs"]: set(r["at"][8].stated) for r in measured}
    assert stated == {3: {median_coverage(3)}, 10: {median_coverage(10)}}
    assert median_coverage(3) == 0.75 and round(median_coverage(10), 3) == 0.979


def test_a_floor_is_a_one_sided_statement_counted_apart(tmp_path: Path) -> None:
    # client-top at 1/2/4: the 4-core point is client-bound, so 1/2 are the exact counts
    # and every catalog server (8/16/32 cores) is on a floor, "at least" the 2-core
    # figure's low end, with no high end (the study crashed on it: ci_high None)
    cal = _benchmark()
    got = cal.study(tmp_path, ["client-top"], [(1, 2, 4)], [3], [0.03], range(4), range(2))
    (row,) = got
    floors = [row["floor"][n] for n in (8, 16, 32)]
    assert [len(t.hit) for t in floors] == [4, 4, 4]
    assert all(not row["at"][n].hit for n in (8, 16, 32))
    assert all(t.stated == [0.75] * 4 and all(t.hit) and not t.width for t in floors)
    s = cal.summary(got)
    assert s["floors"] == {"75.0%": ("75.0%", "100.0% ± 0.0", "12")}
    assert any(line.startswith("one-sided floors") for line in cal.summary_lines(s))


@pytest.mark.xfail(
    strict=True,
    reason="known since 978dffe (docs/engine.md, the calibration study): beyond a knee at the "
    "last measured count no draw of the law reaches the plateau once each draw is raised to "
    "what fewer cores carry; 92.5-97.5% held before, ~60-70% now",
)
def test_a_plateau_beyond_the_measured_cores_is_covered(tmp_path: Path) -> None:
    cal = _benchmark()
    (row,) = cal.study(tmp_path, ["plateau"], [(1, 2, 4, 8)], [3], [0.03], range(8), range(0))
    hit = [h for n in (16, 32) for h in row["at"][n].hit]
    assert len(hit) == 16 and sum(hit) / len(hit) >= 0.85
