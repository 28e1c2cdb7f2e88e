"""Shared test helpers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sizing.paths import Database, database
from tests.pgcluster import Cluster

DATA = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture(autouse=True)
def _results_db(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test writes into the user's results database (~/.local/share/sizing)."""
    monkeypatch.setenv("SIZING_DB", str(tmp_path_factory.mktemp("db") / "sizing.sqlite"))


@pytest.fixture(autouse=True)
def _no_inherited_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """The text's width is the tests' own choice: pytest-xdist's workers inherit
    ``COLUMNS=80`` from their set-up, which an unset terminal would not have."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One throwaway PostgreSQL cluster per test session (per xdist worker): initdb and
    pg_ctl in a temporary directory, a Unix socket there, stopped by its PID at the end."""
    cluster = Cluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()


ENGINES = ["sqlite", "postgresql"]


@pytest.fixture(params=ENGINES)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Database:
    """A new, empty results database on each engine: a file, and a database of its own on
    the session's PostgreSQL cluster. The store's contract tests take it and never ask
    which engine it is."""
    if request.param == "sqlite":
        return tmp_path / "sizing.sqlite"
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    return database(cluster.url(cluster.createdb()))
