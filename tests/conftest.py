"""Shared test helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

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
