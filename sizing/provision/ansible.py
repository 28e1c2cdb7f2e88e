"""Ansible through ansible-runner: run a playbook, collect per-host results from events.

We never scrape ansible-playbook's stdout: results come from runner events
(``runner_on_ok``, ``runner_on_failed``, ``runner_on_unreachable``) and ``.stats``.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sizing import paths
from sizing.errors import ToolError
from sizing.provision.runnerdir import keep_artifacts as keep_copy
from sizing.provision.runnerdir import private_dir, secret_values
from sizing.signals import STOP_SIGNALS, SignalStop, held

# Settings that keep Ansible quiet and cheap while load runs: the strategy loop polls its
# workers every DEFAULT_INTERNAL_POLL_INTERVAL (1 ms by default), which took 8 to 10% of
# the TLS handshakes of the local inventory's server (docs/validity.md, "Fidelity").
# ansible-core reads that interval from an ansible.cfg only (ANSIBLE_INTERNAL_POLL_INTERVAL
# was never read): playbooks/callback_plugins/sizing_poll.py sets it from
# SIZING_ANSIBLE_POLL_INTERVAL, leaving a user's ansible.cfg theirs.
ANSIBLE_ENV = {
    "SIZING_ANSIBLE_POLL_INTERVAL": "0.05",
    "ANSIBLE_RETRY_FILES_ENABLED": "False",
    "ANSIBLE_NOCOLOR": "True",
    "ANSIBLE_LOCALHOST_WARNING": "False",
    "ANSIBLE_INVENTORY_UNPARSED_WARNING": "False",
    "ANSIBLE_PYTHON_INTERPRETER": "auto_silent",
    "ANSIBLE_DEPRECATION_WARNINGS": "False",
    "ANSIBLE_SYSTEM_WARNINGS": "False",
    "ANSIBLE_SSH_RETRIES": "1",
    "ANSIBLE_TIMEOUT": "15",
    # One SSH round trip per task instead of several: the load windows of a point start at
    # a common time, and a shorter fan-out leaves more of the start lead in hand.
    "ANSIBLE_PIPELINING": "True",
    # A host that vanishes (a guest destroyed after its points, a cut cable) must fail in
    # seconds, not hang: Ansible's SSH ControlPersist master would otherwise wait on the
    # dead TCP connection for as long as the kernel retransmits (a quarter of an hour), and
    # every later task to that host with it. 3 unanswered keepalives 5 s apart end it.
    # ssh_extra_args: neither Ansible's ssh_args (ControlMaster) nor an inventory's
    # ansible_ssh_common_args (jump hosts, key checking) is replaced; a host's own
    # ansible_ssh_extra_args is.
    "ANSIBLE_SSH_EXTRA_ARGS": "-o ServerAliveInterval=5 -o ServerAliveCountMax=3",
}

# The playbooks that run while load is measured keep the slow poll above; the others
# (provisioning, facts, locks, the run's end) poll every 5 ms: about 25 ms less per task.
LOAD_PLAYBOOKS = frozenset({"load.yml"})


@dataclass
class HostOutcome:
    """What one host did in one playbook run."""

    ok: dict[str, dict[str, Any]] = field(default_factory=dict)  # task name -> result
    failed: str | None = None  # "task: message"
    unreachable: str | None = None
    changed: int = 0
    # task name -> (controller time the task started on this host, time its result came):
    # brackets any clock reading the task took on the host (clock pre-flight check).
    times: dict[str, tuple[float, float]] = field(default_factory=dict)


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

    def window(self, host: str, task: str) -> tuple[float, float] | None:
        """Controller epoch times bracketing ``task`` on ``host`` (start, result)."""
        outcome = self.hosts.get(host)
        return None if outcome is None else outcome.times.get(task)

    def result(self, host: str, task: str) -> dict[str, Any] | None:
        outcome = self.hosts.get(host)
        return None if outcome is None else outcome.ok.get(task)

    def why(self, host: str) -> str:
        """One line saying why ``host`` failed, or the playbook's status when it did not say."""
        return self.problems().get(host) or f"playbook {self.status} (rc {self.rc})"

    def json(self, host: str, task: str) -> Any:
        """The JSON document ``task`` printed on ``host``; None when the task gave no result.

        Raises ValueError when the output is not JSON.
        """
        out = self.result(host, task)
        if out is None:
            return None
        return json.loads(str(out.get("stdout", "")))

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
    # A program that failed (a command, or a script such as files/nginx_instance.py) says
    # why on stderr; Ansible's own msg is then only "non-zero return code".
    keys: tuple[str, ...] = ("msg", "stderr", "module_stderr", "stdout")
    if res.get("msg") == "non-zero return code" and str(res.get("stderr", "")).strip():
        keys = ("stderr", "msg")
    for key in keys:
        val = res.get(key)
        if val:
            text = str(val).strip()
            first = text.splitlines()[-1] if key == "module_stderr" else text.splitlines()[0]
            return first[:400]
    return "failed (no message)"


