"""The role grants docs/team-store.md gives an administrator work as it says: run as
written (its ``sql`` block) on a PostgreSQL cluster, two writers each store a run into one
database, and a reader reads both and cannot write (one line, exit code 6).

On the session's throwaway cluster (tests/pgcluster.py); the roles are the page's.
"""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest

from sizing.errors import ExitStatus
from sizing.store import Store, StoreError
from tests.pgcluster import Cluster
from tests.unit.test_store_contract import new_run

PAGE = Path(__file__).resolve().parents[2] / "docs" / "team-store.md"


def statements() -> list[str]:
    """The page's sql block, statement by statement (psql's ``\\c`` kept as one)."""
    block = re.search(r"```sql\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert block, "docs/team-store.md has no sql block"
    text = re.sub(r"--[^\n]*", "", block.group(1)).replace(" PASSWORD '...'", "")
    out: list[str] = []
    for part in text.split(";"):
        for line in part.strip().splitlines():
            if line.startswith("\\c"):
                out.append(line.strip())
                part = part.replace(line, "")
        if part.strip():
            out.append(part.strip())
    return out


def test_the_pages_grants_let_writers_write_and_readers_only_read(pg_cluster: Cluster) -> None:
    conn = psycopg.connect(pg_cluster.url("postgres"), autocommit=True)
    try:
        for stmt in statements():
            if stmt.startswith("\\c"):
                conn.close()
                conn = psycopg.connect(pg_cluster.url(stmt.split()[1]), autocommit=True)
                continue
            conn.execute(stmt.encode())  # the page's own statements
        conn.execute(b"CREATE ROLE bob LOGIN IN ROLE sizing_writers")  # a second writer
        conn.execute(b"ALTER ROLE bob SET role = 'sizing_writers'")
    finally:
        conn.close()
    for who in ("alice", "bob"):
        with Store(pg_cluster.url("sizing", who)) as store:
            new_run(store)
    with Store.open_readonly(pg_cluster.url("sizing", "carol")) as store:
        assert [r.id for r in store.runs()] == [1, 2]
    with Store(pg_cluster.url("sizing", "carol")) as store, pytest.raises(StoreError) as got:
        new_run(store)
    assert got.value.code == ExitStatus.STORE and "may not write" in str(got.value)
