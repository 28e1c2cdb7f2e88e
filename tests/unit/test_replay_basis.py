"""Every point of a replayed customer workload belongs to one basis of its own, keyed by
the demand's workload (workload_key): never pooled with the article profiles' figures,
nor with another customer's, and labelled as the customer's workload.

Real SQLite stores, filled through the Store API as ``tests/unit/test_sources.py`` does."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from sizing.loadproto import MixCounts
from sizing.measure.replay_mix import replay_record
from sizing.records import PointMeta, dump
from sizing.report.data.replayed import replayed_blocks
from sizing.sources import read_runs
from tests.unit.test_replay_mix import YOURS, log_lines
from tests.unit.test_sources import REPS, point
from tests.unit.test_stored_profile import _bases, _fill, _named, _profile


def _replay(key: str, factor: float) -> tuple[object, dict[str, object]]:
    got = _named(
        point(
            "r640-01",
            "baremetal",
            1,
            "rps",
            [v * factor for v in REPS],
            role="web",
            tool="vegeta-replay",
            file_size=0,
            customer=key,
        ),
        key,
    )
    definition = {**_profile(key, "requests_per_second"), "generator": "vegeta-replay"}
    return got, {**definition, "file_size": 0, "workload": "{}"}


def test_each_customer_workload_is_a_basis_of_its_own(tmp_path: Path) -> None:
    db = tmp_path / "sizing.sqlite"
    wrk = _named(point("r640-01", "baremetal", 1, "rps", REPS, role="web"), "static-rps")
    a, a_def = _replay("customer-aaaaaaaaaaaa", 0.5)
    b, b_def = _replay("customer-bbbbbbbbbbbb", 0.25)
    _fill(db, [wrk, a, b], [_profile("static-rps", "requests_per_second"), a_def, b_def])
    bases = _bases(db)
    assert sorted(bases) == [
        "r640-01/baremetal/customer-aaaaaaaaaaaa",
        "r640-01/baremetal/customer-bbbbbbbbbbbb",
        "r640-01/baremetal/static-128b",
    ]
    mine = bases["r640-01/baremetal/customer-aaaaaaaaaaaa"]
    assert mine.workload.customer == "customer-aaaaaaaaaaaa"
    assert "your workload replayed" in mine.workload.label()
    assert mine.workload.to_dict()["customer"] == "customer-aaaaaaaaaaaa"
    assert not mine.workload.same_as(bases["r640-01/baremetal/customer-bbbbbbbbbbbb"].workload)
    # in the customer's own requests per second: its figure, not the article profile's
    figure = next(f for f in mine.figures if f.cores == 1)
    static = next(f for f in bases["r640-01/baremetal/static-128b"].figures if f.cores == 1)
    assert figure.value == static.value * 0.5


def test_the_guide_says_your_traffic_replayed_beside_yours(tmp_path: Path) -> None:
    counts = MixCounts()
    for line in log_lines([(1, "-")] * 10):
        counts.add_line(line)
    record = replay_record("customer-aaaaaaaaaaaa", YOURS, counts)
    db = tmp_path / "sizing.sqlite"
    got, definition = _replay("customer-aaaaaaaaaaaa", 0.5)
    result, samples = got  # type: ignore[misc]
    meta = result.metadata.to_json() | {"replay": dump(record)}
    _fill(db, [(replace(result, metadata=PointMeta.parse(meta)), samples)], [definition])
    runs = read_runs(db, ())
    # another customer's guide never shows this replay (the demand's workload key filters)
    assert replayed_blocks(runs, "customer-bbbbbbbbbbbb") == []
    assert len(replayed_blocks(runs, "customer-aaaaaaaaaaaa")) == 1
    (para,) = replayed_blocks(runs)
    text = "".join(r.text for r in para.runs)  # type: ignore[attr-defined]
    assert text.startswith("Your traffic, replayed on r640-01 at 1 core (run 1, basis customer-")
    assert "requests per connection 1.0 (yours 8.0)" in text and "mix-mismatch" in text


def test_a_customer_basis_sizes_only_when_asked(tmp_path: Path) -> None:
    from sizing.engine import choose

    db = tmp_path / "sizing.sqlite"
    wrk = _named(point("r640-01", "baremetal", 1, "rps", REPS, role="web"), "static-rps")
    a, a_def = _replay("customer-aaaaaaaaaaaa", 0.5)
    _fill(db, [wrk, a], [_profile("static-rps", "requests_per_second"), a_def])
    bases = list(_bases(db).values())
    chosen = choose(bases)
    assert chosen.ids == ("r640-01/baremetal/static-128b",)
    assert "sized only when asked (--basis r640-01/baremetal/customer-aaaaaaaaaaaa)" in dict(
        chosen.passed_over
    ).get("r640-01/baremetal/customer-aaaaaaaaaaaa", "")
    asked = choose(bases, ["r640-01/baremetal/customer-aaaaaaaaaaaa"])
    assert asked.ids == ("r640-01/baremetal/customer-aaaaaaaaaaaa",)


def test_a_client_bound_replay_sizes_as_a_lower_bound_and_a_mismatched_one_never(
    tmp_path: Path,
) -> None:
    """On a host whose client core cannot saturate nginx with the customer's mix (this
    2-core machine: vegeta serves about a quarter of what one nginx core does), the replay
    is client-bound: its basis holds it as a lower bound ("≥"), every larger server of the
    CPU on a floor resting on it. A replay whose mix did not match is never sized."""
    from sizing.engine import build_series
    from sizing.model import FigureKind, Status

    db = tmp_path / "sizing.sqlite"
    got, definition = _replay("customer-aaaaaaaaaaaa", 0.5)
    result, samples = got  # type: ignore[misc]
    floor = replace(result, status=Status.INVALID, flags=("client-bound", "not-saturated"))
    other, other_def = _replay("customer-bbbbbbbbbbbb", 0.5)
    wrong, wrong_samples = other  # type: ignore[misc]
    wrong = replace(wrong, status=Status.INVALID, flags=("client-bound", "mix-mismatch"))
    _fill(db, [(floor, samples), (wrong, wrong_samples)], [definition, other_def])
    bases = _bases(db)
    assert list(bases) == ["r640-01/baremetal/customer-aaaaaaaaaaaa"]
    (fig,) = bases["r640-01/baremetal/customer-aaaaaaaaaaaa"].figures
    assert fig.lower_bound and fig.value == floor.value and "client-bound" in fig.flags
    (series,) = build_series(list(bases.values())[0].figures).values()
    at8 = series.estimate(8)
    assert not isinstance(at8, str) and at8.source == FigureKind.FLOOR and at8.lower_bound
    assert at8.conservative == fig.conservative


def test_a_replay_that_sizes_nothing_is_said_beside_the_answer_and_the_refusal(
    tmp_path: Path,
) -> None:
    """The demand's own replay failed its mix check: the answer sized on the role's
    profile figures says so, and so does a refusal; a lower bound is not "nothing"."""
    import pytest

    from sizing.app.sizing import Inputs
    from sizing.engine.choice import Want
    from sizing.engine.roles import WorkloadAsk
    from sizing.errors import UsageError
    from sizing.model import Source, Status
    from sizing.sources import load_bases
    from sizing.workload import Role

    key = "customer-aaaaaaaaaaaa"
    (result, samples), definition = _replay(key, 0.5)  # type: ignore[misc]
    wrong = replace(result, status=Status.INVALID, flags=("client-bound", "mix-mismatch"))
    wrk = _named(point("r640-01", "baremetal", 1, "rps", REPS, role="web"), "static-rps")
    ask = WorkloadAsk(Role.STATIC, "the demand file", customer=key)
    said = "your workload's replay in the store sizes nothing (run 1, r640-01 1c: client-bound, "
    db = tmp_path / "a.sqlite"
    _fill(db, [wrk, (wrong, samples)], [_profile("static-rps", "requests_per_second"), definition])
    got = load_bases(Inputs(db=db), serves=Want(profiles=("rps",)), workload=ask)
    assert said + "mix-mismatch" in got.choice.why
    alone = tmp_path / "b.sqlite"
    _fill(alone, [(wrong, samples)], [definition])
    with pytest.raises(UsageError) as refused:
        load_bases(
            Inputs(db=alone, source=Source.BOTH), serves=Want(profiles=("rps",)), workload=ask
        )
    assert said in str(refused.value) and "--workload DEMAND_FILE" in str(refused.value)
    floor = tmp_path / "c.sqlite"
    bound = replace(result, status=Status.INVALID, flags=("client-bound", "not-saturated"))
    _fill(
        floor, [wrk, (bound, samples)], [_profile("static-rps", "requests_per_second"), definition]
    )
    got = load_bases(Inputs(db=floor), serves=Want(profiles=("rps",)), workload=ask)
    assert "sizes nothing" not in got.choice.why and key in got.choice.why


def test_recommend_on_a_client_bound_replay_says_what_the_bound_means(tmp_path: Path) -> None:
    """The answer on a lower bound: "≥", the fleet possibly larger than needed, never
    smaller, and no confidence drawn from a figure with no high end."""
    from typer.testing import CliRunner

    from sizing.cli import app
    from sizing.model import Status

    key = "customer-aaaaaaaaaaaa"
    (result, samples), definition = _replay(key, 0.5)  # type: ignore[misc]
    bound = replace(result, status=Status.INVALID, flags=("client-bound", "not-saturated"))
    db = tmp_path / "sizing.sqlite"
    _fill(db, [(bound, samples)], [definition])
    args = ["recommend", "--rps", "40", "--basis", f"r640-01/baremetal/{key}"]
    got = CliRunner().invoke(app, [*args, "--db", str(db), "--article-prices"])
    assert got.exit_code == 0, got.output
    text = " ".join(got.stdout.split())
    assert f"Per server: ≥{bound.value:,.0f} RPS (measured; client-bound" in text
    assert "this fleet may be larger than needed, never smaller" in text
    assert "is not drawn: it is sized on a lower bound" in text
