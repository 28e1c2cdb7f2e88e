"""The basis types, the default choice, and the median's order-statistic interval."""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizing.engine import Basis, Hardware, Workload, choose
from sizing.errors import UsageError
from sizing.intervals import coverage, median_coverage, median_interval
from sizing.model import Figure, basis_platform

STATIC = Workload(role="static", file_size=128)
VH = ("virtualized-host",)


def _basis(bid: str, platform: str, cores: tuple[int, ...], **kw: object) -> Basis:
    figs = tuple(
        Figure(platform, n, "off", "rps", 1000.0 * n, "requests/s", "measured", basis=bid)
        for n in cores
    )
    return Basis(
        id=bid,
        origin=str(kw.pop("origin", "measured")),
        platform=platform,
        hardware=Hardware("Xeon", 1, 8, 2),
        workload=STATIC,
        software="nginx 1.22",
        physical_host=bid.split("/")[0],
        figures=figs,
        **kw,  # type: ignore[arg-type]
    )


def test_basis_platform() -> None:
    assert basis_platform("libvirt") == "kvm"
    assert basis_platform("vsphere") == "esxi"
    assert basis_platform("baremetal", ("virtualized-host",)) == "virtualized-host"
    assert basis_platform("baremetal") == "baremetal"


def test_conservative_is_the_interval_low_end() -> None:
    f = Figure("baremetal", 1, "off", "rps", 140.0, "r/s", "measured", ci_low=131.0)
    assert f.conservative == 131.0
    assert Figure("baremetal", 1, "off", "rps", 140.0, "r/s", "measured").conservative == 140.0


def test_hardware_label() -> None:
    assert Hardware("Intel Xeon Silver 4110", 2, 8, 2).label() == (
        "Intel Xeon Silver 4110, 2 × 8 cores × 2 threads"
    )
    assert Hardware("").label() == "unknown CPU"


def test_choose_prefers_most_core_counts_and_passes_over_container() -> None:
    box = _basis(
        "localhost/virtualized-host/static-128b",
        "virtualized-host",
        (1,),
        flags=("virtualized-host",),
    )
    a = _basis("a/baremetal/static-128b", "baremetal", (1, 2, 4), runs=(1,))
    b = _basis("b/baremetal/static-128b", "baremetal", (1,), runs=(9,))
    c = choose([box, a, b])
    assert c.ids == ("a/baremetal/static-128b",)
    assert "3 core counts" in c.why
    passed = dict(c.passed_over)
    assert "virtualized host" in passed[box.id]


def test_choose_falls_back_to_the_reference_group() -> None:
    box = _basis(
        "localhost/virtualized-host/x", "virtualized-host", (1,), flags=("virtualized-host",)
    )
    ref = _basis("reference/baremetal", "baremetal", (1, 2, 4), origin="reference")
    c = choose([box, ref])
    assert c.ids == ("reference/baremetal",)
    assert c.why.startswith("reference: no measured basis qualifies (localhost/")


def test_choose_explicit_prefix_and_unknown() -> None:
    box = _basis(
        "localhost/virtualized-host/x", "virtualized-host", (1,), flags=("virtualized-host",)
    )
    c = choose([box], ["localhost"])
    assert c.ids == (box.id,) and "as asked" in c.why
    with pytest.raises(UsageError, match="unknown basis 'nope'"):
        choose([box], ["nope"])


def test_median_interval_small_n_is_the_range_with_its_coverage() -> None:
    assert median_interval([5.0]) is None
    assert median_interval([3.0, 1.0, 2.0]) == (1.0, 3.0)
    assert median_coverage(3) == pytest.approx(0.75)
    assert median_coverage(5) == pytest.approx(0.9375)
    assert median_coverage(6) == pytest.approx(0.96875)


def test_median_interval_n10() -> None:
    values = list(range(1, 11))
    assert median_interval(values) == (2, 9)  # k = 2: coverage 0.9785
    assert coverage(10, 2) == pytest.approx(0.978515625)


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=60))
def test_median_interval_contains_the_sample_median(values: list[float]) -> None:
    got = median_interval(values)
    assert got is not None
    lo, hi = got
    assert min(values) <= lo <= statistics.median(values) <= hi <= max(values)


@given(st.integers(6, 200))
def test_median_interval_reaches_its_level_from_six(n: int) -> None:
    assert median_coverage(n) >= 0.95


@given(st.lists(st.floats(1, 1e6), min_size=2, max_size=40), st.floats(1.0, 1000.0))
def test_median_interval_is_scale_equivariant(values: list[float], c: float) -> None:
    a = median_interval(values)
    b = median_interval([v * c for v in values])
    assert a is not None and b is not None
    assert b[0] == pytest.approx(a[0] * c) and b[1] == pytest.approx(a[1] * c)


def test_a_guest_measured_for_rps_only_groups_with_its_host() -> None:
    """The group compares the workload's shared part; a host with RPS and TPS (RSA) and
    its KVM guest with RPS only share one block and one RPS overhead, while an ECDSA TPS
    guest gets no TPS overhead against an RSA host."""
    from dataclasses import replace

    from sizing.engine import build_table, group_key
    from sizing.engine.compare import pair_bases
    from sizing.engine.costs import CostCatalog, ServerOffer

    rsa = Workload(role="static", file_size=128, tls_key="rsa2048")
    host = _basis("r1/baremetal/static-128b", "baremetal", (1, 2, 4))
    tps = tuple(
        Figure("baremetal", n, "off", "tps", 800.0 * n, "handshakes/s", "measured", basis=host.id)
        for n in (1, 2, 4)
    )
    host = replace(host, workload=rsa, figures=host.figures + tps)
    guest = _basis("vm1/kvm/static-128b", "kvm", (1, 2, 4))
    guest = replace(
        guest,
        physical_host="r1",
        figures=tuple(replace(f, value=f.value * 0.8) for f in guest.figures),
    )
    assert group_key(host) == group_key(guest)
    assert [(b.id, g.id) for b, g in pair_bases([host, guest])[0]] == [(host.id, guest.id)]

    ecdsa = replace(
        guest,
        id="vm2/kvm/static-128b",
        workload=Workload(role="static", file_size=128, tls_key="ecdsa-p256"),
        figures=tuple(
            replace(f, basis="vm2/kvm/static-128b", value=f.value * 0.9)
            for f in (*guest.figures, *tps)
        ),
    )
    catalog = CostCatalog(
        servers=(
            ServerOffer(cores=1, price=750.0),
            ServerOffer(cores=2, price=750.0),
            ServerOffer(cores=4, price=1300.0),
        )
    )
    figures = (*host.figures, *guest.figures, *ecdsa.figures)
    table = build_table(figures, catalog, bases=(host, guest, ecdsa), article_prices=True)
    cells = {(c.basis_id, c.profile, c.cores): c for r in table.rows for c in r.cells}
    assert cells[(guest.id, "rps", 2)].overhead_pct == pytest.approx(20.0)
    assert cells[(ecdsa.id, "rps", 2)].overhead_pct == pytest.approx(28.0)
    assert cells[(ecdsa.id, "tps", 2)].overhead_pct is None  # ECDSA guest vs RSA host
    assert len(table.blocks) == 1
