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

ROOT = Path(__file__).resolve().parents[2]


def _benchmark() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("calibration", str(ROOT / "benchmarks" /
                                                                    "calibration"))
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
        tmp_path_factory.mktemp("calibration"), ["mild", "retrograde"], [(1, 2, 4, 8)],
        [3, 10], [0.03], list(range(8)), list(range(8)))
    return got


def test_a_stated_95_percent_holds_beyond_the_measured_cores(rows: list[dict[str, Any]]) -> None:
    hit = [h for r in rows for n in (16, 32) for h in r["at"][n].hit]
    stated = {s for r in rows for n in (16, 32) for s in r["at"][n].stated}
    assert stated == {0.95} and len(hit) == 64
    # the percentile bootstrap it replaces held 83% pooled (issue 38)
    assert sum(hit) / len(hit) >= 0.9


def test_the_16_core_estimate_is_unbiased_from_1_2_4_8_cores(rows: list[dict[str, Any]]) -> None:
    for r in rows:
        assert abs(statistics.median(r["at"][16].bias)) <= 0.10, (r["curve"], r["runs"])


def test_confidence_stated_or_asked_holds_at_boundary_demands(
    rows: list[dict[str, Any]],
) -> None:
    for key in ("default", "asked"):
        hits = [h for r in rows for h in r[key].hit]
        assert hits, key  # some answers were stated at >= 95% (or asked for)
        assert sum(hits) / len(hits) >= 0.9, key
