"""A stored point sizes by its run's own profile definition (``profile_defs``, as the run
stored it), not by the bundled profile of its name; and the figures of two load generators
are two bases, never pooled, the non-default one labelled.

Real stores on both engines (``store_url``: SQLite and PostgreSQL), filled through the
Store API as ``tests/unit/test_sources.py`` does."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sizing import profiles
from sizing.model import PointKey
from sizing.paths import Database
from sizing.sources import declared_of, measured_bases, read_runs
from sizing.store import Store
from tests.unit.test_sources import ENV, REPS, point


def _profile(name: str, metric: str) -> dict[str, Any]:
    """The bundled static-rps profile as a user's copy named ``name``, with ``metric``."""
    base = profiles.load("static-rps").model_dump(mode="json")
    return {**base, "name": name, "metric": metric}


def _fill(db: Database, points: list[Any], defs: list[dict[str, Any]]) -> None:
    with Store(db) as store:
        run_id = store.start_run(
            inventory="lab",
            argv=["sizing", "run"],
            tool_version="0",
            options={"profiles": [d["name"] for d in defs], "profile_defs": defs},
        )
        store.set_environment(run_id, {"r640-01": ENV["r640-01"]})
        for result, samples in points:
            store.add_point(run_id, result, samples)
        store.finish_run(run_id, "complete")


def _named(result_samples: Any, profile: str) -> Any:
    result, samples = result_samples
    k = result.key
    key = PointKey(k.host, k.platform, k.cores, k.ht, profile)
    return replace(result, key=key), samples


def _bases(db: Database) -> dict[str, Any]:
    runs = read_runs(db, ())
    return {b.id: b for b in measured_bases(runs, declared_of(runs))}


def test_a_users_profile_sizes_by_its_stored_metric(store_url: Database) -> None:
    db = store_url
    mine = _named(point("r640-01", "baremetal", 1, "rps", REPS, role="web"), "my-static")
    _fill(db, [mine], [_profile("my-static", "requests_per_second")])
    bases = _bases(db)
    # no bundled profile is called my-static: only its stored definition says it sizes
    assert list(bases) == ["r640-01/baremetal/static-128b"]
    assert bases["r640-01/baremetal/static-128b"].core_counts("rps") == (1,)


def test_a_stored_metric_outranks_the_bundled_profile_of_its_name(store_url: Database) -> None:
    db = store_url
    # a user's own static-rps whose metric is not one that sizes: its points size nothing
    mine = _named(point("r640-01", "baremetal", 1, "rps", REPS, role="web"), "static-rps")
    _fill(db, [mine], [_profile("static-rps", "latency_p99_ms")])
    assert _bases(db) == {}


def test_two_generators_figures_are_two_bases(store_url: Database) -> None:
    db = store_url
    wrk = _named(point("r640-01", "baremetal", 1, "rps", REPS, role="web"), "static-rps")
    h2 = _named(
        point("r640-01", "baremetal", 1, "rps", [v * 2 for v in REPS], role="web", tool="h2load"),
        "static-rps-h2load",
    )
    defs = [_profile("static-rps", "requests_per_second")]
    defs.append({**_profile("static-rps-h2load", "requests_per_second"), "generator": "h2load"})
    _fill(db, [wrk, h2], defs)
    bases = _bases(db)
    assert sorted(bases) == [
        "r640-01/baremetal/static-128b",
        "r640-01/baremetal/static-128b-h2load",
    ]
    ours = bases["r640-01/baremetal/static-128b-h2load"]
    assert ours.workload.generator == "h2load"
    assert ours.workload.label().endswith("measured with h2load")
    assert [f.value for f in ours.figures] == [2 * sorted(REPS)[len(REPS) // 2]]
    default = bases["r640-01/baremetal/static-128b"]
    assert default.workload.generator == "" and "measured with" not in default.workload.label()
    assert not default.workload.same_as(ours.workload, "rps")