def event_time(event: Mapping[str, Any]) -> float | None:
    """An event's creation time (set by Ansible's callback on this machine) as epoch."""
    text = event.get("created")
    if not text:
        return None
    try:
        when = datetime.datetime.fromisoformat(str(text))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.timestamp()


class _CancelOnSignal:
    """Turn a stop signal during a playbook into a clean cancel, then a SignalStop.

    ansible-runner installs its own SIGINT/SIGTERM handlers when it is given no cancel
    callback, and leaves them installed: a later Ctrl-C would then be swallowed. This
    installs ours for the duration of one run only and restores the previous handlers.
    Inside a ``shielded`` block the signal is recorded and the playbook runs on.
    """

    def __init__(self) -> None:
        self.fired = threading.Event()
        self.signum: int = signal.SIGINT
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> _CancelOnSignal:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._saved[sig] = signal.signal(sig, self._handler)
        return self

    def _handler(self, signum: int, frame: Any) -> None:
        if held(signum):
            return
        self.signum = signum
        self.fired.set()

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)

    def cancelled(self) -> bool:
        return self.fired.is_set()


def ansible_config(cwd: Path | None = None) -> Path | None:
    """The ansible.cfg Ansible itself would read from where sizing runs: ``$ANSIBLE_CONFIG``
    (Ansible reads that anyway), else ``./ansible.cfg``, which Ansible skips in a
    world-writable directory. ansible-runner starts ansible-playbook in its own directory,
    so the file is named to it with ``ANSIBLE_CONFIG``; ``~/.ansible.cfg`` and
    ``/etc/ansible/ansible.cfg`` are found by Ansible without help."""
    if os.environ.get("ANSIBLE_CONFIG"):
        return None
    here = (cwd or Path.cwd()).resolve()
    cfg = here / "ansible.cfg"
    if not cfg.is_file() or here.stat().st_mode & 0o002:
        return None
    return cfg


@dataclass
class _EventSink:
    """ansible-runner's event handler: each host's outcome, task by task (what each task
    returned, when it started and ended, whether it failed or the host was unreachable)."""

    hosts: dict[str, HostOutcome]

    def __call__(self, event: dict[str, Any]) -> bool:
        kind = event.get("event", "")
        data = event.get("event_data", {})
        host = data.get("host")
        if not host or not kind.startswith("runner_on_"):
            return True
        outcome = self.hosts.setdefault(host, HostOutcome())
        task = str(data.get("task", ""))
        res = data.get("res", {}) or {}
        when = event_time(event)
        if kind == "runner_on_start":
            if when is not None:
                outcome.times[task] = (when, when)
            return True
        if when is not None and task in outcome.times:
            outcome.times[task] = (outcome.times[task][0], when)
        if kind == "runner_on_ok":
            outcome.ok[task] = res
            if res.get("changed"):
                outcome.changed += 1
        elif kind == "runner_on_failed" and not data.get("ignore_errors"):
            outcome.failed = f"{task}: {_message(res)}"
        elif kind == "runner_on_unreachable":
            outcome.unreachable = _message(res)
        return True


