"""A generator's version is a fact of the point that used it, never of its host (issue 60):
the guide's methodology names the generator and version that measured each figure."""

from __future__ import annotations

from typing import Any, cast

from hypothesis import given
from hypothesis import strategies as st

from sizing.model import PointKey, PointResult, Status
from sizing.records import HostRecord, PointMeta
from sizing.report.data.format import MISSING, PROFILE_LABELS
from sizing.report.data.methodology import _generators, _host_facts
from sizing.report.render.points import CSV_FIELDS, point_json, points_table
from sizing.store import StoredPoint


def stored(host: str, profile: str, tool: str | None, version: str | None) -> Any:
    meta = PointMeta.parse({"tool": tool, "tool_version": version})
    key = PointKey(host, "baremetal", 1, "off", profile)
    return (None, StoredPoint(1, 1, 0.0, PointResult(key, Status.MEASURED, metadata=meta)))


def test_one_generator_measured_every_figure() -> None:
    used = [stored("srv", "rps", "wrk", "4.2.0"), stored("srv", "tps", "wrk", "4.2.0")]
    assert _generators(used) == "wrk 4.2.0 (every figure)"
    assert _generators([]) == "not recorded"


def test_each_generator_names_the_figures_it_measured() -> None:
    used = [
        stored("srv", "rps", "wrk", "4.2.0"),
        stored("srv", "rps", "wrk", "4.2.0"),  # another point of the same figure: once
        stored("srv", "tps", "wrk", "4.1.0"),
        stored("vm", "latency", "vegeta", None),
        stored("vm", "static-rps", None, None),
    ]
    assert _generators(used).split("; ") == [
        "not recorded: vm static-rps",
        "vegeta (version not recorded): vm latency",
        f"wrk 4.1.0: srv {PROFILE_LABELS['tps']}",
        f"wrk 4.2.0: srv {PROFILE_LABELS['rps']}",
    ]


def test_results_name_the_generator_and_version_of_each_point() -> None:
    """``results --verbose`` names what measured each point; ``--json`` and ``--csv`` carry
    it as ``tool`` and ``tool_version``."""
    (_, wrk), (_, bare) = stored("srv", "rps", "wrk", "4.2.0"), stored("vm", "tps", None, None)
    text = points_table([wrk.result, bare.result], verbose=True)
    assert "measured by wrk 4.2.0" in text and f"measured by {MISSING}" in text
    doc = point_json(wrk.result)
    assert (doc["tool"], doc["tool_version"]) == ("wrk", "4.2.0")
    assert {"tool", "tool_version"} <= set(CSV_FIELDS)


def test_a_host_fact_names_no_generator() -> None:
    """What a host script of another version still reports of a generator is kept as it
    reported it, and the guide's host facts never show it."""
    host = HostRecord.parse({"cpu_model": "X", "wrk_version": "4.1.0"})
    assert host.verbatim_facts == {"wrk_version": "4.1.0"}
    assert all("4.1.0" not in f.value for f in _host_facts(host))


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b"]),
            st.sampled_from(["rps", "tps"]),
            st.sampled_from(["wrk", "oha", None]),
            st.sampled_from(["1", "2", None]),
        ),
        max_size=8,
    )
)
def test_every_figure_is_named_with_its_generator(points: list[Any]) -> None:
    """Every figure's generator and version is in the text, each generator once."""
    used = [stored(*p) for p in points]
    text = _generators(used)
    for _, p in used:
        env = cast(StoredPoint, p).result.metadata.env
        assert (env.measured_by or "not recorded") in text
    parts = text.removesuffix(" (every figure)").split("; ")
    heads = [part.split(": ")[0] for part in parts]
    assert len(heads) == len(set(heads))
