"""The mixed-demand model checked against the measured mix (issue 57, part 4).

A store holding the article profiles' RPS and TPS figures and a replay of the customer's
mix on the same host: the answer states the model's prediction for the mix beside the
replay's figure, with their ratio, and says which one it sized on when their intervals do
not overlap. Real SQLite stores filled through the Store API (tests/unit/test_sources.py);
the figures are invented, not measured.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sizing import profiles
from sizing.engine.mixcheck import MixCheck, mix_check
from sizing.model import Status
from tests.unit.test_replay_basis import _replay
from tests.unit.test_sources import REPS, point
from tests.unit.test_stored_profile import _bases, _fill, _named, _profile

RPS, TPS = 1_001.0, 63.0  # the demand: requests and full handshakes a second


def _point(profile: str, k: float) -> object:
    return point("r640-01", "baremetal", 1, profile, [v * k for v in REPS], role="web")


def _store(tmp_path: Path, replay_factor: float, client_bound: bool = False) -> dict:  # type: ignore[type-arg]
    db = tmp_path / "sizing.sqlite"
    rps = _named(
        point("r640-01", "baremetal", 1, "rps", [v * 300 for v in REPS], role="web"), "static-rps"
    )
    tps = _named(
        point("r640-01", "baremetal", 1, "tps", [v * 10 for v in REPS], role="web"), "static-tps"
    )
    (result, samples), definition = _replay("customer-aaaaaaaaaaaa", replay_factor)  # type: ignore[misc]
    if client_bound:
        result = replace(result, status=Status.INVALID, flags=("client-bound", "not-saturated"))
    tps_def = {**profiles.load("static-tps").model_dump(mode="json"), "name": "static-tps"}
    defs = [_profile("static-rps", "requests_per_second"), tps_def, definition]
    _fill(db, [rps, tps, (result, samples)], defs)
    return _bases(db)


def test_the_model_is_set_beside_the_replay_on_the_same_host(tmp_path: Path) -> None:
    bases = _store(tmp_path, 50.0)
    replay = bases["r640-01/baremetal/customer-aaaaaaaaaaaa"]
    (check,) = mix_check([replay], list(bases.values()), RPS, TPS)
    model = bases[check.model]
    cap_r = next(f.value for f in model.figures if f.profile == "rps")
    cap_t = next(f.value for f in model.figures if f.profile == "tps")
    assert math.isclose(check.predicted, RPS / (RPS / cap_r + TPS / cap_t))
    assert check.predicted_low <= check.predicted <= check.predicted_high
    assert math.isclose(check.measured, next(f.value for f in replay.figures))
    text = check.sentence()
    assert f"{check.predicted:,.0f}" in text and f"{check.measured:,.0f}" in text
    assert f"{check.ratio:.2f}" in text and check.model in text
    # the replay at 5,000 a second against a model near 4,400: far beyond both intervals
    assert check.disagree and "sized on the replay" in text and "disagree" in text
    # no TPS demand: the model is the RPS figure alone, nothing to check
    assert mix_check([replay], list(bases.values()), RPS, None) == []


def test_a_client_bound_replay_below_the_model_neither_confirms_nor_contradicts(
    tmp_path: Path,
) -> None:
    bases = _store(tmp_path, 10.0, client_bound=True)
    replay = bases["r640-01/baremetal/customer-aaaaaaaaaaaa"]
    (check,) = mix_check([replay], list(bases.values()), RPS, TPS)
    assert math.isinf(check.measured_high) and not check.disagree
    assert "neither confirms nor contradicts" in check.sentence()
    assert f"≥{check.measured:,.0f}" in check.sentence()


ends = st.floats(min_value=1.0, max_value=1e7)


@settings(max_examples=200, deadline=None)
@given(a=ends, b=ends, c=ends, x=ends, y=ends, z=ends, lower=st.booleans())
def test_disagreement_is_exactly_intervals_that_do_not_overlap(
    a: float, b: float, c: float, x: float, y: float, z: float, lower: bool
) -> None:
    m_lo, m, m_hi = sorted((a, b, c))
    p_lo, p, p_hi = sorted((x, y, z))
    check = MixCheck("r", "m", 1, "off", m, m_lo, math.inf if lower else m_hi, p, p_lo, p_hi)
    overlap = max(m_lo, p_lo) <= min(math.inf if lower else m_hi, p_hi)
    assert check.disagree is (not overlap)
    text = check.sentence()
    assert ("disagree" in text) is check.disagree and "sized on the replay" in text


def test_recommend_states_the_check_when_it_sizes_on_the_replay(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sizing.cli import app

    _store(tmp_path, 50.0)
    got = CliRunner().invoke(
        app,
        [
            "recommend",
            "--rps", "1001", "--tps", "63",
            "--basis", "r640-01/baremetal/customer-aaaaaaaaaaaa",
            "--db", str(tmp_path / "sizing.sqlite"),
            "--article-prices",
        ],
    )  # fmt: skip
    assert got.exit_code == 0, got.output
    assert "the article profiles' model (r640-01/baremetal/static-128b" in got.output
    assert "they disagree beyond their intervals" in got.output
