"""What a run takes on its hosts and gives back: the per-host run lock, the load it
started, the nginx instances it started; and the same machine under two inventory names.

Everything on a host goes through a playbook: the lock task of ``facts.yml`` when the run
starts (``files/hostlock.py``, a lock directory under /run holding the run's token and
owner; ``host-lock.yml`` runs the same script alone, to take over a stale lock), and
``run-end.yml`` when it ends (the window runners' process groups, the sizing nginx and
upstream, the lock), in one Ansible run.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sizing.errors import HostError
from sizing.facts import HostFacts
from sizing.provision.ansible import Playbooks
from sizing.provision.runnerdir import start_ticks
from sizing.records.host import LockOwner, LockReply

__all__ = [
    "HostLocks",
    "RunHosts",
    "new_token",
    "owner_record",
    "process_gone",
    "same_machines",
    "took_over_text",
]

LOCK_TASK = "Run the lock script"


def new_token() -> str:
    """A run's token: names its window runners and its host locks."""
    return secrets.token_hex(8)


def _controller_id() -> str:
    try:
        return Path("/etc/machine-id").read_text().strip() or socket.gethostname()
    except OSError:
        return socket.gethostname()


def owner_record() -> LockOwner:
    """Who takes a lock: this controller and this process (for stale-lock detection)."""
    pid = os.getpid()
    return LockOwner(_controller_id(), socket.gethostname(), pid, start_ticks(pid))


def process_gone(owner: LockOwner) -> bool:
    """Whether the process an owner record names has ended (known only on the controller
    that started it: the same machine-id; a reused pid has another start time)."""
    if owner.controller != _controller_id():
        return False
    return owner.pid is None or start_ticks(owner.pid) != owner.pid_start


def _or_unknown(value: object) -> str:
    return "?" if value is None else str(value)


def took_over_text(host: str, holder: LockOwner) -> str:
    """The line a run says when it took over a stale lock."""
    of = f"run {holder.run_id}" if holder.run_id is not None else "an earlier run"
    return (
        f"{host}: took over the run lock of {of} (pid {_or_unknown(holder.pid)} on "
        f"{_or_unknown(holder.controller_host)}): its process is gone"
    )


def _stale(holder: LockOwner) -> bool:
    """A lock is stale when its run's process is gone: known only for a lock taken from
    this controller (the same machine-id), or one whose owner record is unreadable."""
    return holder.unreadable or process_gone(holder)


def _holder_text(holder: LockOwner, lock: str) -> str:
    since = holder.since
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(since)) if since else "?"
    return (
        f"another sizing run holds it (pid {_or_unknown(holder.pid)} on "
        f"{_or_unknown(holder.controller_host)}, since {when}); wait for it, or remove "
        f"{lock} on the host if that run is gone"
    )


