"""The guide's "How close to the limit" section (pure): each measured figure beside what
the hardware allows it at most (:mod:`sizing.ceilings`), the share it reached, and what
that says: near its crypto ceiling, more cores (not tuning) is the way up; far below it,
something else dominates. Reference figures state no CPU: "ceiling not stated"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sizing.ceilings import FAR_BELOW, binding, point_ceilings
from sizing.model import Status, is_tps_figure
from sizing.report.data.format import PROFILE_LABELS, number
from sizing.report.data.model import TableBlock, TCell
from sizing.sources import RunData

__all__ = ["Limit", "Limits", "limits_section"]


@dataclass(frozen=True)
class Limit:
    """One measured figure and its closest known ceiling (share None: none known)."""

    label: str
    profile: str
    value: float
    unit: str
    ceiling: float | None
    share: float | None
    what: str


@dataclass(frozen=True)
class Limits:
    """The section: its paragraphs, the body's table (the figures close to a ceiling), the
    appendix's (every figure), and the figures for the chart."""

    paragraphs: tuple[str, ...]
    table: TableBlock | None
    points: tuple[Limit, ...]
    all_table: TableBlock | None = None


def point_label(host: str, cores: int, ht: str, profile: str, invalid: bool) -> str:
    """``r640-01, 4 cores, HT on, SSL TPS`` (``(invalid)`` after a point judged invalid)."""
    label = f"{host}, {cores} core{'s' if cores != 1 else ''}, HT {ht}, "
    label += PROFILE_LABELS.get(profile, profile)
    return label + (" (invalid)" if invalid else "")


def _rows(runs: Sequence[RunData]) -> list[Limit]:
    """Every measured figure with a known or stated ceiling."""
    rows: list[Limit] = []
    for run in runs:
        hosts = run.record.environment
        for p in run.points:
            r = p.result
            if r.value is None or r.status not in (Status.MEASURED, Status.INVALID):
                continue
            cs = point_ceilings(
                tls_key=r.metadata.workload.tls_key or "",
                full_handshakes=is_tps_figure(r.unit),
                cores=r.key.cores,
                ht=r.key.ht,
                value=r.value,
                meta=r.metadata,
                host=hosts.get(r.key.host),
            )
            if not cs:
                continue
            best = binding(cs, r.value)
            label = point_label(
                r.key.host, r.key.cores, r.key.ht, r.key.profile, r.status is Status.INVALID
            )
            if best is None:
                rows.append(
                    Limit(
                        label,
                        r.key.profile,
                        r.value,
                        r.unit,
                        None,
                        None,
                        "; ".join(c.note for c in cs if c.note),
                    )
                )
            else:
                share = best.share(r.value)
                rows.append(
                    Limit(label, r.key.profile, r.value, r.unit, best.limit, share, best.what)
                )
    return rows


def _table(rows: Sequence[Limit], title: str) -> TableBlock:
    return TableBlock(
        title=title,
        headers=("Figure", "Measured", "Ceiling", "Share", "Ceiling of"),
        rows=tuple(
            (
                TCell(x.label, numeric=False),
                TCell(f"{number(x.value)} {x.unit}"),
                TCell(number(x.ceiling) if x.ceiling is not None else "–"),
                TCell(f"{x.share * 100:.0f}%" if x.share is not None else "–"),
                TCell(x.what, numeric=False),
            )
            for x in rows
        ),
    )


def limits_section(runs: Sequence[RunData], reference_used: bool) -> Limits:
    """The section for the guide's runs (the measured points with a figure): in the body
    the figures at or above :data:`FAR_BELOW` of their ceiling, every one in an appendix."""
    rows = _rows(runs)
    paras = [
        "A full TLS handshake costs the server one private-key operation of its certificate. "
        "openssl speed of that operation, on one of the cores the server was given, measured "
        "before the test, is the most full handshakes a core could do if nothing else cost "
        "anything; a network link's speed over the bytes one request costs on the wire is "
        "the most requests it carries. Near its crypto ceiling a figure is sound and more "
        "cores, not tuning, are the way up; below "
        f"{FAR_BELOW * 100:.0f}% of it something else dominates (the key exchange, the TCP "
        "connections, the proxied request, the kernel). No prediction in this guide exceeds "
        "a ceiling."
    ]
    if reference_used:
        paras.append(
            "Reference figures: ceiling not stated (the article names no CPU model, so what "
            "its hardware allowed is unknown)."
        )
    if not rows:
        return Limits(tuple(paras), None, ())
    near = [x for x in rows if x.share is not None and x.share >= FAR_BELOW]
    rest = len(rows) - len(near)
    if rest:
        low = [x.share for x in rows if x.share is not None and x.share < FAR_BELOW]
        top = f" (the highest {max(low) * 100:.0f}%)" if low else ""
        paras.append(
            f"{len(near) or 'No'} figure{'s' if len(near) != 1 else ''} reached "
            f"{FAR_BELOW * 100:.0f}% of a ceiling or more"
            + (" and are listed here" if near else "")
            + f"; the other {rest} stayed further from every ceiling known for them{top}, "
            "or have none known: Appendix C lists every figure."
        )
    table = _table(near, "Figures close to a ceiling") if near else None
    every = _table(rows, "Every figure and its ceiling") if rest else None
    return Limits(tuple(paras), table, tuple(rows), every)
