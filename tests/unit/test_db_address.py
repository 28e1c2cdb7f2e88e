"""``--db`` and ``$SIZING_DB``: a ``postgresql://`` address is a server's database, anything
else a file; an address that carries a password is refused in one line that never repeats
it, whatever the password, user, host and database (generated)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizing.errors import ExitStatus, UsageError
from sizing.paths import DbUrl, database, results_db

NAME = st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=1, max_size=12)
# any text, ended by a mark no message holds: "not in the line" cannot pass by chance
SECRET = st.text(st.characters(blacklist_categories=("Cs",)), max_size=24).map(lambda s: s + "9Q")


@given(user=NAME, host=NAME, db=NAME, scheme=st.sampled_from(["postgresql", "postgres"]))
def test_an_address_without_a_password_is_a_servers_database(
    user: str, host: str, db: str, scheme: str
) -> None:
    text = f"{scheme}://{user}@{host}:5432/{db}?sslmode=verify-full"
    got = database(text)
    assert isinstance(got, DbUrl) and got == text


@given(user=NAME, host=NAME, db=NAME, secret=SECRET, where=st.booleans())
def test_an_address_with_a_password_is_refused_without_repeating_it(
    user: str, host: str, db: str, secret: str, where: bool
) -> None:
    q = quote(secret, safe="")
    text = (
        f"postgresql://{user}:{q}@{host}/{db}"
        if where
        else f"postgresql://{user}@{host}/{db}?sslmode=require&password={q}"
    )
    with pytest.raises(UsageError) as got:
        database(text, "SIZING_DB")
    line = str(got.value)
    assert got.value.code == ExitStatus.USAGE and "\n" not in line
    assert line.startswith("SIZING_DB: the address carries a password")
    assert secret not in line and q not in line


@given(
    name=st.text(
        st.characters(blacklist_characters="\x00/", blacklist_categories=("Cs",)),
        min_size=1,
        max_size=20,
    )
)
def test_anything_else_is_a_file(name: str) -> None:
    if name.startswith(("postgresql:", "postgres:")) or name.startswith("~"):
        return
    assert database(name) == Path(name)


def test_the_environment_and_the_option(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SIZING_DB", "postgresql://team@db.lab.example/sizing")
    assert results_db(None) == DbUrl("postgresql://team@db.lab.example/sizing")
    assert results_db(str(tmp_path / "x.sqlite")) == tmp_path / "x.sqlite"
    monkeypatch.setenv("SIZING_DB", str(tmp_path / "y.sqlite"))
    assert results_db(None) == tmp_path / "y.sqlite"
