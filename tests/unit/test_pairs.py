"""Paired legs: which points the plan pairs and why others stay unpaired, the paired
ratio's interval, and a simulation of drift against paired and unpaired legs.

The inventories here name hosts in 198.18.9.0/24 (RFC 2544 benchmarking range, never
routed); nothing is contacted: the plan is built from captured ``lscpu`` topologies.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sizing import profiles
from sizing.engine.overhead import Comparison, Legs
from sizing.intervals import PairedRatio, median_coverage
from sizing.inventory import load_inventory
from sizing.loadproto import CommandOutput, WindowOutput
from sizing.model import Ht, PointKey, PointResult, Status
from sizing.plan import build_plan
from sizing.plan.document import PlanDocument, PlanEstimate, PlanPair, PlanUnpaired
from sizing.plan.dryrun_text import pairs_text
from sizing.plan.pairs import PairKind, find_pairs, leg_order
from sizing.records import PointMeta
from sizing.topology import Topology

DATA = Path(__file__).parent.parent / "data" / "lscpu"
SMT = Topology.from_lscpu((DATA / "poweredge_r640_2x8c_ht.txt").read_text())  # 2x8c, HT
NO_SMT = Topology.from_lscpu((DATA / "this_machine_2cpu.txt").read_text())  # this VM

KVM_LAB = """
all:
  children:
    hypervisors:
      hosts:
        kvm1:
          ansible_host: 198.18.9.30
          sizing_hypervisor: {{uri: 'qemu+ssh://root@198.18.9.30/system'}}
    servers:
      hosts:
        kvm1-metal: {{ansible_host: 198.18.9.30}}
        vm1:
          ansible_host: 198.18.9.31
          sizing_platform: libvirt
          sizing_vm: {{domain: vm1, hypervisor: kvm1, disk: /d.qcow2, bridge: br0}}
{more}
    clients:
      hosts:
        load1: {{ansible_host: 198.18.9.50}}