def _envvars(playbook: str) -> dict[str, str]:
    """The environment of one ansible-playbook run."""
    envvars = dict(ANSIBLE_ENV)
    if playbook not in LOAD_PLAYBOOKS:  # nothing is measured meanwhile: answer each task fast
        envvars["SIZING_ANSIBLE_POLL_INTERVAL"] = "0.005"
    envvars["ANSIBLE_ROLES_PATH"] = str(paths.PLAYBOOKS / "roles")
    cfg = ansible_config()
    if cfg is not None:
        envvars["ANSIBLE_CONFIG"] = str(cfg)
    return envvars


def run_playbook(
    playbook: str,
    inventory: Path | Sequence[Path],
    *,
    extravars: Mapping[str, Any] | None = None,
    limit: Sequence[str] | None = None,
    forks: int | None = None,
    timeout: int | None = None,
    debug: bool = False,
    keep_artifacts: Path | None = None,
    user_vars: Mapping[str, Any] | None = None,
) -> PlaybookResult:
    """Run ``playbooks/<playbook>`` against ``inventory`` and gather per-host outcomes.

    ``./ansible.cfg`` applies as it would to ansible-playbook (see :func:`ansible_config`);
    ``keep_artifacts``: a directory that keeps ansible-runner's artifacts (events, stdout)
    of every playbook, otherwise deleted, without the environment's credentials and the
    values of ``user_vars`` (the user's ``-e``, already in ``extravars``). The private
    directory holding the extravars is 0700 and removed at the end
    (:mod:`sizing.provision.runnerdir`)."""
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
    on_event = _EventSink(hosts)

    private = private_dir()
    envvars = _envvars(playbook)
    cancel = _CancelOnSignal()
    try:
        with cancel:
            runner = ansible_runner.run(
                private_data_dir=str(private),
                playbook=str(paths.PLAYBOOKS / playbook),
                inventory=_sources(inventory),
                extravars=dict(extravars or {}),
                envvars=envvars,
                limit=",".join(limit) if limit else None,
                forks=forks,
                timeout=timeout,
                quiet=not debug,
                event_handler=on_event,
                cancel_callback=cancel.cancelled,
                rotate_artifacts=1,
            )
        if cancel.cancelled():
            raise SignalStop(cancel.signum)
        stats = runner.stats or {}
        result = PlaybookResult(
            playbook=playbook,
            status=str(runner.status),
            rc=int(runner.rc if runner.rc is not None else -1),
            stats=stats,
            hosts=hosts,
        )
    finally:
        if keep_artifacts is not None:
            keep_copy(private, keep_artifacts, playbook, secret_values(user_vars or {}))
        shutil.rmtree(private, ignore_errors=True)
    return result


def _sources(inventory: Path | Sequence[Path]) -> str | list[str]:
    """ansible-runner's inventory: one path, or the list of every -i (merged in order)."""
    if isinstance(inventory, str | Path):
        return str(Path(inventory).resolve())
    paths = [str(Path(p).resolve()) for p in inventory]
    return paths[0] if len(paths) == 1 else paths


@dataclass(frozen=True)
class Playbooks:
    """ansible-runner bound once to an inventory (and the run's ``--debug``), run many times.

    ``hosts`` is the play's ``--limit``; the playbooks' own ``sizing_hosts`` variable is
    set by the caller in ``extravars``, since some plays target another group.
    """

    inventory: Path | tuple[Path, ...]  # one -i, or several merged in order
    debug: bool = False
    # -e/--extra-vars: given to every playbook; sizing's own variables of a call win.
    extravars: Mapping[str, Any] = field(default_factory=dict)
    keep_artifacts: Path | None = None  # --keep-artifacts DIR

    def run(
        self,
        playbook: str,
        hosts: Sequence[str],
        *,
        extravars: Mapping[str, Any] | None = None,
        forks: int | None = None,
        timeout: int | None = None,
    ) -> PlaybookResult:
        """Run ``playbooks/<playbook>`` on ``hosts``."""
        return run_playbook(
            playbook,
            self.inventory,
            extravars={**self.extravars, **(extravars or {})},
            limit=list(hosts),
            forks=forks,
            timeout=timeout,
            debug=self.debug,
            keep_artifacts=self.keep_artifacts,
            user_vars=self.extravars,
        )
