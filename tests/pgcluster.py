"""A throwaway PostgreSQL cluster for the store's tests: Debian's server (scripts/setup
installs it), ``initdb`` and ``pg_ctl`` in a temporary directory, listening on a Unix socket
in that directory only (no TCP port), stopped by its postmaster's PID.

Roles: ``sizing`` (the cluster's superuser, trusted on the socket), ``sizing_pw`` (logs in
with a password only: the fault tests' wrong and missing passwords) and ``sizing_ro`` (may
read a database's tables, not write them). As root the server runs as ``postgres``, since
PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

PASSWORD = "s3cret-" + uuid.uuid4().hex[:8]  # the password role's; never a real one


def pg_bin() -> Path:
    """The newest installed server's bin directory."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError(
            "PostgreSQL's server is not installed (scripts/setup --dev installs Debian's "
            "postgresql)"
        )
    return Path(found[-1]).parent


class Cluster:
    """One cluster: ``start()``, ``url(dbname)``, ``createdb()``, ``stop()``."""

    def __init__(self) -> None:
        self.bin = pg_bin()
        self.root = Path(tempfile.mkdtemp(prefix="sizing-pg-"))
        self.data = self.root / "data"
        self.socket = self.root  # short: a socket's path must fit 107 bytes
        self.pid: int | None = None
        self._as: list[str] = []
        if os.geteuid() == 0:
            self._as = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]
            shutil.chown(self.root, "postgres", "postgres")
        os.chmod(self.root, 0o755)

    def _pg(self, tool: str, *args: str) -> None:
        subprocess.run(
            [*self._as, str(self.bin / tool), *args],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=60,
            cwd=self.root,
        )

    def start(self) -> Cluster:
        self._pg(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "sizing",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-instructions",
        )
        hba = self.data / "pg_hba.conf"
        hba.write_text("local all sizing_pw scram-sha-256\nlocal all all trust\n", encoding="utf-8")
        self._pg(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.root / "log"),
            "-w",
            "-t",
            "30",
            "-o",
            f"-c listen_addresses='' -c unix_socket_directories='{self.socket}'"
            " -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
            "start",
        )
        pidfile = self.data / "postmaster.pid"
        self.pid = int(pidfile.read_text().split()[0])
        self.sql(
            "postgres",
            f"CREATE ROLE sizing_pw LOGIN PASSWORD '{PASSWORD}'",
            "CREATE ROLE sizing_ro LOGIN",
        )
        return self

    def url(self, dbname: str, user: str = "sizing") -> str:
        """The address of a database: the socket's directory as its host."""
        return f"postgresql://{user}@/{dbname}?host={self.socket}"

    def sql(self, dbname: str, *statements: str) -> None:
        import psycopg

        with psycopg.connect(self.url(dbname), autocommit=True) as conn:
            for s in statements:
                conn.execute(s)  # type: ignore[arg-type]  # the tests' own statements

    def createdb(self, prefix: str = "t") -> str:
        """A new, empty database that the read-only role may read and the password role
        may write; its name."""
        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        self.sql("postgres", f"CREATE DATABASE {name}")
        self.sql(
            name,
            "GRANT USAGE, CREATE ON SCHEMA public TO sizing_pw",
            "ALTER DEFAULT PRIVILEGES FOR ROLE sizing IN SCHEMA public"
            " GRANT SELECT ON TABLES TO sizing_ro",
            "ALTER DEFAULT PRIVILEGES FOR ROLE sizing IN SCHEMA public"
            " GRANT ALL ON TABLES TO sizing_pw",
            "ALTER DEFAULT PRIVILEGES FOR ROLE sizing IN SCHEMA public"
            " GRANT ALL ON SEQUENCES TO sizing_pw",
        )
        return name

    def stop(self) -> None:
        """Stop the server by its PID (a fast shutdown: SIGINT), wait until it has gone
        (its pid file removed, as pg_ctl waits; the process itself is not this one's child
        to reap), SIGKILL after 30 s; then remove everything."""
        if self.pid is not None:
            pidfile = self.data / "postmaster.pid"
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGINT)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and pidfile.exists() and _alive(self.pid):
                    time.sleep(0.05)
                if pidfile.exists() and _alive(self.pid):
                    os.kill(self.pid, signal.SIGKILL)
            self.pid = None
        shutil.rmtree(self.root, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie left for init to reap does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
