"""Ansible through ansible-runner: run a playbook, collect per-host results from events.

We never scrape ansible-playbook's stdout: results come from runner events
(``runner_on_ok``, ``runner_on_failed``, ``runner_on_unreachable``) and ``.stats``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sizing import paths
from sizing.errors import ToolError

# Settings that keep Ansible quiet and cheap while load runs: the strategy loop polls its
# workers every DEFAULT_INTERNAL_POLL_INTERVAL (1 ms by default), which would take CPU
# from the server and the load generator on a small host.
ANSIBLE_ENV = {
    "ANSIBLE_INTERNAL_POLL_INTERVAL": "0.05",
    "ANSIBLE_RETRY_FILES_ENABLED": "False",
    "ANSIBLE_NOCOLOR": "True",
    "ANSIBLE_LOCALHOST_WARNING": "False",
    "ANSIBLE_INVENTORY_UNPARSED_WARNING": "False",
    "ANSIBLE_PYTHON_INTERPRETER": "auto_silent",
    "ANSIBLE_DEPRECATION_WARNINGS": "False",
    "ANSIBLE_SYSTEM_WARNINGS": "False",
    "ANSIBLE_SSH_RETRIES": "1",
    "ANSIBLE_TIMEOUT": "15",
}


@dataclass
class HostOutcome:
    """What one host did in one playbook run."""

    ok: dict[str, dict[str, Any]] = field(default_factory=dict)  # task name -> result
    failed: str | None = None  # "task: message"
    unreachable: str | None = None
    changed: int = 0


@dataclass
class PlaybookResult:
    """The outcome of one playbook run."""

    playbook: str
    status: str
    rc: int
    stats: dict[str, Any]
    hosts: dict[str, HostOutcome]

    @property
    def ok(self) -> bool:
        return self.status == "successful" and self.rc == 0

    def result(self, host: str, task: str) -> dict[str, Any] | None:
        outcome = self.hosts.get(host)
        return None if outcome is None else outcome.ok.get(task)

    def problems(self) -> dict[str, str]:
        """Host -> one line saying why it failed, for every host that did."""
        out: dict[str, str] = {}
        for name, h in self.hosts.items():
            if h.unreachable:
                out[name] = f"unreachable: {h.unreachable}"
            elif h.failed:
                out[name] = h.failed
        return out


def _message(res: Mapping[str, Any]) -> str:
    for key in ("msg", "stderr", "module_stderr", "stdout"):
        val = res.get(key)
        if val:
            text = str(val).strip()
            first = text.splitlines()[-1] if key == "module_stderr" else text.splitlines()[0]
            return first[:400]
    return "failed (no message)"


def run_playbook(
    playbook: str,
    inventory: Path,
    *,
    extravars: Mapping[str, Any] | None = None,
    limit: Sequence[str] | None = None,
    forks: int | None = None,
    timeout: int | None = None,
    debug: bool = False,
) -> PlaybookResult:
    """Run ``playbooks/<playbook>`` against ``inventory`` and gather per-host outcomes."""
    try:
        import ansible_runner
    except ImportError as exc:  # pragma: no cover - a broken install
        raise ToolError("ansible-runner is not installed; run the setup (make setup)") from exc

    # ansible-runner starts ansible-playbook from PATH: make it the one beside this Python.
    bindir = str(Path(sys.executable).parent)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    if shutil.which("ansible-playbook") is None:
        raise ToolError("ansible-playbook is not on PATH; run the setup (make setup)")

    hosts: dict[str, HostOutcome] = {}

    def on_event(event: dict[str, Any]) -> bool:
        kind = event.get("event", "")
        data = event.get("event_data", {})
        host = data.get("host")
        if not host or not kind.startswith("runner_on_"):
            return True
        outcome = hosts.setdefault(host, HostOutcome())
        task = str(data.get("task", ""))
        res = data.get("res", {}) or {}
        if kind == "runner_on_ok":
            outcome.ok[task] = res
            if res.get("changed"):
                outcome.changed += 1
        elif kind == "runner_on_failed" and not data.get("ignore_errors"):
            outcome.failed = f"{task}: {_message(res)}"
        elif kind == "runner_on_unreachable":
            outcome.unreachable = _message(res)
        return True

    private = Path(tempfile.mkdtemp(prefix="sizing-runner-"))
    envvars = dict(ANSIBLE_ENV)
    envvars["ANSIBLE_ROLES_PATH"] = str(paths.PLAYBOOKS / "roles")
    try:
        runner = ansible_runner.run(
            private_data_dir=str(private),
            playbook=str(paths.PLAYBOOKS / playbook),
            inventory=str(Path(inventory).resolve()),
            extravars=dict(extravars or {}),
            envvars=envvars,
            limit=",".join(limit) if limit else None,
            forks=forks,
            timeout=timeout,
            quiet=not debug,
            event_handler=on_event,
            rotate_artifacts=1,
        )
        stats = runner.stats or {}
        result = PlaybookResult(
            playbook=playbook,
            status=str(runner.status),
            rc=int(runner.rc if runner.rc is not None else -1),
            stats=stats,
            hosts=hosts,
        )
    finally:
        shutil.rmtree(private, ignore_errors=True)
    return result
