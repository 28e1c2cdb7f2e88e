"""``sizing results``: the stored runs with each point's evidence, read the one way
``run`` reads its own back (:func:`points_with_evidence`), and a run named by id or label;
the runs compared (:func:`compare`), the bases (:func:`bases`); ``sizing import``'s points
kept in a recovery file, stored (:func:`import_recovery`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sizing.engine.compare import (
    EnvDiff,
    FigureDiff,
    OverheadPair,
    environment_diff,
    figure_diff,
    pair_across_runs,
)
from sizing.errors import UsageError
from sizing.model import PointResult
from sizing.paths import Database
from sizing.provision.hostsafety import process_gone
from sizing.records import dump
from sizing.report.data.evidence import Evidence, point_evidence
from sizing.report.data.pairs import PairView, pair_views
from sizing.sizing_request import Inputs
from sizing.sources import BasisInputs, load_bases
from sizing.store import RunRecord, Store, read_recovery
from sizing.store.copy import Copied, copy_store
from sizing.store.leases import Lease, leases

__all__ = [
    "Compared",
    "Imported",
    "StoredRun",
    "bases",
    "compare",
    "exists",
    "import_recovery",
    "points_with_evidence",
    "read",
    "run_ref",
    "status",
]

Evidenced = list[tuple[PointResult, Evidence]]


@dataclass(frozen=True)
class StoredRun:
    """A stored run, its status as it stands (``abandoned`` when its process is gone) and
    its points with their guards' evidence."""

    record: RunRecord
    status: str
    points: Evidenced
    # its guests beside their host's bare metal of another run
    across: tuple[OverheadPair, ...] = ()

    @property
    def pairs(self) -> list[PairView]:
        """Its overheads and HT gains, and ``across`` (:func:`pair_views`)."""
        return pair_views([p for p, _ in self.points], self.across)

    @property
    def options_json(self) -> dict[str, Any]:
        """The run's options as ``results --json`` shows them: as stored, with who measured
        it (``owner``, its own column since schema 4, shown where it always was)."""
        out = self.record.options.to_json()
        if self.record.owner is not None:
            out["owner"] = dump(self.record.owner)
        return out


def status(run: RunRecord, lease: Lease | None = None) -> str:
    """The stored status, except that a run still marked running whose process is gone
    (killed with SIGKILL, a crashed machine) is ``abandoned``: known on the machine that
    ran it, and on any machine once the run's ``lease`` in the database has expired."""
    if run.status == "running" and run.owner is not None and process_gone(run.owner):
        return "abandoned"
    if run.status == "running" and lease is not None and lease.expired:
        return "abandoned"
    return str(run.status)


def run_ref(store: Store, ref: str, option: str) -> int:
    """A run named by its id or its ``--label`` (the latest run of that label)."""
    runs = store.runs()
    if ref.isdigit() and any(r.id == int(ref) for r in runs):
        return int(ref)
    labelled = [r.id for r in runs if r.label == ref]
    if labelled:
        return int(max(labelled))
    if ref.isdigit():
        raise UsageError(f"{option}: no run {ref} in {store.path}")
    raise UsageError(f"{option}: no run {ref!r} (neither an id nor a label) in {store.path}")


def points_with_evidence(store: Store, run_id: int) -> Evidenced:
    """Each stored point of a run with its guards' evidence (:func:`point_evidence`)."""
    hosts = store.get_run(run_id).environment
    return [
        (
            p.result,
            point_evidence(
                p.result, [s for _, s in store.samples(p.id)], hosts.get(p.result.key.host)
            ),
        )
        for p in store.points(run_id)
    ]


def read(db: Database, run: str | None = None) -> list[StoredRun]:
    """Every stored run (or the one ``run`` names), oldest first; none without a database."""
    if not Store.exists(db):
        return []
    with Store.open_readonly(db) as store:
        wanted = None if run is None else run_ref(store, run, "--run")
        every: dict[int, list[PointResult]] = {}
        for p in store.points():
            every.setdefault(p.run_id, []).append(p.result)
        across = pair_across_runs(every)
        held = {x.name: x for x in leases(store)}
        return [
            StoredRun(
                r,
                status(r, held.get(f"run:{r.id}")),
                points_with_evidence(store, r.id),
                tuple(a for a in across if a.runs and a.runs[1] == r.id),
            )
            for r in store.runs()
            if wanted is None or r.id == wanted
        ]


def exists(db: Database) -> bool:
    """Whether the results database exists (a directory, or one this user may not look
    into, is refused)."""
    return Store.exists(db)


def bases(db: Database, *, include_virtualized: bool, include_emulated: bool) -> BasisInputs:
    """``results --bases``: every basis, and the one the engine commands would choose."""
    return load_bases(
        Inputs(db=db, include_virtualized=include_virtualized, include_emulated=include_emulated)
    )


@dataclass(frozen=True)
class Compared:
    """``results --compare``: the runs, each after the first against it (its environment
    and figures), and the guests of one run beside their host's bare metal of another."""

    runs: list[RunRecord]
    against: list[tuple[int, list[EnvDiff], list[FigureDiff]]]
    across: list[OverheadPair]

    @property
    def base(self) -> RunRecord:
        return self.runs[0]

    @property
    def across_pairs(self) -> list[PairView]:
        """The overheads of ``across`` (:func:`pair_views`)."""
        return pair_views([], self.across)


def compare(db: Database, refs: list[str]) -> Compared:
    """Every run ``refs`` names (by id or label) against the first."""
    if not Store.exists(db):
        raise UsageError(f"--compare: {db} does not exist; nothing measured yet")
    with Store.open_readonly(db) as store:
        runs = [store.get_run(run_ref(store, r, "--compare")) for r in refs]
        points = {r.id: [p.result for p in store.points(r.id)] for r in runs}
    base = runs[0]
    against = [
        (
            other.id,
            environment_diff(
                base.environment, other.environment, (points[base.id], points[other.id])
            ),
            figure_diff(points[base.id], points[other.id]),
        )
        for other in runs[1:]
    ]
    return Compared(runs, against, list(pair_across_runs(points)))


@dataclass(frozen=True)
class Imported:
    """``sizing import``: the points stored, those already there, and their runs."""

    added: int
    there: int
    runs: tuple[int, ...]


def copy_database(source: Database, destination: Database) -> Copied:
    """``sizing store copy``: ``source`` copied whole into the new ``destination``
    (:func:`sizing.store.copy.copy_store`)."""
    return copy_store(source, destination)


def import_recovery(file: Path, db: Database) -> Imported:
    """Store the points a run kept in the recovery file ``file`` (those already stored are
    left: importing twice adds nothing)."""
    records = read_recovery(file)
    if not records:  # an empty file (a run that could not write it): nothing to store
        return Imported(0, 0, ())
    Store.exists(db)  # refuses a directory, or one this user may not look into
    with Store(db) as store:
        added, there = store.import_points(records)
    return Imported(added, there, tuple(sorted({int(r["run_id"]) for r in records})))