"""


def lab(tmp_path: Path, more: str = "") -> object:
    path = tmp_path / "inv.yml"
    path.write_text(KVM_LAB.format(more=more))
    return load_inventory(path)


def test_a_guest_pairs_with_its_own_hosts_bare_metal_and_ht_pairs_form_from_the_rest(
    tmp_path: Path,
) -> None:
    inv = lab(tmp_path, "        other-metal: {ansible_host: 198.18.9.40}")
    topologies = {"kvm1": SMT, "kvm1-metal": SMT, "other-metal": SMT, "load1": SMT}
    placement = {"vm1": "kvm1"}
    plan = build_plan(
        inv,  # type: ignore[arg-type]
        topologies,
        (1, 2),
        (Ht.OFF, Ht.ON),
        [profiles.load("rps")],
        placement=placement,
    )
    pairs, notes = find_pairs(plan, inv, placement)  # type: ignore[arg-type]
    triples = [p for p in pairs if p.c is not None]
    ht = [p for p in pairs if p.kind is PairKind.HT and p.c is None]
    assert not [p for p in pairs if p.kind is PairKind.VIRTUALIZATION]
    # the guest with kvm1-metal (the same address as its hypervisor kvm1), never with
    # other-metal: HT off (a), HT on (b) and the HT-off guest (c), once per core count
    assert {(p.a.key.host, p.b.key.host, p.c.key.host) for p in triples if p.c} == {
        ("kvm1-metal", "kvm1-metal", "vm1")
    }
    assert {(p.a.key.cores, p.a.key.ht, p.b.key.ht, p.c.key.ht) for p in triples if p.c} == {
        (1, "off", "on", "off"),
        (2, "off", "on", "off"),
    }
    for p in triples:  # the overhead's legs on the same host CPUs
        assert p.c is not None and p.a.allocation is not None and p.c.allocation is not None
        assert p.a.allocation.server_cpus == p.c.allocation.server_cpus
        assert p.id == f"{p.a.key.label()} | {p.b.key.label()} | {p.c.key.label()}"
    # HT pairs of two legs: other-metal's
    assert {(p.a.key.host, p.a.key.cores, p.a.key.ht, p.b.key.ht) for p in ht} == {
        ("other-metal", 1, "off", "on"),
        ("other-metal", 2, "off", "on"),
    }
    on = next(p for p in ht if p.a.key.cores == 2).b
    assert on.allocation is not None and len(on.allocation.server_cpus) == 4  # 2 cores x 2
    by = {n.point: n.reason for n in notes}
    # the HT-on guest gives its bare-metal partner to the three legs, and says so
    assert "measured in three legs" in by["vm1 libvirt 1c ht=on rps"]
    assert not any("already in a virtualization pair" in r for r in by.values())
    # HT off only: the guest pairs with its host's bare metal, two legs
    plan = build_plan(
        inv,
        topologies,
        (1,),
        (Ht.OFF,),
        [profiles.load("rps")],
        placement=placement,  # type: ignore[arg-type]
    )
    (virt,), _ = find_pairs(plan, inv, placement)  # type: ignore[arg-type]
    assert (virt.kind, virt.a.key.host, virt.b.key.host, virt.c) == (
        PairKind.VIRTUALIZATION,
        "kvm1-metal",
        "vm1",
        None,
    )


def test_no_smt_says_why_no_ht_pair_is_formed(tmp_path: Path) -> None:
    path = tmp_path / "inv.yml"
    path.write_text(
        "all:\n  children:\n    servers:\n      hosts:\n        localhost: {}\n"
        "    clients:\n      hosts:\n        localhost: {}\n"
    )
    inv = load_inventory(path)
    plan = build_plan(inv, {"localhost": NO_SMT}, (1,), (Ht.OFF, Ht.ON), [profiles.load("rps")])
    pairs, notes = find_pairs(plan, inv, {})
    assert pairs == []
    (note,) = notes
    assert note.point == "localhost"
    assert note.reason == (
        "no HT pair is formed: the HT-on leg is skipped (hyper-threading is not available on "
        "this host (one thread per core))"
    )


def test_latency_and_vsphere_legs_stay_unpaired_with_a_reason(tmp_path: Path) -> None:
    inv = lab(
        tmp_path,
        "        esx-vm:\n          ansible_host: 198.18.9.32\n          sizing_platform: vsphere\n"
        "          sizing_vm: {name: esx-vm}\n",
    )
    topologies = {"kvm1": SMT, "kvm1-metal": SMT, "load1": SMT, "esx-vm": SMT}
    plan = build_plan(
        inv,  # type: ignore[arg-type]
        topologies,
        (1,),
        (Ht.OFF,),
        [profiles.load("rps"), profiles.load("latency")],
        placement={"vm1": "kvm1"},
    )
    pairs, notes = find_pairs(plan, inv, {"vm1": "kvm1"})  # type: ignore[arg-type]
    assert [(p.a.key.profile, p.b.key.host) for p in pairs] == [("rps", "vm1")]
    by = {n.point: n.reason for n in notes}
    assert any("latency curves are not interleaved" in r for r in by.values())
    vs = [r for p, r in by.items() if p.startswith("esx-vm")]
    assert vs and all("ESXi host is not a Linux nginx host" in r for r in vs)


def test_leg_order_alternates_so_a_trend_cancels() -> None:
    assert [leg_order(i) for i in range(4)] == [("a", "b"), ("b", "a"), ("a", "b"), ("b", "a")]


def test_three_legs_alternate_so_a_trend_cancels_in_both_ratios() -> None:
    """A B C, C B A, ...: over two rounds each of b and c runs as often before a as after it,
    by the same distance, so a host that slows linearly leaves both ratios unbiased."""
    rounds = [leg_order(i, 3) for i in range(4)]
    assert rounds == [("a", "b", "c"), ("c", "b", "a")] * 2
    for other in ("b", "c"):
        gaps = []
        for i in range(len(rounds)):
            where = {leg: 3 * i + j for j, leg in enumerate(rounds[i])}
            gaps.append(where[other] - where["a"])
        assert sum(gaps) == 0 and len(set(map(abs, gaps))) == 1, (other, gaps)

    # a host that slows 2% per window: the alternated rounds' mean ratio stays within a
    # fraction of the error the same windows make in a fixed order (A B C every round)
    def error(order: list[tuple[str, ...]], other: str, share: float) -> float:
        ratios = []
        for i, legs in enumerate(order):
            where = {leg: 3 * i + j for j, leg in enumerate(legs)}
            ratios.append(share * (1 - 0.02 * where[other]) / (1 - 0.02 * where["a"]))
        return abs(sum(ratios) / len(ratios) / share - 1)

    fixed = [("a", "b", "c")] * len(rounds)
    for other, share in (("b", 1.25), ("c", 0.8)):
        assert error(rounds, other, share) < error(fixed, other, share) / 5, other


def test_the_plan_text_shows_each_pair_and_its_order(tmp_path: Path) -> None:
    doc = _document(
        pairs=[PlanPair("overhead", "overhead", "A", "B", None, "AB BA AB ...", "3 to 10")],
        unpaired=[PlanUnpaired("h", "no HT pair is formed: x")],
    )
    text = "\n".join(pairs_text(doc))
    assert "overhead: A A  /  B B; order AB BA AB ... (3 to 10 pairs)" in text
    assert "not paired:\n  h: no HT pair is formed: x" in text
    assert pairs_text(_document(pairs=None, unpaired=None)) == []


def _document(**kw: Any) -> PlanDocument:
    return PlanDocument(
        None, "lab.yml", None, False, [], None, [], PlanEstimate(0, 0, 0, 0, 0), [], [], **kw
    )


# -- the paired figure ------------------------------------------------------------------


def test_paired_ratio_is_the_median_of_the_per_pair_ratios_with_its_interval() -> None:
    got = PairedRatio.of([100, 110, 90, 105, 95, 100], [80, 88, 72, 84, 77, 79])
    assert got is not None and got.paired and got.pairs == 6
    bare, guest = [100, 110, 90, 105, 95, 100], [80, 88, 72, 84, 77, 79]
    ratios = sorted(b / a for a, b in zip(bare, guest, strict=True))
    assert got.ratio == pytest.approx(statistics.median(ratios))
    assert (got.low, got.high) == (ratios[0], ratios[-1])  # n=6: k=1, 96.9%
    assert got.coverage == pytest.approx(median_coverage(6))
    value, lo, hi = Comparison(PairKind.VIRTUALIZATION, got).percent()
    assert value == pytest.approx((1 - got.ratio) * 100)
    assert lo == pytest.approx((1 - ratios[-1]) * 100) and hi == pytest.approx(
        (1 - ratios[0]) * 100
    )
    assert got.words() == "6 pairs, range of 6, 96.9%"
    assert PairedRatio.of([0, 1], [1, 1]) is None and PairedRatio.of([], []) is None


def test_engine_uses_the_pair_only_when_both_legs_carry_it() -> None:
    from sizing.engine.compare import paired

    record = {"id": "A | B", "ratios": [0.8, 0.82, 0.79]}

    def leg(
        platform: str, value: float, pair: dict[str, object] | None, status: Status
    ) -> PointResult:
        why = "not-saturated: x" if status is Status.INVALID else ""
        return PointResult(
            PointKey("h", platform, 1, "off", "rps"),
            status,
            why,
            value=value,
            unit="requests/s",
            repetitions=3,
            ci_low=value * 0.95,
            ci_high=value * 1.05,
            metadata=PointMeta.parse({"pair": pair} if pair else {}),
        )

    bare = leg("baremetal", 100.0, record, Status.MEASURED)
    guest = leg("libvirt", 80.0, record, Status.INVALID)
    r = Legs.of_points(bare, guest).ratio()
    assert r is not None and r.paired and r.ratio == pytest.approx(0.8) and r.pairs == 3
    (p,) = paired([bare, guest])
    assert p.paired and p.overhead_pct == pytest.approx(20.0)
    assert p.failed == "h leg invalid (not-saturated)"  # shown with the leg, not hidden
    apart = Legs.of_points(leg("baremetal", 100.0, None, Status.MEASURED), guest).ratio()
    assert apart is not None and not apart.paired
    assert (apart.low, apart.high) == pytest.approx((76 / 105, 84 / 95))


# -- drift: why pairs ---------------------------------------------------------------------

TRUE_SHARE = 0.80  # the guest keeps 80% of bare metal: a 20% overhead
DRIFT_PER_WINDOW = 0.015  # the host slows 1.5% per window (heat, a neighbour)
NOISE = 0.005  # window-to-window scatter


def _window(base: float, t: int, rng: random.Random) -> float:
    return base * (1 - DRIFT_PER_WINDOW * t) * (1 + rng.gauss(0, NOISE))


def _simulate(reps: int, seed: int) -> tuple[PairedRatio, PairedRatio]:
    """Both legs over one run in time order: alternated (leg_order) and one after the other."""
    rng = random.Random(seed)
    a: list[float] = []
    b: list[float] = []
    t = 0
    for i in range(reps):
        for leg in leg_order(i):
            (a if leg == "a" else b).append(
                _window(100.0 if leg == "a" else 100.0 * TRUE_SHARE, t, rng)
            )
            t += 1
    paired = PairedRatio.of(a, b)
    rng = random.Random(seed)
    ua = [_window(100.0, t, rng) for t in range(reps)]
    ub = [_window(100.0 * TRUE_SHARE, reps + t, rng) for t in range(reps)]
    lo_a, hi_a = min(ua), max(ua)  # n <= 5: the legs' intervals are their ranges
    lo_b, hi_b = min(ub), max(ub)
    unpaired = PairedRatio.unpaired(
        statistics.median(ua), statistics.median(ub), (lo_a, hi_a), (lo_b, hi_b), reps
    )
    assert paired is not None and unpaired is not None
    return paired, unpaired


def test_drift_biases_unpaired_legs_and_stays_inside_the_paired_interval() -> None:
    true = (1 - TRUE_SHARE) * 100
    for seed in range(20):
        paired, unpaired = _simulate(5, seed)
        p_val, p_lo, p_hi = Comparison(PairKind.VIRTUALIZATION, paired).percent()
        u_val, u_lo, u_hi = Comparison(PairKind.VIRTUALIZATION, unpaired).percent()
        assert p_lo is not None and p_hi is not None and u_lo is not None and u_hi is not None
        if seed == 0:
            print(
                f"\ntrue overhead {true:.1f}%; paired {p_val:.1f}% [{p_lo:.1f}, {p_hi:.1f}] "
                f"(error {p_val - true:+.1f}); unpaired {u_val:.1f}% [{u_lo:.1f}, {u_hi:.1f}] "
                f"(error {u_val - true:+.1f})"
            )
        assert p_lo <= true <= p_hi, (seed, p_lo, p_hi)  # the pair's interval holds it
        # what drift leaves in a pair is the one window between its legs, and the
        # alternating order (A B, B A) takes it off one way, then the other
        assert abs(p_val - true) < (u_val - true) / 3
        # the legs measured apart: the later guest leg ran on a slower host, and its
        # loss is counted as overhead (5 windows x 1.5% later: about 6 points)
        assert u_val - true > 4.0, (seed, u_val)
        assert (u_hi - u_lo) > (p_hi - p_lo)


# -- the alternation itself ---------------------------------------------------------------


def test_measure_pair_alternates_warms_up_at_each_switch_and_stops_on_the_ratio(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window runner and the evaluation are replaced by recorders here (the real ones
    need hosts: tests/integration/test_libvirt.py runs a real pair); what is checked is
    the order of the windows, the warm-ups and the stop rule on the ratio."""
    from types import SimpleNamespace

    from sizing.measure import paired as paired_mod
    from sizing.measure.throughput import Throughput
    from sizing.plan.settings import MeasureSettings
    from sizing.provision.platforms.base import Target

    inv = lab(tmp_path)
    plan = build_plan(
        inv,  # type: ignore[arg-type]
        {"kvm1": SMT, "kvm1-metal": SMT, "load1": SMT},
        (1,),
        (Ht.OFF,),
        [profiles.load("rps")],
        placement={"vm1": "kvm1"},
    )
    (pair,), _ = find_pairs(plan, inv, {"vm1": "kvm1"})  # type: ignore[arg-type]
    ran: list[tuple[str, list[int]]] = []
    rates = {"kvm1-metal": [100.0, 101.0, 99.0, 100.5, 100.0, 99.5], "vm1": [80.0] * 6}

    def run_batch(ctx, point, target, windows, connections, outputs):  # type: ignore[no-untyped-def]
        ran.append((point.key.host, [w.index for w in windows]))
        for w in windows:
            rate = rates[point.key.host][len([r for r in ran if r[0] == point.key.host]) - 1]
            out = WindowOutput(
                w.index,
                0.0,
                3.0,
                commands=[CommandOutput([], 0, WRK.replace("RATE", f"{rate:.2f}"))],
            )
            outputs.setdefault("load1", []).append(out)
        return None

    def evaluate(ctx, point, target, outputs, windows, schedule):  # type: ignore[no-untyped-def]
        # the windows the leg is evaluated on, kept in the record's unknown keys
        meta = PointMeta.parse({"windows": [w.index for w in windows]})
        return PointResult(point.key, Status.MEASURED, metadata=meta), []

    monkeypatch.setattr(Throughput, "run_batch", staticmethod(run_batch))
    monkeypatch.setattr(Throughput, "evaluate", staticmethod(evaluate))
    ctx = SimpleNamespace(
        settings=MeasureSettings(repeat=None, max_repeat=6, warmup_s=2, duration_s=3),
        progress=SimpleNamespace(step=lambda text: None),
    )
    switched: list[str] = []

    def switch(point):  # type: ignore[no-untyped-def]
        switched.append(point.key.host)
        return Target(host=point.key.host, address="198.18.9.1", workers=(0,))

    (ra, _), (rb, _) = paired_mod.measure_pair(ctx, pair, switch)  # type: ignore[arg-type]
    # A B, B A, A B: a leg that takes over warms up (index 0) first
    assert ran[:6] == [
        ("kvm1-metal", [0, 1]),
        ("vm1", [0, 1]),
        ("vm1", [2]),
        ("kvm1-metal", [0, 2]),
        ("kvm1-metal", [3]),
        ("vm1", [0, 3]),
    ]
    rec, recb = ra.metadata.pair, rb.metadata.pair
    assert rec is not None and recb is not None
    assert rec == replace(recb, role="a") and recb.role == "b"
    assert rec.order.startswith("abbaab")
    n = len(rec.ratios)
    assert 3 <= n < 6  # stopped on the ratio's interval: the legs' values scatter more
    assert rec.ratios[0] == pytest.approx(0.8)
    # only the first warm-up is kept with each leg's windows
    assert ra.metadata.verbatim_unknown["windows"] == [0, *range(1, n + 1)]
    assert switched.count("vm1") == n + (n % 2 == 0)  # once per window of the leg


