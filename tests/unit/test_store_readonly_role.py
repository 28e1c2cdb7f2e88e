"""A read-only role on a team's database (``GRANT SELECT`` only, docs/team-store.md) runs
``results``, ``table``, ``recommend`` and ``guide`` with the same answers as the role that
wrote the runs, and cannot write: a recovered point's import, a run's record and a copy
into the database are each one line with the store's exit code (6), and nothing is added.

Against the session's throwaway PostgreSQL cluster (tests/pgcluster.py); no mock.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sizing.cli import app
from sizing.errors import ExitStatus
from sizing.store import Store, StoreError
from sizing.store.recovery import point_record
from tests.labgen import store_lab
from tests.pgcluster import Cluster
from tests.unit.test_store_contract import new_run, point, samples

runner = CliRunner()


def cli(*args: str) -> tuple[int, str, str]:
    got = runner.invoke(app, list(args))
    return got.exit_code, got.stdout, got.stderr


@pytest.fixture(scope="module")
def team_db(pg_cluster: Cluster) -> tuple[str, str]:
    """A database written by its owner: (the owner's address, the read-only role's)."""
    name = pg_cluster.createdb("team")
    owner = pg_cluster.url(name)
    with Store(owner) as store:
        store_lab(store, cores=(1, 2), hts=("off",), guests=False, reps=3)
    return owner, pg_cluster.url(name, "sizing_ro")


READS = [
    ("results", "--json"),
    ("results", "--bases", "--json"),
    ("table", "--source", "measured", "--article-prices", "--json"),
    ("recommend", "--rps", "60000", "--article-prices", "--json"),
]


@pytest.mark.parametrize("args", READS, ids=[" ".join(a[:2]) for a in READS])
def test_the_read_only_role_reads_what_the_owner_reads(
    team_db: tuple[str, str], args: tuple[str, ...]
) -> None:
    owner, reader = team_db
    code, theirs, err = cli(*args, "--db", owner)
    assert code == 0, err
    code, mine, err = cli(*args, "--db", reader)
    assert code == 0, err
    a, b = json.loads(theirs), json.loads(mine)
    for doc in (a, b):
        doc.pop("db", None)
    assert a == b


def test_the_read_only_role_prints_the_guide(team_db: tuple[str, str], tmp_path: Path) -> None:
    _, reader = team_db
    out = tmp_path / "guide.md"
    code, _, err = cli("guide", "--format", "md", "--out", str(out), "--db", reader)
    assert code == 0, err
    assert "r640-01" in out.read_text(encoding="utf-8")


def test_the_read_only_role_cannot_write(team_db: tuple[str, str], tmp_path: Path) -> None:
    owner, reader = team_db
    before = cli("results", "--json", "--db", owner)[1]
    rec = tmp_path / "p.recovery.jsonl"
    rec.write_text(json.dumps(point_record(1, point(5.0), samples([5.0]))) + "\n", "utf-8")
    code, out, err = cli("import", str(rec), "--db", reader)
    assert code == ExitStatus.STORE and out == "", err
    assert "may not write" in err and len(err.strip().splitlines()) == 1
    src = tmp_path / "a.sqlite"
    with Store(src) as store:
        new_run(store)
    code, out, err = cli("store", "copy", str(src), reader)
    assert code != 0 and "Traceback" not in err  # it holds tables already: refused first
    with Store(reader) as store, pytest.raises(StoreError, match="may not write") as got:
        new_run(store)
    assert got.value.code == ExitStatus.STORE
    assert cli("results", "--json", "--db", owner)[1] == before