@dataclass
class HostLocks:
    """The run lock of every server host (one run per host at a time)."""

    playbooks: Playbooks
    token: str
    held: list[str] = field(default_factory=list)
    run_id: int | None = None  # named in the lock, for the run that may take it over
    took_over: list[tuple[str, LockOwner]] = field(default_factory=list)
    # a holder known gone by other means than its process on this controller: the run's
    # lease in the results database, which every machine sees, expired or taken over
    # (set by the sweep, which holds the store)
    gone_elsewhere: Callable[[LockOwner], bool] = lambda _: False

    def request(self, action: str, stale: str = "-") -> dict[str, Any]:
        """The lock script's variables (``playbooks/host-lock.yml``, or the lock task that
        ``playbooks/facts.yml`` runs on its ``sizing_lock_hosts``)."""
        return {
            "sizing_lock_action": action,
            "sizing_run_token": self.token,
            "sizing_lock_owner": {**owner_record().to_json(), "run_id": self.run_id},
            "sizing_lock_stale": stale,
        }

    def _run(self, action: str, hosts: Sequence[str], stale: str = "-") -> Any:
        return self.playbooks.run(
            "host-lock.yml",
            hosts,
            extravars={"sizing_hosts": ",".join(hosts), **self.request(action, stale)},
        )

    def acquire(self, hosts: Iterable[str]) -> None:
        """Lock every host, or raise HostError naming the first host another run holds
        (the hosts locked so far are released). A stale lock is taken over."""
        names = sorted(set(hosts))
        if names:
            self.settle(self._run("acquire", names), names)

    def settle(self, res: Any, hosts: Iterable[str]) -> None:
        """Read the lock script's replies of an acquire run (``res``) for ``hosts``: keep
        each lock taken, take over each stale one, or raise HostError naming the first host
        another run holds (the hosts locked so far are released)."""
        names = sorted(set(hosts))
        refused: list[tuple[str, LockReply]] = []
        for host in names:
            out = res.json(host, LOCK_TASK)
            if out is None:
                self.release()
                raise HostError(host, f"the run lock cannot be taken: {res.why(host)}")
            reply = LockReply.parse(out)
            if reply.acquired:
                self.held.append(host)
                continue
            holder = reply.holder or LockOwner()
            if _stale(holder) or self.gone_elsewhere(holder):
                again = self._run("acquire", [host], holder.token or "?")
                if LockReply.parse(again.json(host, LOCK_TASK)).acquired:
                    self.held.append(host)
                    self.took_over.append((host, holder))
                    continue
            refused.append((host, reply))
        if refused:
            self.release()
            host, reply = refused[0]
            raise HostError(host, _holder_text(reply.holder or LockOwner(), reply.lock))

    def release(self) -> list[str]:
        """Give back every lock held; one problem line per host that could not."""
        if not self.held:
            return []
        hosts, self.held = self.held, []
        res = self._run("release", hosts)
        return [
            f"{h}: the run lock was not released: {res.why(h)}"
            for h in hosts
            if res.result(h, LOCK_TASK) is None
        ]


def same_machines(facts: Mapping[str, HostFacts]) -> list[str]:
    """One pre-flight line per machine that the inventory names twice: the same
    machine-id in the same network namespace (the netns labs' hosts share a machine-id
    but not a network)."""
    seen: dict[tuple[str, str], list[str]] = {}
    for name, f in sorted(facts.items()):
        mid = f.record.machine_id
        if mid:
            seen.setdefault((mid, f.record.net_ns or ""), []).append(name)
    return [
        f"{' and '.join(names)} are the same machine (machine-id {mid[:12]}…): name it "
        "once in the inventory, or its server and client would share its CPUs unplanned"
        for (mid, _), names in seen.items()
        if len(names) > 1
    ]


@dataclass
class RunHosts:
    """What one run took on its hosts, given back when it ends (see :meth:`end`)."""

    playbooks: Playbooks
    token: str = field(default_factory=new_token)
    servers: set[str] = field(default_factory=set)  # hosts where the run started nginx
    upstreams: set[str] = field(default_factory=set)  # ... and the upstream nginx
    load: set[str] = field(default_factory=set)  # hosts that may run its load
    locks: HostLocks = field(init=False)

    def __post_init__(self) -> None:
        self.locks = HostLocks(self.playbooks, self.token)

    def end(self, *, stopped: bool, keep_running: bool) -> list[str]:
        """Stop the load (``stopped``: the run was cut short, a load may still run),
        stop nginx and the upstream (unless ``keep_running``), release the locks: one
        Ansible run (``run-end.yml``). One problem line per host that failed."""
        load = sorted(self.load) if stopped else []
        nginx = [] if keep_running else sorted(self.servers)
        upstreams = [] if keep_running else sorted(self.upstreams)
        locks, self.locks.held = sorted(self.locks.held), []
        hosts = sorted({*load, *nginx, *upstreams, *locks})
        if not hosts:
            return []
        try:
            res = self.playbooks.run(
                "run-end.yml",
                hosts,
                extravars={
                    "sizing_hosts": ",".join(hosts),
                    "sizing_run_token": self.token,
                    "sizing_load_hosts": load,
                    "sizing_nginx_hosts": nginx,
                    "sizing_upstream_hosts": upstreams,
                    "sizing_lock_hosts": locks,
                },
            )
        except Exception as exc:  # noqa: BLE001 - the run ends anyway; it says why
            return [f"ending the run on {', '.join(hosts)} failed: {exc}"]
        return [f"{h}: ending the run failed: {why}" for h, why in sorted(res.problems().items())]
