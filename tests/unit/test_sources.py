"""``sizing.sources``: bases built from a real (temporary) SQLite store, filled through the
Store API with points shaped like the sweep's: two bare-metal hosts, a container host, a
KVM guest of the first host, an emulated guest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sizing.catalog import load_reference
from sizing.engine.choice import choose
from sizing.engine.costs import CostCatalog
from sizing.engine.offers import pick_offers
from sizing.model import PointKey, PointResult, Sample, Source, Status
from sizing.records import DeclaredCpu, DeclaredRecord, HostRecord, PointMeta, SampleMeta
from sizing.sources import (
    Declared,
    Inputs,
    basis_prices,
    declared_of,
    hardware_of,
    load_bases,
    measured_bases,
    read_runs,
    reference_bases,
    software_label,
)
from sizing.sources.declared import record_declared
from sizing.store import Store

XEON = "Intel(R) Xeon(R) Silver 4110 CPU @ 2.10GHz"
EPYC = "AMD EPYC"


def lscpu(sockets: int, cores: int, threads: int) -> str:
    lines = ["# CPU,Core,Socket,Node"]
    cpu = 0
    for _ in range(threads):
        for s in range(sockets):
            for c in range(cores):
                lines.append(f"{cpu},{s * cores + c},{s},{s}")
                cpu += 1
    return "\n".join(lines) + "\n"


def facts(model: str, topo: str, **extra: Any) -> dict[str, Any]:
    return {
        "cpu_model": model,
        "lscpu": topo,
        "nginx_version": "1.22.1",
        "nginx_openssl": "3.0.11",
        **extra,
    }


ENV = {
    "r640-01": facts(XEON, lscpu(2, 8, 2)),
    "r640-02": facts(XEON, lscpu(2, 8, 2)),
    "localhost": facts(EPYC, lscpu(1, 2, 1), hypervisor="docker"),
    "vm1": facts(XEON, lscpu(1, 4, 1), hypervisor="kvm"),
    "tcg1": facts("QEMU Virtual CPU version 2.5+", lscpu(1, 1, 1), hypervisor="kvm"),
}


def meta(host: str, profile: str, **extra: Any) -> dict[str, Any]:
    m: dict[str, Any] = {
        "host": host,
        "file_size": 128,
        "keepalive": profile == "rps",
        "tls_key": "rsa2048" if profile == "tps" else None,
        "nginx_version": "1.22.1",
        "openssl_version": "3.0.11",
        "cpu_model": ENV[host]["cpu_model"],
        "platform_settings": {},
    }
    m.update(extra)
    return m


def point(
    host: str,
    platform: str,
    cores: int,
    profile: str,
    reps: list[float],
    *,
    flags: tuple[str, ...] = (),
    status: Status = Status.MEASURED,
    **extra: Any,
) -> tuple[PointResult, list[tuple[int, Sample]]]:
    unit = "requests/s" if profile == "rps" else "handshakes/s"
    metric = "requests_per_second" if profile == "rps" else "handshakes_per_second"
    ordered = sorted(reps)
    median = ordered[len(ordered) // 2]
    samples = [(0, Sample(metric, reps[0] * 0.9, unit, SampleMeta.parse({"warmup": True})))]
    for i, v in enumerate(reps, start=1):
        timed = SampleMeta.parse({"repetition": i, "warmup": False})
        samples.append((i, Sample(metric, v, unit, timed)))
        samples.append((i, Sample(f"{metric}.client", v, unit, SampleMeta.parse({"client": "c1"}))))
    result = PointResult(
        key=PointKey(host, platform, cores, "off", profile),
        status=status,
        value=median,
        unit=unit,
        repetitions=len(reps),
        ci_low=median * 0.5,  # the mean's interval, as old runs stored: not used
        ci_high=median * 1.5,
        flags=flags,
        metadata=PointMeta.parse(meta(host, profile, **extra)),
    )
    return result, samples


def fill(db: Path, environment: dict[str, Any], points: list[Any], inventory: str = "lab") -> int:
    with Store(db) as store:
        run_id = store.start_run(
            inventory=inventory, argv=["sizing", "run"], tool_version="0", options={}
        )
        store.set_environment(run_id, environment)
        for result, samples in points:
            store.add_point(run_id, result, samples)
        store.finish_run(run_id, "complete")
    return run_id


REPS = [100.0, 104.0, 98.0, 101.0, 99.0, 102.0, 103.0, 97.0, 100.5]


def scaled(k: float) -> list[float]:
    return [v * k for v in REPS]


@pytest.fixture()
def lab(tmp_path: Path) -> Path:
    db = tmp_path / "sizing.sqlite"
    env = {h: ENV[h] for h in ("r640-01", "r640-02", "vm1", "tcg1")}
    env["r640-01"] = {**env["r640-01"], "declared": {"sizing_price_usd": 5400.0}}
    pts = []
    for cores, k in ((1, 1.0), (2, 1.9), (4, 3.6)):
        pts.append(point("r640-01", "baremetal", cores, "rps", scaled(500 * k)))
        pts.append(point("r640-01", "baremetal", cores, "tps", scaled(10 * k)))
        pts.append(
            point(
                "vm1",
                "libvirt",
                cores,
                "rps",
                scaled(400 * k),
                platform_settings={"hypervisor": "r640-01", "domain_type": "kvm"},
            )
        )
        pts.append(
            point(
                "vm1",
                "libvirt",
                cores,
                "tps",
                scaled(9 * k),
                platform_settings={"hypervisor": "r640-01", "domain_type": "kvm"},
            )
        )
    pts.append(point("r640-02", "baremetal", 1, "rps", scaled(480)))
    # an invalid point is never a figure
    pts.append(point("r640-02", "baremetal", 2, "rps", scaled(900), status=Status.INVALID))
    pts.append(
        point(
            "tcg1",
            "libvirt",
            1,
            "rps",
            scaled(28),
            flags=("emulated",),
            platform_settings={"hypervisor": "r640-02", "domain_type": "qemu"},
        )
    )
    fill(db, env, pts)
    # a container on another machine, measured later: a virtualized host
    fill(
        db,
        {"localhost": ENV["localhost"]},
        [
            point("localhost", "baremetal", 1, "rps", scaled(1300), flags=("virtualized-host",)),
            point("localhost", "baremetal", 1, "tps", scaled(15), flags=("virtualized-host",)),
        ],
        inventory="local",
    )
    return db


def bases_of(db: Path) -> dict[str, Any]:
    runs = read_runs(db, ())
    return {b.id: b for b in measured_bases(runs, declared_of(runs))}


def test_one_basis_per_host_platform_and_workload(lab: Path) -> None:
    bases = bases_of(lab)
    assert sorted(bases) == [
        "localhost/virtualized-host/static-128b",
        "r640-01/baremetal/static-128b",
        "r640-02/baremetal/static-128b",
        "tcg1/kvm/static-128b-emulated",
        "vm1/kvm/static-128b",
    ]
    bm = bases["r640-01/baremetal/static-128b"]
    assert bm.platform == "baremetal" and bm.origin == "measured"
    assert bm.core_counts("rps") == (1, 2, 4) and bm.core_counts("tps") == (1, 2, 4)
    assert bm.hardware.cpu_model == XEON
    assert (bm.hardware.sockets, bm.hardware.cores_per_socket) == (2, 8)
    assert bm.hardware.threads_per_core == 2 and bm.hardware.physical_cores == 16
    assert bm.software == "nginx 1.22, OpenSSL 3.0"
    assert bm.workload.role == "static" and bm.workload.file_size == 128
    assert bm.workload.tls_key == "rsa2048" and bm.workload.keepalive
    assert {f.basis for f in bm.figures} == {bm.id}
    assert bm.flags == ()
    # the invalid 2-core point of r640-02 is not a figure
    assert bases["r640-02/baremetal/static-128b"].core_counts() == (1,)


def test_container_host_is_its_own_platform(lab: Path) -> None:
    b = bases_of(lab)["localhost/virtualized-host/static-128b"]
    assert b.platform == "virtualized-host"
    assert "virtualized-host" in b.flags
    assert all(f.platform == "virtualized-host" for f in b.figures)
    assert b.hardware.cpu_model == EPYC
    assert b.qualifies(include_virtualized=False, include_emulated=False)[0] is False


def test_guest_runs_on_its_hypervisor_host_and_takes_its_hardware(lab: Path) -> None:
    bases = bases_of(lab)
    vm = bases["vm1/kvm/static-128b"]
    assert vm.platform == "kvm" and vm.physical_host == "r640-01"
    assert vm.hardware == bases["r640-01/baremetal/static-128b"].hardware
    tcg = bases["tcg1/kvm/static-128b-emulated"]
    assert tcg.flags == ("emulated",) and tcg.physical_host == "r640-02"


def test_figure_interval_is_the_medians_from_the_repetitions(lab: Path) -> None:
    bm = bases_of(lab)["r640-01/baremetal/static-128b"]
    f = next(f for f in bm.figures if f.profile == "rps" and f.cores == 1)
    values = sorted(scaled(500))
    assert f.value == values[len(values) // 2]
    assert f.ci_low is not None and f.ci_high is not None
    # an order-statistics interval: its ends are repetitions, around the median, and not
    # the stored mean interval (0.5x .. 1.5x)
    assert f.ci_low in values and f.ci_high in values
    assert f.ci_low <= f.value <= f.ci_high
    assert f.ci_low > 0.9 * f.value
    assert f.conservative == f.ci_low


def test_runs_that_agree_are_pooled_never_newest_wins(lab: Path) -> None:
    fill(lab, {"r640-01": ENV["r640-01"]}, [point("r640-01", "baremetal", 1, "rps", scaled(520))])
    bm = bases_of(lab)["r640-01/baremetal/static-128b"]
    one = [f for f in bm.figures if f.profile == "rps" and f.cores == 1]
    assert len(one) == 1
    assert one[0].origin == "pooled 2 runs that agree (run 1, r640-01; run 3, r640-01)"
    assert "pooled over 2 runs" in one[0].interval
    assert bm.runs == (1, 3)


def test_default_choice_passes_over_the_container_and_the_emulated_guest(lab: Path) -> None:
    inputs = load_bases(Inputs(db=lab))
    assert inputs.choice.ids == ("r640-01/baremetal/static-128b", "vm1/kvm/static-128b")
    assert "r640-01/baremetal/static-128b" in inputs.choice.why
    passed = dict(inputs.choice.passed_over)
    assert "virtualized host" in passed["localhost/virtualized-host/static-128b"]
    assert "emulated" in passed["tcg1/kvm/static-128b-emulated"]


def test_only_a_container_measured_falls_back_to_the_reference(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    fill(
        db,
        {"localhost": ENV["localhost"]},
        [point("localhost", "baremetal", 1, "rps", scaled(1300), flags=("virtualized-host",))],
    )
    inputs = load_bases(Inputs(db=db))
    assert inputs.choice.ids == ("reference/baremetal", "reference/esxi")
    assert "virtualized host" in inputs.choice.why
    asked = load_bases(Inputs(db=db, basis=("localhost",)))
    assert asked.choice.ids == ("localhost/virtualized-host/static-128b",)
    assert "as asked" in asked.choice.why


def test_source_reference_and_measured(lab: Path) -> None:
    ref = load_bases(Inputs(db=lab, source=Source.REFERENCE))
    assert all(b.origin == "reference" for b in ref.choice.bases)
    measured = load_bases(Inputs(db=lab, source=Source.MEASURED))
    assert measured.choice.ids[0] == "r640-01/baremetal/static-128b"


def test_source_measured_with_nothing_qualifying_is_a_usage_error(tmp_path: Path) -> None:
    from sizing.errors import UsageError

    with pytest.raises(UsageError, match="nothing usable is measured"):
        load_bases(Inputs(db=tmp_path / "none.sqlite", source=Source.MEASURED))


def test_reference_bases_carry_the_articles_identity() -> None:
    bases = {b.id: b for b in reference_bases(load_reference())}
    assert sorted(bases) == ["reference/baremetal", "reference/esxi", "reference/kubernetes"]
    bm, esxi = bases["reference/baremetal"], bases["reference/esxi"]
    assert bm.workload.role == "load-balance" and bm.workload.file_size == 128
    assert bm.workload.tls_key == "rsa2048"
    assert bases["reference/kubernetes"].workload.file_size == 1024
    assert esxi.platform == "esxi" and all(f.platform == "esxi" for f in esxi.figures)
    lower = [(f.profile, f.cores) for f in bm.figures if f.bound == "lower"]
    assert sorted(lower) == [("rps", 8), ("tps", 8)]
    assert all("client-bound" in f.flags for f in bm.figures if f.bound == "lower")
    assert not any(f.bound for f in esxi.figures)
    # the testbed's bare metal and ESXi share one group; Kubernetes does not
    choice = choose(list(bases.values()))
    assert choice.ids == ("reference/baremetal", "reference/esxi")


def test_inventory_price_is_one_server_at_its_physical_cores(lab: Path) -> None:
    inputs = load_bases(Inputs(db=lab))
    price = inputs.prices["r640-01/baremetal/static-128b"]
    assert price.source.startswith("inventory sizing_price_usd of r640-01 (run 1)")
    assert [(o.cores, o.price) for o in price.offers] == [(16, 5400.0)]
    # the guest runs on r640-01: that server's price
    assert inputs.prices["vm1/kvm/static-128b"].offers == price.offers
    assert "r640-02/baremetal/static-128b" not in inputs.prices
    assert not inputs.article_prices


def test_catalog_entries_match_by_cpu_model(lab: Path) -> None:
    bases = list(bases_of(lab).values())
    data = {
        "name": "lab prices",
        "servers": [
            {"cores": 8, "price": 2000, "cpu_model": "silver 4110"},
            {"cores": 16, "price": 3500, "cpu_model": "Silver 4110"},
            {"cores": 16, "price": 9999, "cpu_model": "EPYC 7763"},
            {"cores": 8, "price": 1},
        ],
    }
    prices = basis_prices(bases, {}, data)
    p = prices["r640-02/baremetal/static-128b"]
    assert p.source == f"catalog lab prices matched to {XEON}"
    # every server of the catalog, none left out: the EPYC one is refused by name on this
    # basis and the unnamed one is taken to be its CPU (sizing.engine.offers)
    assert [(o.cores, o.price) for o in p.offers] == [
        (8, 2000.0),
        (16, 3500.0),
        (16, 9999.0),
        (8, 1.0),
    ]
    picked, passed = pick_offers(
        p.catalog(CostCatalog(servers=())),
        "baremetal",
        bases_of(lab)["r640-02/baremetal/static-128b"],
    )
    assert [(o.cores, o.price) for o in picked.servers] == [(8, 1.0), (16, 3500.0)]
    assert sorted(x.offer.price for x in passed) == [2000.0, 9999.0]
    assert "localhost/virtualized-host/static-128b" not in prices  # "AMD EPYC" ≠ EPYC 7763


def test_explicit_catalog_counts_as_asking_for_its_prices(lab: Path, tmp_path: Path) -> None:
    cat = tmp_path / "cat.yml"
    cat.write_text("kind: catalog\nservers:\n  - {cores: 8, price: 2000}\n")
    assert load_bases(Inputs(db=lab, catalog=cat)).article_prices
    assert load_bases(Inputs(db=lab, article_prices=True)).article_prices


def test_declared_falls_back_to_the_runs_inventory_file(tmp_path: Path) -> None:
    inv = tmp_path / "lab.yml"
    inv.write_text(
        "all:\n  children:\n    servers:\n      hosts:\n        r640-01:\n"
        "          ansible_connection: local\n          sizing_price_usd: 4100\n"
        "          sizing_cpu: {model: Xeon, sockets: 2, cores_per_socket: 8}\n"
        "    clients:\n      hosts:\n        c1:\n          ansible_connection: local\n"
    )
    db = tmp_path / "s.sqlite"
    fill(
        db,
        {"r640-01": ENV["r640-01"]},
        [point("r640-01", "baremetal", 1, "rps", REPS)],
        inventory=str(inv),
    )
    runs = read_runs(db, ())
    assert declared_of(runs) == {}  # nothing recorded: the run predates the entry
    (patch,) = record_declared(runs).values()  # read from the file, once (then stored)
    assert patch["r640-01"].cpu_model == ENV["r640-01"]["cpu_model"]
    assert patch["c1"] == HostRecord(declared=DeclaredRecord())
    d = declared_of(runs)["r640-01"]
    assert d.price_usd == 4100 and d.where == f"inventory {inv}"
    assert d.cpu is not None and d.cpu.cores_per_socket == 8


def test_hardware_and_software_labels() -> None:
    hw = hardware_of(None, Declared(cpu=DeclaredCpu(model="Xeon", sockets=2, cores_per_socket=8)))
    assert (hw.cpu_model, hw.physical_cores, hw.threads_per_core) == ("Xeon", 16, 1)
    assert hardware_of(HostRecord(lscpu="garbage")).sockets is None
    assert software_label("1.24.0", None) == "nginx 1.24"
    assert software_label(None, None) == ""


def test_a_run_with_no_valid_figure_says_so_in_the_basis_sentence(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    fill(
        db,
        {"localhost": ENV["localhost"]},
        [
            point("localhost", "baremetal", 1, "rps", REPS, status=Status.INVALID),
            point("localhost", "baremetal", 1, "tps", REPS, status=Status.INVALID),
        ],
    )
    why = load_bases(Inputs(db=db)).choice.why
    assert why == (
        "reference: no measured basis qualifies (nothing usable measured yet: the run gave no "
        "valid figure (2 invalid; `sizing results` says why each is not valid)); "
        "workload: load balancing (load-balance), the default (--role sizes another)"
    )
