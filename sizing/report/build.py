"""Gather what the guide needs from disk: the store's runs, the catalog, the reference data.

This is the guide's only I/O before rendering. :func:`prepare` reads, chooses the figures
by ``--source`` and calls the pure :func:`sizing.report.guide.build_guide`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sizing import paths
from sizing.errors import UsageError
from sizing.model import Figure
from sizing.report.guide import Guide, GuideRequest, RunData, build_guide, figures_of_runs


@dataclass(frozen=True)
class Sources:
    """Where the guide reads from."""

    db: Path | None = None  # None: $SIZING_DB or results/sizing.sqlite
    catalog: Path | None = None
    runs: tuple[str, ...] = ()  # run ids, or "latest"; empty: every run


def read_runs(db: Path, selectors: Sequence[str]) -> list[RunData]:
    """The runs the guide covers, with their points and samples.

    ``selectors`` are run ids or ``latest``; none means every run of the store. An unknown
    run is a :class:`UsageError`. A missing database holds no runs (and is not created).
    """
    if not db.is_file():
        if selectors:
            raise UsageError(f"--run {selectors[0]}: no results database at {db}")
        return []
    from sizing.store import Store

    with Store(db) as store:
        known = {r.id: r for r in store.runs()}
        ids: list[int] = []
        for sel in selectors:
            if sel == "latest":
                latest = store.latest_run_id()
                if latest is None:
                    raise UsageError(f"--run latest: {db} holds no run")
                wanted = latest
            else:
                try:
                    wanted = int(sel)
                except ValueError:
                    raise UsageError(f"--run: {sel!r} is neither a run id nor 'latest'") from None
                if wanted not in known:
                    raise UsageError(f"--run {wanted}: no such run in {db}")
            if wanted not in ids:
                ids.append(wanted)
        if not selectors:
            ids = sorted(known)
        out: list[RunData] = []
        for run_id in sorted(ids):
            points = store.points(run_id)
            samples = {p.id: tuple(store.samples(p.id)) for p in points}
            out.append(RunData(known[run_id], tuple(points), samples))
    return out


def prepare(request: GuideRequest, sources: Sources) -> Guide:
    """Read everything, choose the figures, and build the guide's data."""
    from sizing.catalog import load_catalog, load_reference
    from sizing.engine import select

    catalog = load_catalog(sources.catalog)
    reference = load_reference()
    runs: list[RunData] = []
    if request.source != "reference":
        db = sources.db if sources.db is not None else paths.default_db()
        runs = read_runs(db, sources.runs)
    measured = figures_of_runs(runs, request.include_emulated)
    selection = select(measured, reference.figures, request.source)
    emulated: list[Figure] = [f for f in figures_of_runs(runs, include_emulated=True) if f.emulated]
    template = paths.TEMPLATES / "nginx.conf.j2"
    try:
        nginx_template = template.read_text(encoding="utf-8")
    except OSError:
        nginx_template = ""
    return build_guide(
        request,
        catalog,
        reference,
        selection,
        runs,
        emulated=emulated,
        nginx_template=nginx_template,
    )
