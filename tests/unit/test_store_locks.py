"""A run's writes survive other processes opening and closing the same results database.

SQLite in WAL mode deletes the WAL when the last connection to the database closes, and
knows it is the last by the POSIX locks the others hold on the file. Closing any
descriptor of a file drops every POSIX lock its process holds on it, SQLite's too: a run
that opened its database file with a descriptor of its own (sizing checked the file's
first bytes that way, each time it opened a connection, as the lease keeper does beside
the run's) lost its lock, and another process's closing connection took the WAL away
under it. The run's later writes (its end among them) went into the deleted file: its
row stayed ``running``, and every reader got "disk I/O error". Seen under a CPU quota,
where the keeper's first renewal came before the test's last look at the database.

Real SQLite and real processes: the other process is a Python interpreter that opens the
database read-write and closes it, as ``sqlite3`` (the shell) or another writer would.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from sizing.store import Store
from sizing.store.connection import Connection

# another process: opens the database read-write, reads, closes (a checkpoint and the
# WAL's removal if it finds itself the last connection)
OTHER = (
    "import sqlite3, sys\n"
    "db = sqlite3.connect(sys.argv[1], timeout=10)\n"
    "db.execute('SELECT count(*) FROM runs').fetchone()\n"
    "db.close()\n"
)


def another_process_opens_and_closes(db: Path) -> None:
    subprocess.run([sys.executable, "-c", OTHER, str(db)], check=True, timeout=60)


def status_read_elsewhere(db: Path, run_id: int) -> str:
    """The run's status as another process reads it now (``sizing results`` would)."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            "db = sqlite3.connect(f'file:{sys.argv[1]}?mode=ro', uri=True, timeout=10)\n"
            "print(db.execute('SELECT status FROM runs WHERE id = ?', (int(sys.argv[2]),))"
            ".fetchone()[0])\n",
            str(db),
            str(run_id),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_a_second_connection_in_the_run_process_keeps_the_runs_writes(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    store = Store.for_run(db)
    try:
        run_id = store.start_run(inventory="t", argv=["sizing"], tool_version="0", options={})
        # the lease keeper's connection, opened and closed beside the run's (as it
        # reconnects after an error)
        Connection(db).close()
        keeper = Connection(db)
        for _ in range(2):  # the second also finds no WAL if the first removed it
            another_process_opens_and_closes(db)
        store.finish_run(run_id, "interrupted", "interrupted by SIGTERM")
        # read while the run's process still holds the database, then after it closed
        assert status_read_elsewhere(db, run_id) == "interrupted"
        keeper.close()
    finally:
        store.close()
    assert status_read_elsewhere(db, run_id) == "interrupted"
    with sqlite3.connect(db) as after:
        assert after.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
