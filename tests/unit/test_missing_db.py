"""Issue 62: a results database file that is not there is said to be missing, first. As
typed from docs/recommend.md before its runs were stored, ``SIZING_DB=missing.sqlite sizing
recommend --basis localhost`` answered "unknown basis 'localhost'", blaming the basis for a
file that was never made; ``sizing results`` already said "(... does not exist)"."""

from __future__ import annotations

import string
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sizing.cli import app
from tests.unit.test_sources import ENV, fill, point

runner = CliRunner()


def _refusal(argv: list[str], db: Path) -> str:
    res = runner.invoke(app, argv, env={"SIZING_DB": str(db), "COLUMNS": "100"})
    assert res.exit_code == 2, res.output  # a usage error
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and res.stdout == "", res.output
    return lines[0]


def test_an_unknown_basis_in_a_missing_database_names_the_file(tmp_path: Path) -> None:
    db = tmp_path / "bench" / "recommend.sqlite"
    line = _refusal(["recommend", "--rps", "200000", "--basis", "localhost"], db)
    assert line.startswith(f"error: no results database at {db} (nothing measured there yet): ")
    assert line.endswith(
        "unknown basis 'localhost' (known: reference/baremetal, reference/esxi,"
        " reference/kubernetes)"
    )
    assert not db.exists()  # a read never creates it
    measured = _refusal(["table", "--source", "measured"], db)
    assert measured.startswith(f"error: no results database at {db} ")


def test_a_database_that_exists_blames_the_basis_alone(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    fill(db, {"r640-01": ENV["r640-01"]}, [point("r640-01", "baremetal", 1, "rps", [1.0, 2.0])])
    line = _refusal(["recommend", "--rps", "1000", "--basis", "nosuch"], db)
    assert line.startswith("error: unknown basis 'nosuch' (known: ")
    assert "no results database" not in line


@settings(max_examples=25, deadline=None)
@given(
    name=st.text(string.ascii_letters + string.digits + "-_.", min_size=1, max_size=20).filter(
        lambda s: s not in (".", "..")
    ),
    basis=st.text(string.ascii_lowercase + string.digits + "-/", min_size=1, max_size=20).filter(
        lambda s: (
            not "reference/baremetal".startswith(s)
            and not "reference/esxi".startswith(s)
            and not "reference/kubernetes".startswith(s)
        )
    ),
)
def test_any_missing_file_is_said_before_any_unknown_basis(name: str, basis: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        db = Path(d) / name
        line = _refusal(["recommend", "--tps", "100", "--basis", basis], db)
        assert line.startswith(f"error: no results database at {db} (nothing measured there yet)")
        assert f"unknown basis {basis!r}" in line
        assert not db.exists()
