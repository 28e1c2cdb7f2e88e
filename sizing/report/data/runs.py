"""What the runs themselves show: the points not used as measured, and the CPU use of
every timed repetition."""

from __future__ import annotations

from collections.abc import Sequence

from sizing.model import PROFILE_UNITS, Status, basis_platform
from sizing.report.data.format import (
    FLAG_TEXT,
    MISSING,
    PLATFORM_LABELS,
    PROFILE_LABELS,
    STATUS_TEXT,
    number,
)
from sizing.report.data.model import CpuPoint, TableBlock, TCell
from sizing.sources import RunData


def validity_table(runs: Sequence[RunData]) -> TableBlock | None:
    """Every point that was not used as measured, or was used with a warning flag."""
    rows: list[tuple[TCell, ...]] = []
    for run in runs:
        # a host any point of which found itself virtualized is one, skipped points too
        virtual = {p.result.key.host for p in run.points if "virtualized-host" in p.result.flags}
        for p in run.points:
            r = p.result
            shown = (*r.flags, "virtualized-host") if r.key.host in virtual else r.flags
            if r.status is Status.MEASURED and not r.flags:
                continue
            flags = ", ".join(r.flags)
            reason = r.reason or "; ".join(FLAG_TEXT.get(f, f) for f in r.flags)
            if r.status is Status.MEASURED and "emulated" in r.flags:
                status = "measured, emulated (not used for sizing by default)"
            elif r.status is Status.MEASURED and "virtualized-host" in r.flags:
                status = "measured on a virtualized host (not used for sizing by default)"
            elif r.status is Status.MEASURED and "simulated" in r.flags:
                status = "made up for an example, used as if measured"
            elif r.status is Status.MEASURED:
                status = "measured, used with a warning"
            else:
                status = STATUS_TEXT[str(r.status)]
            rows.append(
                (
                    TCell(str(run.record.id)),
                    TCell(r.key.host, numeric=False),
                    TCell(platform_label(r.key.platform, shown), numeric=False),
                    TCell(str(r.key.cores)),
                    TCell(r.key.ht, numeric=False),
                    TCell(PROFILE_LABELS.get(r.key.profile, r.key.profile), numeric=False),
                    TCell(status, numeric=False),
                    TCell(number(r.value) if r.value is not None else MISSING),
                    TCell(flags or MISSING, numeric=False),
                    TCell(reason or MISSING, numeric=False),
                )
            )
    if not rows:
        return None
    seen_flags = sorted(
        {f for run in runs for p in run.points for f in p.result.flags if f in FLAG_TEXT}
    )
    return TableBlock(
        title="Points skipped, invalid, failed or flagged",
        headers=(
            "Run",
            "Host",
            "Platform",
            "Cores",
            "HT",
            "Metric",
            "Status",
            "Value",
            "Flags",
            "Reason",
        ),
        rows=tuple(rows),
        notes=tuple(f"{f}: {FLAG_TEXT[f]}." for f in seen_flags),
    )


def platform_label(platform: str, flags: Sequence[str]) -> str:
    """A point's platform for print: ``Bare metal``, ``Virtualized host`` (a container or
    VM measured as bare metal: never called bare metal), ``KVM``, ``ESXi``."""
    name = basis_platform(platform, flags)
    return PLATFORM_LABELS.get(name, name)


# A figure's unit says what it sizes, whatever its profile's name (rps, static-rps, ...).
METRIC_OF_UNIT = {unit: str(metric) for metric, unit in PROFILE_UNITS.items()}


def cpu_points(runs: Sequence[RunData]) -> list[CpuPoint]:
    """Throughput and server CPU busy share of every timed repetition (warm-ups left out),
    by what it sizes (``profile``: rps or tps)."""
    out: list[CpuPoint] = []
    for run in runs:
        for p in run.points:
            r = p.result
            if r.status not in (Status.MEASURED, Status.INVALID):
                continue
            if r.metadata.workload.mode == "fixed-rate":
                continue  # latency windows (value: p95 ms), charted against the offered rate
            metric = METRIC_OF_UNIT.get(r.unit)  # what the figure sizes: rps or tps
            if metric is None:
                continue
            # a container or VM that believes it is bare metal is never charted as such, nor
            # a measured container leg as a hypervisor's guest
            platform = basis_platform(r.key.platform, r.flags)
            family = (
                platform
                if platform in ("baremetal", "virtualized-host", "container")
                else "hypervisor"
            )
            for rep, s in run.samples.get(p.id, ()):
                if rep == 0 or s.metric.endswith(".client"):
                    continue
                cpu = s.metadata.server_cpu
                busy = cpu.busy if cpu else None
                if busy is None:
                    continue
                out.append(
                    CpuPoint(
                        platform=family,
                        cores=r.key.cores,
                        ht=r.key.ht,
                        profile=metric,
                        value=s.value,
                        busy=float(busy),
                        status=str(r.status),
                        emulated="emulated" in r.flags,
                        run_id=run.record.id,
                        host=r.key.host,
                    )
                )
    return out