WRK = """Running 3s test @ http://198.18.9.1:8080/
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.00ms    0.10ms   2.00ms   90.00%
    Req/Sec     1.00k     0.10k    2.00k    90.00%
  300 requests in 3.00s, 30.00KB read
Requests/sec: RATE
Transfer/sec:     10.00KB
"""


# -- the table ------------------------------------------------------------------------------


def test_the_table_gives_paired_overheads_and_ht_gains_and_labels_unpaired_ones() -> None:
    """A host measured HT off and on, and its KVM guest: bare metal and guest at 1 core,
    and HT off and on at 2, are the legs of pairs (the same pair id and per-pair ratios on
    both); the guest at 2 cores and HT on at 1 are not."""

    from sizing.engine import Basis, Hardware, Workload, build_table
    from sizing.engine.costs import CostCatalog, ServerOffer
    from sizing.model import Figure

    def fig(platform: str, n: int, ht: str, value: float, bid: str, **kw: object) -> Figure:
        return Figure(
            platform,
            n,
            ht,
            "rps",
            value,
            "requests/s",
            "measured",
            basis=bid,
            ci_low=value * 0.97,
            ci_high=value * 1.03,
            reps=(value,) * 3,
            **kw,  # type: ignore[arg-type]
        )

    virt = {"pair": "bare | guest", "pair_ratios": (0.81, 0.8, 0.79, 0.8, 0.8, 0.82)}
    ht = {"pair": "off | on", "pair_ratios": (1.1, 1.12, 1.11)}
    host_id, guest_id = "r1/baremetal/static", "vm1/kvm/static"
    bare = (
        fig("baremetal", 1, "off", 1000.0, host_id, **virt),
        fig("baremetal", 1, "on", 1150.0, host_id),
        fig("baremetal", 2, "off", 2000.0, host_id, **ht),
        fig("baremetal", 2, "on", 2220.0, host_id, **ht),
    )
    guest = (fig("kvm", 1, "off", 800.0, guest_id, **virt), fig("kvm", 2, "off", 1500.0, guest_id))
    common = {
        "hardware": Hardware("Xeon", 1, 8, 2),
        "workload": Workload(role="static", file_size=128),
        "software": "nginx 1.22",
        "physical_host": "r1",
        "origin": "measured",
    }
    bases = (
        Basis(id=host_id, platform="baremetal", figures=bare, **common),  # type: ignore[arg-type]
        Basis(id=guest_id, platform="kvm", figures=guest, **common),  # type: ignore[arg-type]
    )
    catalog = CostCatalog(
        servers=(ServerOffer(cores=1, price=750.0), ServerOffer(cores=2, price=750.0))
    )
    table = build_table((*bare, *guest), catalog, bases=bases, article_prices=True)
    cells = {(c.platform, c.ht, c.cores): c for r in table.rows for c in r.cells}
    one, two = cells[("kvm", "off", 1)], cells[("kvm", "off", 2)]
    assert one.overhead_pairs == 6 and one.overhead_pct == pytest.approx(20.0)
    assert one.overhead_ci == pytest.approx((18.0, 21.0))  # 1 - [0.79, 0.82], 6 pairs: range
    assert one.overhead_interval == "6 pairs, range of 6, 96.9%"
    assert (
        two.overhead_pairs == 0
        and two.overhead_interval == "unpaired (from both legs' intervals, each 75%)"
    )
    assert two.overhead_ci == pytest.approx(
        ((1 - 1500 * 1.03 / 1940) * 100, (1 - 1455 / 2060) * 100)
    )
    gain1, gain2 = cells[("baremetal", "on", 1)], cells[("baremetal", "on", 2)]
    assert gain2.ht_gain_pairs == 3 and gain2.ht_gain_pct == pytest.approx(11.0)
    assert gain2.ht_gain_ci == pytest.approx((10.0, 12.0))
    assert gain1.ht_gain_pairs == 0 and gain1.ht_gain_pct == pytest.approx(15.0)
    assert gain1.ht_gain_interval == "unpaired (from both legs' intervals, each 75%)"
    assert cells[("baremetal", "off", 1)].ht_gain_pct is None
    doc = one.to_dict()
    assert doc["overhead_paired"] is True and doc["overhead_pairs"] == 6


def test_resume_with_one_leg_stored_measures_the_other_alone_and_says_so(tmp_path: Path) -> None:
    inv = lab(tmp_path)
    plan = build_plan(
        inv,  # type: ignore[arg-type]
        {"kvm1": SMT, "kvm1-metal": SMT, "load1": SMT},
        (1,),
        (Ht.OFF,),
        [profiles.load("rps")],
        placement={"vm1": "kvm1"},
    )
    bare = next(p for p in plan if p.key.host == "kvm1-metal")
    pairs, notes = find_pairs(plan, inv, {"vm1": "kvm1"}, {bare.key})  # type: ignore[arg-type]
    assert pairs == []
    (note,) = notes
    assert note.point == "vm1 libvirt 1c ht=off rps"
    assert "bare-metal leg (kvm1-metal baremetal 1c ht=off rps) is already stored" in note.reason
