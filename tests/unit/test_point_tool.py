"""A point stores the generator that ran it (issue 60): a fixed-rate profile that names a
closed-loop generator (wrk) is offered its rates by the open-loop tool, and is stored as
that tool with that tool's version, never as wrk with vegeta's version."""

from __future__ import annotations

import pytest

from sizing import profiles
from sizing.inventory import load_inventory
from sizing.load.tools import open_loop_tool
from sizing.measure.metadata import latency_metadata
from sizing.model import Ht
from sizing.paths import ROOT
from sizing.plan import build_plan
from sizing.provision.platforms.base import Target
from sizing.topology import Topology


@pytest.mark.parametrize("generator", ["wrk", "vegeta", "oha"])
def test_a_fixed_rate_point_is_stored_as_the_tool_that_offered_its_rates(generator: str) -> None:
    inv = load_inventory(ROOT / "inventories" / "local.yml")
    base = profiles.load("latency")
    prof = base.model_copy(update={"generator": generator})
    (point,) = build_plan(inv, {"localhost": Topology.from_sysfs()}, (1,), (Ht.OFF,), (prof,))
    meta = latency_metadata(point, Target("localhost", "127.0.0.1", (0,)), "http://x/", None)
    ran = open_loop_tool(generator)
    assert ran.name == ("vegeta" if generator == "wrk" else generator)
    assert (meta.env.tool, meta.env.generator, meta.env.tool_version) == (
        ran.name,
        ran.name,
        ran.version,
    )
