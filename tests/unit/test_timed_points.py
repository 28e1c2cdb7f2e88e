"""recommend and table read a point's timed repetitions as the store reads them for the
drift flag (:meth:`sizing.store.Store.timed_points`), without decoding a sample (issue 60:
decoding every sample was half of recommend's read): the values must be those the samples
give under :func:`sizing.store.drift_flag.timed_values`, in order, for every mix of
warm-ups, per-client samples, offered rates and repetitions a point can store."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.model import PointKey, PointResult, Sample, Status
from sizing.records import SampleMeta
from sizing.sources import read_runs
from sizing.store import Store
from sizing.store.drift_flag import timed_values
from tests.labdb import build_lab

# the metrics a point stores: its figure, each client's share, a latency and a CPU figure
METRICS = ("requests_per_second", "requests_per_second.client", "latency_p95_ms", "cpu")


@st.composite
def sample(draw: st.DrawFn) -> tuple[int, Sample]:
    meta: dict[str, object] = {}
    if draw(st.booleans()):
        meta["warmup"] = True
    if draw(st.booleans()):
        meta["rate"] = draw(st.floats(1.0, 1e6))
    value = draw(st.floats(0.0, 1e9, allow_nan=False))
    return draw(st.integers(0, 5)), Sample(
        draw(st.sampled_from(METRICS)), value, "req/s", SampleMeta.parse(meta)
    )


POINT = st.lists(sample(), max_size=12)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(points=st.lists(POINT, min_size=1, max_size=4))
def test_the_timed_repetitions_read_are_the_samples_timed_values(
    tmp_path_factory: object, points: list[list[tuple[int, Sample]]]
) -> None:
    db = Path(str(tmp_path_factory.mktemp("timed"))) / "t.db"  # type: ignore[attr-defined]
    store = Store.for_run(db)
    run = store.start_run(inventory="i", argv=["sizing"], tool_version="t", options={})
    for cores, samples in enumerate(points, start=1):
        key = PointKey("h", "baremetal", cores, "off", "rps")
        result = PointResult(key, Status.MEASURED, value=1000.0, unit="requests/s")
        store.add_point(run, result, samples)
    store.close()
    with Store.open_readonly(db) as ro:
        read, timed = ro.timed_points(run)
        for p in read:
            assert list(timed.get(p.id, ())) == timed_values(ro.samples(p.id))
        assert [p.id for p in read] == [p.id for p in ro.points(run)]
    # the reader that sizes gives each point the same values with or without its samples
    with_samples, without = read_runs(db, ()), read_runs(db, (), samples=False)
    assert not without[0].samples
    for p in with_samples[0].points:
        assert without[0].timed(p.id) == timed_values(with_samples[0].samples[p.id])


def test_a_run_given_without_repetitions_reads_them_from_its_samples(tmp_path: Path) -> None:
    """A run built in memory (a test's, a tool's) with samples alone sizes on them."""
    db = tmp_path / "lab.db"
    build_lab(db, inventory="lab.yml", seed=2)
    (run,) = read_runs(db, ())
    bare = type(run)(run.record, run.points, run.samples)
    checked = 0
    for p in run.points:
        assert bare.timed(p.id) == run.timed(p.id)
        checked += bool(run.timed(p.id))
    assert checked and all(not math.isnan(v) for p in run.points for v in run.timed(p.id))
