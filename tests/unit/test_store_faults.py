"""Issue 27: a measured point is never lost. Real SQLite connections in this process and
in other processes hold the results database the way a BI tool, a `sqlite3` shell or a
second writer would; nothing is mocked."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.errors import ExitStatus
from sizing.model import PointKey, PointResult, Sample, Status
from sizing.records import PointMeta, SampleMeta
from sizing.store import (
    Store,
    StoreError,
    keep_for_recovery,
    read_recovery,
    recovery_path,
)

runner = CliRunner()
KEY = PointKey("localhost", "baremetal", 1, "off", "rps")
RESULT = PointResult(
    KEY,
    Status.MEASURED,
    value=41_234.5,
    unit="req/s",
    repetitions=3,
    spread=0.01,
    ci_low=41_000.0,
    ci_high=41_500.0,
    flags=("x",),
    metadata=PointMeta.parse({"server_cpu": 0.97}),
)
SAMPLES = [
    (
        1,
        Sample("requests_per_second", 41_234.5, "req/s", SampleMeta.parse({"client": "localhost"})),
    ),
    (2, Sample("requests_per_second", 41_000.0, "req/s", SampleMeta())),
]


def new_run(db: Path) -> tuple[Store, int]:
    store = Store.for_run(db)
    return store, store.start_run(inventory="i", argv=["sizing"], tool_version="t", options={})


def hold(db: Path, how: str, seconds: float) -> subprocess.Popen[str]:
    """Another process holding the database: ``read`` (an open read transaction) or
    ``write`` (BEGIN IMMEDIATE); it prints "held" once it holds, and lets go after
    ``seconds`` (bounded)."""
    code = (
        "import sqlite3, sys, time\n"
        f"c = sqlite3.connect({str(db)!r}, isolation_level=None, timeout=10)\n"
        + (
            "c.execute('BEGIN'); c.execute('SELECT count(*) FROM runs').fetchone()\n"
            if how == "read"
            else "c.execute('BEGIN IMMEDIATE')\n"
        )
        + f"print('held', flush=True); time.sleep({seconds}); c.execute('ROLLBACK')\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_reader_holding_the_database_never_blocks_the_runs_writes(tmp_path: Path) -> None:
    """The reported fault: a reader holding a read transaction made the run wait 30 s and
    lose its point. In WAL mode the run writes at once, and the reader still sees its
    snapshot."""
    db = tmp_path / "r.sqlite"
    store, run_id = new_run(db)
    reader = hold(db, "read", 60)
    try:
        began = time.monotonic()
        store.add_point(run_id, RESULT, SAMPLES)
        store.finish_run(run_id, "complete")
        took = time.monotonic() - began
    finally:
        reader.kill()
        reader.wait(timeout=10)
        store.close()
    assert took < 5, f"the writer waited {took:.1f} s for a reader"
    with Store.open_readonly(db) as st:
        assert [p.result.value for p in st.points(run_id)] == [41_234.5]
        assert st.get_run(run_id).status == "complete"


def test_the_database_stays_in_wal_and_a_reader_opened_before_the_run_blocks_nothing(
    tmp_path: Path,
) -> None:
    """The reported order: the reader (a BI tool) opened the database before the run. After
    one run the file is in WAL at rest (one file: the last connection folds the WAL in),
    so the next run writes under that reader at once."""
    db = tmp_path / "r.sqlite"
    store, run_id = new_run(db)
    store.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.sqlite"]
    reader = hold(db, "read", 60)
    try:
        began = time.monotonic()
        store, run_id = new_run(db)
        store.add_point(run_id, RESULT, SAMPLES)
        store.finish_run(run_id, "complete")
        took = time.monotonic() - began
        store.close()
    finally:
        reader.kill()
        reader.wait(timeout=10)
    assert took < 5, f"the writer waited {took:.1f} s for a reader opened before it"
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_reader_at_the_first_write_is_waited_for_then_wal_takes_over(tmp_path: Path) -> None:
    """A reader on a database at rest (rollback journal) when the run first writes: the
    switch to WAL must wait, the write waits for the reader (saying so), then succeeds."""
    db = tmp_path / "r.sqlite"
    Store(db).close()
    reader = hold(db, "read", 3)
    store = Store.for_run(db)
    waits: list[float] = []
    store.on_wait = waits.append
    try:
        run_id = store.start_run(inventory="i", argv=[], tool_version="t", options={})
        store.add_point(run_id, RESULT, SAMPLES)
        assert waits, "the write waited for the reader without saying so"
        assert store.journal_mode == "wal"
    finally:
        reader.wait(timeout=20)
        store.close()
    with Store.open_readonly(db) as st:
        assert len(st.points(run_id)) == 1


def test_another_writer_is_waited_for_past_one_attempt(tmp_path: Path) -> None:
    """Another writer holds the lock for 4 s, twice one attempt's wait (2 s): the write
    retries (each retry said through on_wait) and stores the point."""
    db = tmp_path / "r.sqlite"
    store, run_id = new_run(db)
    waits: list[float] = []
    store.on_wait = waits.append
    writer = hold(db, "write", 4)
    try:
        store.add_point(run_id, RESULT, SAMPLES)
    finally:
        writer.wait(timeout=20)
        store.close()
    assert waits and waits[0] >= 2.0  # one attempt's wait, then said
    with Store.open_readonly(db) as st:
        assert [p.result.key for p in st.points(run_id)] == [KEY]


def test_past_its_patience_or_on_a_signal_the_write_says_how_long_it_waited(
    tmp_path: Path,
) -> None:
    db = tmp_path / "r.sqlite"
    store = Store(db, timeout=0.3, patience=1.5)
    run_id = store.start_run(inventory="i", argv=[], tool_version="t", options={})
    writer = hold(db, "write", 30)
    try:
        with pytest.raises(StoreError) as info:
            store.add_point(run_id, RESULT, SAMPLES)
        assert info.value.code == ExitStatus.STORE and not info.value.stopped
        # how long it waited, as the clock saw it: about its patience (the last try's
        # back-off would pass it), more on a slow or busy machine, never nothing
        waited = re.search(
            r"locked by another process \(waited (\d+(?:\.\d)?) s\)", str(info.value)
        )
        assert waited is not None, str(info.value)
        assert 0.5 <= float(waited.group(1)) <= 30.0, str(info.value)
        store.stop = lambda: True  # what a Ctrl-C during the wait sets
        with pytest.raises(StoreError) as stopped:
            store.add_point(run_id, RESULT, SAMPLES)
        assert stopped.value.stopped and str(stopped.value).endswith("; stopped by a signal")
    finally:
        writer.kill()
        writer.wait(timeout=10)
        store.close()


def test_a_database_replaced_under_the_writer_is_refused_not_written_to_a_lost_wal(
    tmp_path: Path,
) -> None:
    db = tmp_path / "r.sqlite"
    store, run_id = new_run(db)
    store.add_point(run_id, RESULT, SAMPLES)
    db.rename(tmp_path / "moved.sqlite")
    Store(db).close()  # another database now under the name
    with pytest.raises(StoreError, match="deleted or moved while sizing used it"):
        store.add_point(run_id, RESULT, SAMPLES)
    store.close()


def test_a_point_kept_for_recovery_is_imported_once(tmp_path: Path) -> None:
    """What the run does when a point cannot be stored, then what the user runs."""
    db = tmp_path / "r.sqlite"
    store, run_id = new_run(db)
    store.close()
    where, line = keep_for_recovery(db, run_id, RESULT, SAMPLES)
    assert where == recovery_path(db) == tmp_path / "r.sqlite.recovery.jsonl"
    assert json.loads(line)["key"]["cores"] == 1
    first = runner.invoke(app, ["import", str(where), "--db", str(db)])
    assert first.exit_code == 0, first.output
    assert first.stdout.strip() == f"imported 1 point(s) into run {run_id} of {db}"
    again = runner.invoke(app, ["import", str(where), "--db", str(db)])
    assert again.stdout.strip().endswith("; 1 already there"), again.output
    with Store.open_readonly(db) as st:
        [p] = st.points(run_id)
        assert (p.result.key, p.result.status, p.result.value, p.result.flags) == (
            KEY,
            Status.MEASURED,
            41_234.5,
            ("x",),
        )
        assert [(r, s.value) for r, s in st.samples(p.id)] == [(1, 41_234.5), (2, 41_000.0)]


def test_a_recovery_file_that_cannot_be_written_beside_the_db_goes_to_tmp(
    tmp_path: Path,
) -> None:
    """The database's directory is gone (a full or vanished disk is alike): the point goes
    to the temporary directory, and the caller is told where."""
    where, _ = keep_for_recovery(tmp_path / "gone" / "r.sqlite", 1, RESULT, SAMPLES)
    try:
        assert where is not None and where.parent != tmp_path / "gone"
        assert read_recovery(where)[0]["run_id"] == 1
    finally:
        if where is not None:
            where.unlink()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"x": 1}\n', "line 1: not a point sizing kept for recovery"),
        ("not json\n", "line 1: not a point sizing kept for recovery"),
    ],
)
def test_a_bad_recovery_file_is_one_line_exit_3(tmp_path: Path, text: str, message: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text)
    res = runner.invoke(app, ["import", str(bad), "--db", str(tmp_path / "r.sqlite")])
    assert res.exit_code == 3
    assert res.stderr.strip() == f"error: {bad}: {message}" or (
        res.stderr.startswith(f"error: {bad}: {message}") and "\n" not in res.stderr.strip()
    )
    assert not (tmp_path / "r.sqlite").exists()  # nothing created for a bad file


@pytest.mark.parametrize("text", ["", "\n", "\n  \n"], ids=["0 bytes", "a newline", "blank"])
def test_an_empty_recovery_file_imports_as_nothing_said_so(tmp_path: Path, text: str) -> None:
    """Issue 45: a run on a full disk could leave a 0-byte recovery file; importing it is
    not an error, and creates no database."""
    empty = tmp_path / "r.sqlite.recovery.jsonl"
    empty.write_text(text)
    res = runner.invoke(app, ["import", str(empty), "--db", str(tmp_path / "r.sqlite")])
    assert res.exit_code == 0, res.stderr
    assert res.stdout == f"{empty} holds no point: nothing imported\n"
    assert not (tmp_path / "r.sqlite").exists()


def test_a_recovered_point_of_a_run_the_database_lacks_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    Store(db).close()
    where, _ = keep_for_recovery(tmp_path / "other.sqlite", 7, RESULT, SAMPLES)
    res = runner.invoke(app, ["import", str(where), "--db", str(db)])
    assert res.exit_code != 0 and res.stderr.strip() == f"error: {db}: no run 7"


def test_the_sweep_keeps_a_point_it_cannot_store_and_says_how_to_import_it(
    tmp_path: Path,
) -> None:
    """The sweep's own path (``store_point`` of its stages) with a real store whose lock another
    process holds past a short patience: the point goes to the recovery file, the note
    names the import command, and the store's error still ends the run."""
    from sizing.model import RunStatus, RunSummary
    from sizing.sweep import OpenRun
    from sizing.sweep.stages import store_point

    db = tmp_path / "r.sqlite"
    store = Store(db, timeout=0.2, patience=0.5)
    run_id = store.start_run(inventory="i", argv=[], tool_version="t", options={})
    notes: list[str] = []

    class Notes:
        def note(self, message: str) -> None:
            notes.append(message)

    class Context:  # the stage reads only the context's progress
        progress = Notes()

    summary = RunSummary(run_id=run_id, status=RunStatus.RUNNING)
    writer = hold(db, "write", 30)
    try:
        with pytest.raises(StoreError):
            store_point(Context(), OpenRun(store, summary), RESULT, SAMPLES)  # type: ignore[arg-type]
    finally:
        writer.kill()
        writer.wait(timeout=10)
    store.close()
    kept = recovery_path(db)
    assert summary.recovered == [KEY.label()] and summary.points == [RESULT]
    [note] = notes
    assert f"import it with `sizing import {kept} --db {db}`" in note
    res = runner.invoke(app, ["import", str(kept), "--db", str(db)])
    assert res.exit_code == 0, res.output
    with Store.open_readonly(db) as st:
        assert len(st.points(run_id)) == 1


