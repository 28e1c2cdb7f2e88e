"""Where things live: the bundled resources and the results database.

The bundled resources (playbooks, templates, profiles, inventories) ship inside the
package as ``sizing/_data/<name>`` and are found beside the package's own files, so an
installed sizing (``pip install .``, ``pipx install .``) finds them wherever it runs. In
the repository they stay at the top (``profiles/``, ``templates/``, ...): ``sizing/_data``
holds symbolic links to them, which an editable install follows and a wheel build copies.
``SIZING_HOME`` points sizing at another checkout's resources instead.

The results database follows the user, not the working directory: ``$SIZING_DB``, else
``sizing.sqlite`` in the user's data directory (``platformdirs``: on Linux
``$XDG_DATA_HOME/sizing``, by default ``~/.local/share/sizing``). ``--db`` overrides both.
Either may also name a team's database on a server, ``postgresql://user@host/dbname``
(:class:`DbUrl`; docs/team-store.md): which engine serves it is the store's business alone.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from sizing.errors import UsageError

# The checkout root when running from one (an editable install); tools built by scripts/
# (``.cache/bin``) are found there.
ROOT = Path(os.environ.get("SIZING_HOME", Path(__file__).resolve().parent.parent))


def _resources() -> Path:
    if "SIZING_HOME" in os.environ:
        return ROOT
    # Playbooks and templates are handed to Ansible and Jinja2 as paths: the package is
    # installed as files (never zipped), so its resources are a directory beside this
    # module (what importlib.resources.files("sizing") names; not imported for it: its
    # import is a few ms of every command's start-up, `sizing demand`'s included)
    return Path(__file__).parent / "_data"


RESOURCES = _resources()
PLAYBOOKS = RESOURCES / "playbooks"
TEMPLATES = RESOURCES / "templates"
PROFILES = RESOURCES / "profiles"
INVENTORIES = RESOURCES / "inventories"
DEFAULT_INVENTORY = INVENTORIES / "local.yml"

# Where the playbooks put sizing's tools on every host unless the inventory sets
# sizing_tool_dir: the same path as sizing_default_tool_dir in playbooks/vars/tools.yml
# (tests/unit/test_tool_dir.py keeps them equal). playbooks/tasks/tool-dir.yml makes it a
# 0700 directory of the user the tools run as, or refuses it.
TOOL_DIR = "/var/tmp/sizing"

APP_NAME = "sizing"
DB_NAME = "sizing.sqlite"


def profile_file(name: str, root: Path | None = None) -> tuple[Path | None, str | None]:
    """The file a ``--profile`` name means, and the name its document must carry: a
    ``.yml``/``.yaml`` file by path (any name: None), else the file of ``root`` whose stem
    is ``name`` (its document must be named so too; ``root`` None: the bundled profiles),
    else ``(None, name)``."""
    root = PROFILES if root is None else root
    candidate = Path(name)
    if candidate.suffix in (".yml", ".yaml") and candidate.exists():
        return candidate, None
    return next((f for f in sorted(root.glob("*.yml")) if f.stem == name), None), name


def data_dir() -> Path:
    """The user's data directory for sizing (not created here)."""
    from platformdirs import user_data_path  # imported when a command needs the store

    return user_data_path(APP_NAME, appauthor=False)


URL_SCHEMES = ("postgresql://", "postgres://")


class DbUrl(str):
    """A results database on a server, by its address (``postgresql://user@host/dbname``,
    ``postgresql:///dbname?host=/run/postgresql``, ``postgresql://?service=lab``). It never
    carries a password: :func:`database` refuses one, so that none reaches a process list,
    a shell's history, a message or the store."""

    __slots__ = ()


# A results database: a file (SQLite) or a server's address.
Database = Path | DbUrl


def database(given: str | Path, where: str = "--db") -> Database:
    """The results database named by ``given`` (``--db``, ``$SIZING_DB``): an address when it
    starts with ``postgresql://``, a file otherwise. An address with a password in it is
    refused in one line that does not repeat it."""
    if isinstance(given, Path):
        return given
    text = str(given)
    if not text.startswith(URL_SCHEMES):
        return Path(text).expanduser()
    try:
        parts = urlsplit(text)
        secret = parts.password is not None or any(
            k == "password" for k, _ in parse_qsl(parts.query, keep_blank_values=True)
        )
    except ValueError as exc:
        raise UsageError(f"{where}: not a valid postgresql:// address ({exc})") from None
    if secret:
        raise UsageError(
            f"{where}: the address carries a password, which sizing refuses (it would be seen "
            "in the process list and kept in the shell's history): give it in PGPASSWORD, "
            "~/.pgpass or a service file (docs/team-store.md)"
        )
    return DbUrl(text)


def default_db() -> Database:
    """The results database: ``$SIZING_DB``, else ``sizing.sqlite`` in :func:`data_dir`."""
    env = os.environ.get("SIZING_DB")
    if env:
        return database(env, "SIZING_DB")
    return data_dir() / DB_NAME


def results_db(given: str | Path | None) -> Database:
    """The results database a command uses: ``--db`` when given, else :func:`default_db`
    (the one place the default is resolved: the CLI's environment and the reads ask it)."""
    return database(given) if given is not None else default_db()
