"""Issue 62: the run's time estimate holds. Each point's span comes from what it will do
(repetitions to the interval, warm-ups, batches), a skipped point costs nothing, a tool
already built costs nothing, and the time left only falls as points finish.

The recorded timings are a real ``sizing run --cores 1,2,4,8`` (``make run``) on the 2-core
VM (2026-12-05, the log's step lines): every point went to 10 repetitions."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizing import profiles
from sizing.cli.progress import RichProgress
from sizing.inventory import load_inventory
from sizing.model import Ht, PointKey, PointResult, Status
from sizing.paths import ROOT
from sizing.plan import build_plan
from sizing.plan.dryrun import estimate, estimate_words
from sizing.plan.estimate import BATCH_S, TimeBudget, budget, point_span
from sizing.plan.points import PlannedPoint
from sizing.plan.settings import MeasureSettings, Schedule
from sizing.topology import Cpu, Topology

TWO_CORES = Topology(tuple(Cpu(i, i, 0) for i in range(2)))


def plan(cores: tuple[int, ...] = (1, 2, 4, 8)) -> list[PlannedPoint]:
    inv = load_inventory(ROOT / "inventories" / "local.yml")
    profs = (profiles.load("rps"), profiles.load("tps"))
    return build_plan(inv, {"localhost": TWO_CORES}, cores, (Ht.OFF,), profs)


# Recorded on the 2-core VM (see the module docstring): seconds from "provisioning nginx"
# to the point's "[k/8 ...]" line, each at 10 repetitions of 10 s after a 3 s warm-up.
RECORDED_POINT_S = {"rps": 129.0, "tps": 40.0 + 6 * 13.5 + 14.0}
# the first batch (3 s warm-up + 3 x 10 s windows) took 37 to 40 s; each later one 12 to 14 s
RECORDED_FIRST_BATCH_S = (37.0, 40.0)
RECORDED_LATER_BATCH_S = (12.0, 14.0)


def test_a_points_span_holds_the_recorded_timings() -> None:
    points = [p for p in plan() if not p.skipped]
    b = budget(MeasureSettings(), points)
    for p in points:
        low, high = b.points[p.key]
        assert low <= RECORDED_POINT_S[p.key.profile] <= high, (p.key, low, high)
    sch = Schedule.of(MeasureSettings(), points[0].profile)
    # the windows alone: 3 + 1 + 3 x 10 + 2 x 1 = 36 s, then 10 s a later batch
    first = sch.warmup_s + 1.0 + sch.min_reps * (sch.duration_s + 1.0) - 1.0
    assert first + BATCH_S[0] <= RECORDED_FIRST_BATCH_S[0]
    assert first + BATCH_S[1] >= RECORDED_FIRST_BATCH_S[1]
    assert sch.duration_s + BATCH_S[0] <= RECORDED_LATER_BATCH_S[0]
    assert sch.duration_s + BATCH_S[1] >= RECORDED_LATER_BATCH_S[1]


def test_repetitions_to_the_interval_widen_the_span_and_repeat_n_fixes_it() -> None:
    (p, *_) = [p for p in plan() if not p.skipped]
    adaptive = point_span(Schedule.of(MeasureSettings(), p.profile), p)
    fixed = point_span(Schedule.of(MeasureSettings(repeat=3), p.profile), p)
    # adaptive: 3 to 10 repetitions, each later one its own batch
    assert adaptive[1] - adaptive[0] >= 7 * 10.0
    assert fixed[0] == adaptive[0]  # three repetitions either way at the fewest
    assert fixed[1] - fixed[0] == BATCH_S[1] - BATCH_S[0]  # only the batch's lead varies
    short = point_span(Schedule.of(MeasureSettings(repeat=3, duration_s=2.0), p.profile), p)
    assert short[1] == fixed[1] - 3 * 8  # 3 windows of 2 s, not of 10 s
    nowarm = point_span(Schedule.of(MeasureSettings(repeat=3, warmup_s=0.0), p.profile), p)
    assert fixed[0] - nowarm[0] == 4.0  # the warm-up (3 s) and its gap


def test_skipped_points_cost_nothing() -> None:
    full = plan()
    todo = [p for p in full if not p.skipped]
    assert len(full) == 8 and len(todo) == 2  # 2, 4 and 8 cores do not fit 2 cores here
    assert estimate(MeasureSettings(), todo) == estimate(MeasureSettings(), plan((1,)))
    b = budget(MeasureSettings(), todo)
    assert set(b.points) == {p.key for p in todo}


def test_one_time_parts_are_counted_until_the_first_point_ends() -> None:
    todo = [p for p in plan() if not p.skipped]
    bare = budget(MeasureSettings(), todo)
    built = budget(MeasureSettings(), todo, once=[("building the load generators", (240, 360))])
    assert built.total == (bare.total[0] + 240, bare.total[1] + 360)
    assert built.left({todo[0].key}) == bare.left({todo[0].key})
    # a skipped point's result ends no part of the budget
    assert built.left({PointKey("localhost", "baremetal", 8, "off", "rps")}) == built.total


def test_the_plan_and_the_run_say_the_estimate_in_the_same_words() -> None:
    e = estimate(MeasureSettings(repeat=3, duration_s=2.0), [p for p in plan() if not p.skipped])
    text = estimate_words(e)
    assert re.fullmatch(
        r"estimated time: \d+ s to \d+ min \d\d s \(2 point\(s\) in 1 configuration\(s\); "
        r"fewest to most repetitions, \d+ s of it assumed for provisioning and Ansible\)",
        text,
    ), text


spans = st.tuples(st.floats(min_value=0, max_value=1e4), st.floats(min_value=0, max_value=1e4)).map(
    lambda s: (min(s), max(s))
)


@given(
    points=st.lists(spans, min_size=1, max_size=12),
    once=st.lists(spans, max_size=3),
    order=st.randoms(use_true_random=False),
)
def test_the_time_left_only_falls(
    points: list[tuple[float, float]], once: list[tuple[float, float]], order: object
) -> None:
    keys = [PointKey("h", "baremetal", i + 1, "off", "rps") for i in range(len(points))]
    b = TimeBudget(
        tuple((f"part {i}", s) for i, s in enumerate(once)), dict(zip(keys, points, strict=True))
    )
    assert b.left(set()) == pytest.approx(b.total)
    shuffled = list(keys)
    order.shuffle(shuffled)  # type: ignore[attr-defined]
    done: set[PointKey] = set()
    before = b.left(done)
    for k in shuffled:
        done.add(k)
        now = b.left(done)
        assert now[0] <= before[0] + 1e-9 and now[1] <= before[1] + 1e-9
        assert 0 <= now[0] <= now[1] + 1e-9
        before = now
    assert b.left(done) == (0, 0)


def test_the_log_says_the_time_left_from_the_budget_and_it_only_falls(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the old figure was the pace so far: "[1/8, about 14 min 34 s left]" after a first point
    # that had paid for the whole run's set-up, and it jumped by minutes in a second
    full = plan()
    todo = [p for p in full if not p.skipped]
    b = budget(MeasureSettings(), todo, once=[("the crypto ceiling", (2.0, 20.0))])
    with RichProgress(terminal=False) as progress:
        progress.start(len(full), b)
        for p in full:  # in the plan's order, the skipped ones included
            status = Status.SKIPPED if p.skipped else Status.MEASURED
            progress.advance(PointResult(p.key, status, p.skip_reason, value=1.0, unit="x"))
    err = re.sub(r"\n +", " ", capsys.readouterr().err)
    said = [line[20:] for line in err.splitlines()]
    assert said[0].startswith("2 point(s) to measure (6 skipped), ")
    lefts = [_seconds(m) for m in re.findall(r"\[\d/8, (.+?) left\]", err)]
    highs = [hi for _, hi in lefts]
    assert highs == sorted(highs, reverse=True) and len(highs) >= 1
    assert _seconds(said[0].split(", ", 1)[1].removesuffix(" left"))[1] == round(b.total[1])


def _seconds(span: str) -> tuple[int, int]:
    """``1 min 26 s to 3 min 46 s`` -> (86, 226); ``about 45 s`` -> (45, 45)."""

    def one(text: str) -> int:
        h = re.search(r"(\d+) h", text)
        m = re.search(r"(\d+) min", text)
        s = re.search(r"(\d+) s", text)
        return sum(int(x.group(1)) * f for x, f in ((h, 3600), (m, 60), (s, 1)) if x)

    if span.startswith("about "):
        v = one(span)
        return v, v
    low, high = span.split(" to ")
    return one(low), one(high)
