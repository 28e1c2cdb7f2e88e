"""The I/O before the engine: the store's runs and figures, the cost catalog, the reference
data, chosen by ``--source``.

``recommend``, ``table`` and ``guide`` read their inputs here and nowhere else; the engine
(:mod:`sizing.engine`) and the guide's view model (:mod:`sizing.report.data`) stay pure.
Heavy imports (pydantic, YAML, SQLite) happen inside the functions so that ``sizing --help``
starts fast. This module never imports :mod:`sizing.report`: the report reads from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sizing import paths
from sizing.catalog import load_catalog, load_catalog_data, load_reference
from sizing.engine import measured_figures
from sizing.engine.roles import WorkloadAsk, choose_workload
from sizing.engine.slo import latency_workloads, slo_figures
from sizing.errors import UsageError
from sizing.model import FigureKind, SizingMetric, Source, Status, client_floor
from sizing.paths import Database
from sizing.sizing_request import Inputs
from sizing.sources.bases import (
    BasisInputs,
    Declared,
    hardware_of,
    measured_bases,
    reference_bases,
    software_label,
)
from sizing.sources.declared import basis_prices, declared_of, record_declared
from sizing.sources.rundata import RunData
from sizing.store import Store

__all__ = [
    "BasisInputs",
    "Declared",
    "RunData",
    "Inputs",
    "basis_prices",
    "db_path",
    "declared_of",
    "figures_of_runs",
    "hardware_of",
    "latency_figures",
    "load_bases",
    "measured_bases",
    "nginx_template",
    "read_runs",
    "reference_bases",
    "software_label",
]

if TYPE_CHECKING:
    from sizing.engine.basis import Basis
    from sizing.engine.choice import Choice, Want
    from sizing.knee import Slo
    from sizing.model import Figure


def db_path(db: Database | None) -> Database:
    """The results database (:func:`sizing.paths.results_db`); a directory is refused."""
    path = paths.results_db(db)
    Store.exists(path)  # refuses a directory, or one this user may not look into
    return path


def read_runs(db: Database, selectors: Sequence[str], *, samples: bool = True) -> list[RunData]:
    """The runs the guide covers, with their points, each point's timed repetitions and,
    unless ``samples`` is False, its samples.

    ``selectors`` are run ids or ``latest``; none means every run of the store. An unknown
    run is a :class:`UsageError`. A missing database holds no runs (and is not created).
    ``samples=False`` (recommend, table: what sizes needs only the timed repetitions)
    leaves the samples unread: decoding them was most of the read.
    """
    if not Store.exists(db):
        if selectors:
            raise UsageError(f"--run {selectors[0]}: no results database at {db}")
        return []

    with Store.open_readonly(db) as store:
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
            points, timed = store.timed_points(run_id)
            got = {p.id: tuple(store.samples(p.id)) for p in points} if samples else {}
            out.append(RunData(known[run_id], tuple(points), got, timed))
    return out


def figures_of_runs(runs: Sequence[RunData], include_emulated: bool) -> list[Figure]:
    """Valid measured figures of the given runs, newest point per configuration
    (:func:`sizing.engine.measured_figures` over the runs' points)."""
    return measured_figures(
        ((p.id, p.run_id, p.result) for run in runs for p in run.points), include_emulated
    )


def _nothing_usable(runs: Sequence[RunData]) -> str:
    """Why no measured basis came out of the runs: what their points ended as, and where
    to read each reason."""
    from collections import Counter

    ended = Counter(p.result.status.value for r in runs for p in r.points)
    if not ended:
        return f"nothing usable measured yet: the {_runs(len(runs))} stored no point"
    parts = ", ".join(f"{n} {status}" for status, n in sorted(ended.items()))
    return (
        f"nothing usable measured yet: the {_runs(len(runs))} gave no valid figure "
        f"({parts}; `sizing results` says why each is not valid)"
    )


def _runs(n: int) -> str:
    return "run" if n == 1 else f"{n} runs"


def load_bases(
    where: Inputs,
    *,
    with_runs: bool = False,
    serves: Want | None = None,
    every_reference: bool = False,
    workload: WorkloadAsk | None = None,
) -> BasisInputs:
    """Read the store, the catalog and the reference data; build every basis; choose.

    ``where.source``: ``reference`` offers only the reference bases, ``measured`` only the
    measured ones (none qualifying is a :class:`UsageError`), ``both`` the default choice
    (:func:`sizing.engine.basis.choose`). ``where.basis`` (``--basis``) picks by id.
    ``with_runs`` (the guide): the runs ``where.runs`` selects are read and returned, and
    the bases come from them; otherwise from every run of the store. An explicit
    ``--catalog`` counts as asking for its prices on measured bases (``article_prices``).
    ``workload``: the role asked (:func:`sizing.engine.roles.choose_workload`).
    """
    catalog = load_catalog(where.catalog)
    catalog_data = load_catalog_data(where.catalog)
    reference = load_reference()
    runs: list[RunData] = []
    note = ""
    if where.source != Source.REFERENCE:
        path = db_path(where.db)
        runs = read_runs(path, where.runs if with_runs else (), samples=with_runs)
        if not runs:
            note = "nothing measured yet"
            if where.db is not None and not Store.exists(path):  # a --db named, not there
                note = f"no results database at {path}"
        # runs recorded before the sweep kept what their inventory declares get it once,
        # so that no later read-only command reads an inventory (through Ansible) again
        Store.backfill_environment(path, record_declared(runs))
    measured = measured_bases(runs, declared_of(runs)) if runs else []
    if runs and not measured:
        note = _nothing_usable(runs)
    refs = reference_bases(reference)
    prices = basis_prices(measured, declared_of(runs) if runs else {}, catalog_data)
    measured = [replace(b, price=prices.get(b.id)) for b in measured]
    unusable = _unusable_replay(runs, workload.customer if workload else "")
    try:
        choice = _choose(
            measured,
            refs,
            where.source,
            where.basis,
            include_virtualized=where.include_virtualized,
            include_emulated=where.include_emulated,
            serves=serves,
            every_reference=every_reference,
            ask=workload,
        )
    except UsageError as e:
        raise _refusal(e, where, unusable) from None
    if unusable and not any(b.workload.customer for b in choice.bases):
        choice = replace(choice, why=f"{choice.why}; {unusable}")
    if note and not any(b.origin == FigureKind.MEASURED for b in choice.bases):
        # the note says why no measured basis was chosen: beside that sentence, before
        # the workload's
        said = "" if choice.workload is None else f"; {choice.workload.sentence()}"
        why = choice.why.removesuffix(said)
        choice = replace(choice, why=f"{why} ({note}){said}")
    return BasisInputs(
        bases=tuple(measured + refs),
        choice=choice,
        prices=prices,
        catalog=catalog,
        reference=reference,
        article_prices=where.article_prices or where.catalog is not None,
        runs=tuple(runs) if with_runs else (),
        note=note,
        inventories={r.record.id: r.record.inventory for r in runs if r.record.inventory},
        own_clients=frozenset(
            (r.record.id, pt.result.key.host)
            for r in runs
            for pt in r.points
            if pt.result.key.host in (pt.result.metadata.env.clients or ())
        ),
    )


def _refusal(e: UsageError, where: Inputs, unusable: str) -> UsageError:
    """The choice's refusal with what explains it: a results file that is not there,
    said first (an unknown --basis is unknown because nothing was read), and the
    customer's replays that size nothing, said after."""
    path = db_path(where.db) if where.source != Source.REFERENCE else None
    missing = isinstance(path, Path) and not Store.exists(path)
    if not unusable and not missing:
        return e
    said = f"no results database at {path} (nothing measured there yet): {e}" if missing else str(e)
    return UsageError(f"{said}; {unusable}" if unusable else said)


def _unusable_replay(runs: Sequence[RunData], customer: str) -> str:
    """What became of the demand's own replays that size nothing (invalid, not a lower
    bound; or failed): said beside the answer or the refusal, never left out silently."""
    if not customer:
        return ""
    bad = [
        f"run {p.run_id}, {p.result.key.host} {p.result.key.cores}c: "
        + (", ".join(p.result.flags) or p.result.status.value)
        for r in runs
        for p in r.points
        if p.result.key.profile == customer
        and p.result.status in (Status.INVALID, Status.FAILED)
        and not client_floor(p.result)
    ]
    if not bad:
        return ""
    return (
        f"your workload's replay in the store sizes nothing ({'; '.join(bad)}: "
        "`sizing results -v` says why)"
    )


def _choose(
    measured: list[Basis],
    refs: list[Basis],
    source: str,
    requested: Sequence[str] | None,
    **how: Any,
) -> Choice:
    """The choice among the bases ``source`` offers for the workload asked (``how``:
    :func:`choose_workload`'s options); ``--source measured`` with no measured basis to
    offer or chosen is refused."""
    offered = (
        refs
        if source == Source.REFERENCE
        else measured
        if source == Source.MEASURED
        else measured + refs
    )
    if not offered:
        raise UsageError(
            "--source measured, but nothing usable is measured yet "
            "(run `sizing run`, or use --source reference)"
        )
    choice = choose_workload(offered, list(requested) if requested else None, **how)
    if (
        source == Source.MEASURED
        and not requested
        and not any(b.origin == FigureKind.MEASURED for b in choice.bases)
    ):
        why = "; ".join(f"{i}: {r}" for i, r in choice.passed_over) or "nothing measured"
        raise UsageError(
            f"--source measured, but no measured basis qualifies ({why}); name one with "
            "--basis, or pass --include-virtualized / --include-emulated"
        )
    return choice


def latency_figures(
    figures: Sequence[Figure],
    slo: Slo,
    db: Database | None,
    include_emulated: bool,
    workload: str | None = None,
    include_virtualized: bool = False,
) -> tuple[tuple[Figure, ...], list[Figure], str]:
    """``--p95``: ``figures`` with their rps figures replaced by the measured
    RPS-under-``slo`` figures of ONE latency workload of the store
    (:func:`sizing.engine.slo.slo_figures`); those figures; and the workload's id.

    ``workload`` is an id (``latency/proxy/https/1024B``) or a unique prefix of one; None
    takes the only one stored. Several without a choice, an unknown id, or no valid
    latency point is a :class:`UsageError` naming the ids there are."""
    path = db_path(db)
    points: list[tuple[int, Any]] = []
    if Store.exists(path):
        with Store.open_readonly(path) as store:
            points = [(p.run_id, p.result) for p in store.iter_valid()]
    ids = sorted(latency_workloads(points))
    if not ids:
        raise UsageError(
            f"--p95: no valid latency measurement in {path} (run `sizing run --profile "
            f"latency`); reference data has no latency figures"
        )
    if workload is None:
        if len(ids) > 1:
            raise UsageError(
                "--p95: latency was measured for several workloads; choose one with "
                f"--basis: {', '.join(ids)}"
            )
        chosen = ids[0]
    else:
        matches = [i for i in ids if i == workload] or [i for i in ids if i.startswith(workload)]
        if len(matches) != 1:
            raise UsageError(
                f"--basis {workload!r} names {'no' if not matches else 'more than one'} latency "
                f"workload; measured: {', '.join(ids)}"
            )
        chosen = matches[0]
    found = slo_figures(
        points,
        slo,
        include_emulated=include_emulated,
        workload=chosen,
        include_virtualized=include_virtualized,
    )
    if not found:
        raise UsageError(
            f"--p95: no rate of {chosen} in {path} met p95 <= {slo.limit_ms:g} ms "
            "(or its points are emulated or on a virtualized host: --include-emulated, "
            "--include-virtualized)"
        )
    return tuple(f for f in figures if f.profile != SizingMetric.RPS) + tuple(found), found, chosen


def nginx_template() -> str:
    """The nginx configuration template's text (the guide's methodology quotes its fixed
    directives); empty when it cannot be read."""
    try:
        return (paths.TEMPLATES / "nginx.conf.j2").read_text(encoding="utf-8")
    except OSError:
        return ""
