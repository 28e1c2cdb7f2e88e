"""A stored run reads back typed: its options as a :class:`RunOptionsRecord`, its owner as a
:class:`LockOwner` (its own column; an older row's owner, kept in the options, upgraded by
the schema-4 migration or as it is read), its environment host by host; a damaged record
reads as "not recorded"; no module reads a stored run's options by key; and the options
``--resume`` refuses, derived from ``RunOptions``' declarations, are those it refuses."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
import typer

from sizing.app import run as app_run
from sizing.cli import app
from sizing.errors import UsageError
from sizing.plan.settings import MeasureSettings
from sizing.records import HostRecord, LockOwner, RunOptionsRecord
from sizing.store import Store
from sizing.sweep import RunOptions
from sizing.sweep.options import resume_refuses

ROOT = Path(__file__).resolve().parents[2]
KEY_READ = re.compile(r"""options(\[|\.get\()""")
SCHEMA_V1 = ROOT / "tests" / "data" / "store" / "schema_d6f0b9c.sql"
OWNER = {"controller": "m1", "pid": 42, "pid_start": 7}


def _old_db(path: Path, options: dict[str, object]) -> Path:
    """A database as the first schema wrote it, its one run's options as given."""
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_V1.read_text())
    db.execute(
        "INSERT INTO runs (started_at, status, inventory, argv, tool_version, options,"
        " environment) VALUES (1.0, 'running', 'inv.yml', '[]', '0.1', ?, ?)",
        (json.dumps(options), json.dumps({"web": {"kernel": "6.1", "hypervisor": None}})),
    )
    db.commit()
    db.close()
    return path


def test_an_older_run_reads_back_typed_read_only_and_migrated(tmp_path: Path) -> None:
    stored = {
        "label": "r640 baseline",
        "warmup_s": 3,
        "owner": OWNER,
        "cores": [1, 2],
        "profiles": ["rps", "tps"],
        "future": {"x": 1},
    }
    db = _old_db(tmp_path / "old.sqlite", stored)
    with Store.open_readonly(db) as store:  # never migrated: upgraded as it is read
        (before,) = store.runs()
    with Store(db) as store:  # migrated
        (after,) = store.runs()
    for run in (before, after):
        assert run.owner == LockOwner(controller="m1", pid=42, pid_start=7)
        assert run.label == "r640 baseline" and run.options.warmup_s == 3.0
        assert run.options.cores == (1, 2) and run.options.profiles == ("rps", "tps")
        assert run.options.verbatim_unknown == {"future": {"x": 1}}  # another sizing's: kept
        assert run.environment == {"web": HostRecord(kernel="6.1")}
    raw = sqlite3.connect(db).execute("SELECT options, owner FROM runs").fetchone()
    assert "owner" not in json.loads(raw[0]) and json.loads(raw[1]) == OWNER


def test_the_owner_is_the_runs_own(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        run_id = store.start_run(
            inventory="i", argv=[], tool_version="t", options=RunOptionsRecord(label="a")
        )
        assert store.get_run(run_id).owner is None
        store.set_owner(run_id, LockOwner(controller="m2", pid=5))
        run = store.get_run(run_id)
    assert run.owner == LockOwner(controller="m2", pid=5)
    assert run.options == RunOptionsRecord(label="a")


def test_a_damaged_record_reads_as_not_recorded() -> None:
    rec = RunOptionsRecord.parse({"label": 7, "warmup_s": "three", "cores": "all"})
    assert (rec.label, rec.warmup_s, rec.cores) == (None, None, None)
    assert RunOptionsRecord.parse(None) == RunOptionsRecord()


def test_no_module_reads_a_stored_runs_options_by_key() -> None:
    assert KEY_READ.search("x = run.record.options['warmup_s']")
    assert KEY_READ.search('rec.options.get("owner")')
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sorted((ROOT / "sizing").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if KEY_READ.search(line)
    ]
    assert found == []


def test_resume_refuses_exactly_the_derived_options(tmp_path: Path) -> None:
    """Every ``sizing run`` parameter typed beside ``--resume``: refused (naming it) when
    the derived list holds it, taken otherwise; the measure settings each by their own
    name, derived from ``MeasureSettings``' fields."""
    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        run_id = store.start_run(
            inventory="inv.yml", argv=[], tool_version="t", options=RunOptionsRecord(cores=(1,))
        )
        store.finish_run(run_id, "complete")
    opts = RunOptions(inventory=Path("x"), cores=(8,), hts=(), profiles=(), db=db)
    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    params = [p.name for p in command.params if p.name and p.name != "resume"]
    refused = {o.replace("-", "_") for o in resume_refuses()}
    settings = {f.name.removesuffix("_s") for f in MeasureSettings.__dataclass_fields__.values()}
    assert settings <= refused
    for name in params:
        if name in refused:
            with pytest.raises(UsageError, match=f"drop --{name.replace('_', '-')}$"):
                app_run.resume(opts, run_id, [name])
        else:
            assert app_run.resume(opts, run_id, [name]).opts.cores == (1,), name
    assert refused <= set(params), refused - set(params)


def test_an_option_the_record_does_not_declare_is_kept_as_stored() -> None:
    """A ``run`` option added to ``RunOptions`` alone is stored in the record's extra,
    read back by ``--resume`` by its name and shown by ``results --json`` as stored."""
    rec = RunOptionsRecord.parse({"label": "a", "operator": "kim"})
    assert (rec.value("operator"), rec.value("label"), rec.value("sample")) == ("kim", "a", None)
    assert rec.to_json()["operator"] == "kim"
