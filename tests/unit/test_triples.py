"""Three legs: a bare-metal host's HT off (a) and HT on (b) and its HT-off guest (c) on the
same host CPUs, measured in one alternation (A B C, C B A, ...), so that the HT gain
(b / a) and the virtualization overhead (c / a) are both paired; every leg keeps its own
guards and stores the record, and the engine and the outputs read each ratio from it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from sizing import profiles
from sizing.engine.overhead import Legs
from sizing.loadproto import CommandOutput, WindowOutput
from sizing.measure import paired as paired_mod
from sizing.measure.throughput import Throughput
from sizing.model import Ht, PointResult, Status
from sizing.plan import build_plan
from sizing.plan.pairs import PairKind, find_pairs
from sizing.plan.settings import MeasureSettings
from sizing.provision.platforms.base import Target
from sizing.records import PointMeta
from sizing.report.data.pairs import pair_summary
from tests.unit.test_pairs import SMT, WRK, lab

# per leg, the rate of each window in turn: HT on gains 25%, the guest keeps 80%
RATES = {
    "kvm1-metal baremetal 1c ht=off rps": [100.0, 101.0, 99.0, 100.5, 100.0, 99.5],
    "kvm1-metal baremetal 1c ht=on rps": [125.0, 126.0, 124.0, 125.5, 125.0, 124.5],
    "vm1 libvirt 1c ht=off rps": [80.0, 80.5, 79.5, 80.0, 80.2, 79.8],
}


def test_three_legs_alternate_store_both_ratios_and_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inv = lab(tmp_path)
    placement = {"vm1": "kvm1"}
    plan = build_plan(
        inv,  # type: ignore[arg-type]
        {"kvm1": SMT, "kvm1-metal": SMT, "load1": SMT},
        (1,),
        (Ht.OFF, Ht.ON),
        [profiles.load("rps")],
        placement=placement,
    )
    (triple,), notes = find_pairs(plan, inv, placement)  # type: ignore[arg-type]
    assert triple.kind is PairKind.HT and triple.c is not None
    assert "vm1 libvirt 1c ht=on rps" in [n.point for n in notes]  # the HT-on guest: alone
    ran: list[tuple[str, list[int]]] = []

    def run_batch(ctx, point, target, windows, connections, outputs):  # type: ignore[no-untyped-def]
        label = point.key.label()
        ran.append((label, [w.index for w in windows]))
        for w in windows:
            rate = RATES[label][len([r for r in ran if r[0] == label]) - 1]
            out = WindowOutput(
                w.index,
                0.0,
                3.0,
                commands=[CommandOutput([], 0, WRK.replace("RATE", f"{rate:.2f}"))],
            )
            outputs.setdefault("load1", []).append(out)
        return None

    def evaluate(ctx, point, target, outputs, windows, schedule):  # type: ignore[no-untyped-def]
        value = RATES[point.key.label()][0]
        return PointResult(
            point.key,
            Status.MEASURED,
            value=value,
            unit="requests/s",
            repetitions=3,
            metadata=PointMeta(),
        ), []

    monkeypatch.setattr(Throughput, "run_batch", staticmethod(run_batch))
    monkeypatch.setattr(Throughput, "evaluate", staticmethod(evaluate))
    ctx = SimpleNamespace(
        settings=MeasureSettings(repeat=None, max_repeat=6, warmup_s=2, duration_s=3),
        progress=SimpleNamespace(step=lambda text: None),
    )

    def switch(point):  # type: ignore[no-untyped-def]
        return Target(host=point.key.host, address="198.18.9.1", workers=(0,))

    (ra, _), (rb, _), (rc, _) = paired_mod.measure_pair(ctx, triple, switch)  # type: ignore[arg-type]
    a, b, c = (leg.key.label() for leg in triple.legs)
    # A B C, then C B A (C runs twice in a row: no second warm-up), then A B C
    assert ran[:9] == [
        (a, [0, 1]),
        (b, [0, 1]),
        (c, [0, 1]),
        (c, [2]),
        (b, [0, 2]),
        (a, [0, 2]),
        (a, [3]),
        (b, [0, 3]),
        (c, [0, 3]),
    ]
    recs = [r.metadata.pair for r in (ra, rb, rc)]
    assert all(rec is not None and rec.id == triple.id for rec in recs)
    assert [rec.role for rec in recs if rec] == ["a", "b", "c"]
    rec = recs[0]
    assert rec is not None and rec.order.startswith("abccbaabc")
    assert 3 <= len(rec.ratios) == len(rec.c_ratios) <= 6
    assert rec.ratios[0] == pytest.approx(1.25) and rec.c_ratios[0] == pytest.approx(0.8)
    # each ratio read back from the legs: the HT gain from a and b, the overhead from a and c
    gain, share = Legs.of_points(ra, rb).ratio(), Legs.of_points(ra, rc).ratio()
    assert gain is not None and gain.paired and gain.ratio == pytest.approx(1.25, rel=0.01)
    assert share is not None and share.paired and share.ratio == pytest.approx(0.8, rel=0.01)
    apart = Legs.of_points(rb, rc).ratio()
    assert apart is not None and not apart.paired
    summary = pair_summary(rc)
    assert summary is not None and summary["kind"] == "virtualization"
    assert summary["pct"] == pytest.approx(20.0, abs=1.0)
    summary_b = pair_summary(rb)
    assert summary_b is not None and summary_b["kind"] == "ht"
    assert summary_b["pct"] == pytest.approx(25.0, abs=1.0)