def test_threads_reading_while_a_run_writes_block_nothing(tmp_path: Path) -> None:
    """Many readers at once (results --json during a run) and the writer: all succeed."""
    db = tmp_path / "r.sqlite"
    store, run_id = new_run(db)
    errors: list[Exception] = []

    def read() -> None:
        try:
            for _ in range(20):
                with Store.open_readonly(db) as st:
                    st.points(run_id)
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for _ in range(20):
        store.add_point(run_id, RESULT, SAMPLES)
    for t in threads:
        t.join(timeout=60)
    store.close()
    assert errors == []
    with Store.open_readonly(db) as st:
        assert len(st.points(run_id)) == 20


def test_a_database_on_a_read_only_file_system(tmp_path: Path) -> None:
    """A copy of the results on a read-only share (a read-only bind mount here, which
    needs root: skipped without). Reading works although a WAL database's -shm cannot be
    created there; writing is refused before any work, naming why, exit 6."""
    src = tmp_path / "src"
    src.mkdir()
    store, run_id = new_run(src / "r.sqlite")  # WAL at rest, as a run leaves it
    store.add_point(run_id, RESULT, SAMPLES)
    store.close()
    ro = tmp_path / "ro"
    ro.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(src), str(ro)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {mounted.stderr.decode().strip()}")
    try:
        remount = ["mount", "-o", "remount,ro,bind", str(ro)]
        if subprocess.run(remount, capture_output=True).returncode != 0:
            pytest.skip("cannot remount read-only here")
        shown = runner.invoke(app, ["results", "--db", str(ro / "r.sqlite"), "--json"])
        assert shown.exit_code == 0, shown.output
        assert json.loads(shown.stdout)["runs"][0]["points"][0]["value"] == 41_234.5
        for db, what in [
            (ro / "r.sqlite", "the results database"),
            (ro / "new.sqlite", f"its directory {ro}"),
        ]:
            with pytest.raises(StoreError) as info:
                Store.for_run(db)
            assert str(info.value) == f"{db}: cannot write {what} (a read-only file system)"
            assert info.value.code == ExitStatus.STORE
    finally:
        subprocess.run(["umount", str(ro)], capture_output=True)
