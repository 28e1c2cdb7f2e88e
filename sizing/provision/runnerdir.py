"""ansible-runner's private directories: private to this user, owned by one process, gone
when it is; and what ``--keep-artifacts`` keeps of them, without the run's secrets.

A playbook's private directory holds its ``env/extravars`` (the ``-e`` values, which may
be passwords) while it runs. It is made 0700, named after the process that owns it
(``sizing-runner-<pid>-<start ticks>-XXXX``: a reused pid has another start time), and
removed when the playbook ends. A process killed with SIGKILL cannot remove it: the next
sizing that runs a playbook removes every such directory whose owner is gone, never one
of a live process (:func:`remove_stale`).

The kept copy of a playbook's artifacts (``--keep-artifacts``) never holds the
environment's credentials nor the ``-e`` values: ansible-runner writes the whole
environment of ansible-playbook into ``command``, and a task may echo a variable
(:func:`keep_artifacts`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from sizing.extravars import REDACTED

__all__ = [
    "PREFIX",
    "credential_name",
    "keep_artifacts",
    "private_dir",
    "remove_stale",
    "secret_values",
    "start_ticks",
]

PREFIX = "sizing-runner-"

# Environment variables that carry a credential: VSPHERE_PASSWORD, any *_PASSWORD, *_TOKEN,
# *_SECRET, and Ansible's become and vault passwords (ANSIBLE_BECOME_PASS ...).
_CREDENTIAL = re.compile(
    r"(PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|CREDENTIAL|_PASS$|_PW$|_PWD$|API_?KEY"
    r"|BECOME_PASS|VAULT_PASS)",
    re.IGNORECASE,
)

# Shorter values are not searched for in the kept files: replacing every "xy" would garble
# them (the environment's credentials are removed from ``command`` by name, whatever their
# length).
MIN_SECRET_LEN = 4


def start_ticks(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), or None when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(errors="replace")
        return int(text.rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def private_dir() -> Path:
    """A new private directory for one playbook run: mode 0700, named after this process.
    The directories dead processes left are removed first, every time (a glob of the
    temporary directory: a process that runs several sweeps, as the tests do, sees them)."""
    remove_stale()
    pid = os.getpid()
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{pid}-{start_ticks(pid) or 0}-"))
    path.chmod(0o700)  # mkdtemp's mode already; said here because extravars live in it
    return path


def _owner_gone(name: str) -> bool:
    """Whether a runner directory's owner process has ended; False when it is not named
    in this shape (a directory of an older sizing, or of another program)."""
    m = re.fullmatch(re.escape(PREFIX) + r"(\d+)-(\d+)-[^/]+", name)
    if m is None:
        return False
    pid, ticks = int(m.group(1)), int(m.group(2))
    return start_ticks(pid) != ticks


def remove_stale(tmp: Path | None = None) -> list[Path]:
    """Remove the runner directories (this user's) whose owning process is gone: what a
    run killed with SIGKILL left, ``-e`` values included. Returns those removed."""
    base = Path(tmp or tempfile.gettempdir())
    removed: list[Path] = []
    with contextlib.suppress(OSError):
        for path in base.glob(PREFIX + "*"):
            with contextlib.suppress(OSError):
                st = path.lstat()
                if (
                    path.is_dir()
                    and not path.is_symlink()
                    and st.st_uid == os.getuid()
                    and _owner_gone(path.name)
                ):
                    shutil.rmtree(path, ignore_errors=True)
                    removed.append(path)
    return removed


def credential_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential."""
    return bool(_CREDENTIAL.search(name))


def secret_values(
    extravars: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> set[str]:
    """What a kept file must not hold: every string of the user's ``-e`` values and every
    credential of the environment (:func:`credential_name`)."""
    env = os.environ if environ is None else environ
    found = {v for k, v in env.items() if credential_name(k)}
    found.update(_strings(extravars))
    return {s for s in found if len(s) >= MIN_SECRET_LEN}


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)
    elif value is not None and not isinstance(value, bool):
        yield str(value)


def keep_artifacts(private: Path, keep: Path, playbook: str, secrets: Iterable[str]) -> None:
    """Copy one playbook's ansible-runner artifacts to ``keep/NNN-<playbook>``, without the
    environment's credentials (``command``'s ``env``) and without any of ``secrets``."""
    keep.mkdir(parents=True, exist_ok=True)
    n = len([p for p in keep.iterdir() if p.is_dir()]) + 1
    dest = keep / f"{n:03d}-{Path(playbook).stem}"
    src = private / "artifacts"
    if not src.is_dir():
        return
    shutil.copytree(src, dest, dirs_exist_ok=True)
    hidden = sorted(set(secrets), key=len, reverse=True)
    for path in dest.rglob("*"):
        if path.is_file() and not path.is_symlink():
            _scrub(path, hidden)


def _scrub(path: Path, secrets: list[str]) -> None:
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return
    new = _without_env_credentials(text) if path.name == "command" else text
    for s in secrets:
        new = new.replace(s, REDACTED)
        escaped = json.dumps(s)[1:-1]  # as it is written inside a JSON string
        if escaped != s:
            new = new.replace(escaped, REDACTED)
    if new != text:
        path.write_text(new, encoding="utf-8", errors="surrogateescape")


def _without_env_credentials(text: str) -> str:
    """ansible-runner's ``command`` file (``{"command", "cwd", "env"}``) with every
    credential of ``env`` redacted, by name."""
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    env = doc.get("env") if isinstance(doc, dict) else None
    if not isinstance(env, dict):
        return text
    doc["env"] = {k: REDACTED if credential_name(str(k)) else v for k, v in env.items()}
    return json.dumps(doc)
