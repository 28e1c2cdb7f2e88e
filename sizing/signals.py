"""The run's signal policy: SIGINT, SIGTERM and SIGHUP stop a run in order, like Ctrl-C.

The conductor (:mod:`sizing.sweep`) installs :class:`StopSignals` for the length of a run:
each stop signal raises :class:`SignalStop`, a ``KeyboardInterrupt``. Blocks that must
finish whatever comes run ``shielded()``: a store write (the point being written is kept),
the run's cleanup (its playbooks run to their end); a signal that arrives meanwhile is
recorded and delivered after the block (:func:`signal_pending` lets a long wait inside one
end early). A playbook's own handler (:mod:`sizing.provision.ansible`) asks :func:`held`
before it cancels ansible-runner. Process-wide state, so one module owns it; it imports
nothing of sizing, and every layer may use it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = [
    "STOP_SIGNALS",
    "SignalStop",
    "StopSignals",
    "held",
    "shielded",
    "signal_pending",
]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class SignalStop(KeyboardInterrupt):
    """A stop signal (SIGINT, SIGTERM, SIGHUP) turned into an orderly stop, like Ctrl-C."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(self.name)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class _Shield:
    """While shielded, stop signals are recorded instead of acted on (see ``shielded``)."""

    depth = 0
    pending: int | None = None

    @classmethod
    def take(cls, signum: int) -> bool:
        """True when ``signum`` was recorded for later (a shielded block runs)."""
        if cls.depth > 0:
            cls.pending = cls.pending or signum
            return True
        return False


def held(signum: int) -> bool:
    """For a signal handler: True when a shielded block runs and ``signum`` was recorded
    to be delivered after it; False when the handler should act on it now."""
    return _Shield.take(signum)


def signal_pending() -> bool:
    """Whether a stop signal came during a shielded block and waits to be delivered."""
    return _Shield.pending is not None


@contextlib.contextmanager
def shielded(*, deliver: bool = True) -> Iterator[None]:
    """Let a block finish whatever stop signal arrives: a store write (the point being
    written is kept), the cleanup of a run (its playbooks run to their end). With
    ``deliver``, a signal that came meanwhile is raised as :class:`SignalStop` after the
    block; without, it is dropped (the run is stopping already)."""
    _Shield.depth += 1
    try:
        yield
    except BaseException:
        _Shield.depth -= 1
        if _Shield.depth == 0:
            _Shield.pending = None  # the block fails anyway: its error tells
        raise
    _Shield.depth -= 1
    if _Shield.depth == 0 and _Shield.pending is not None:
        signum, _Shield.pending = _Shield.pending, None
        if deliver:
            raise SignalStop(signum)


class StopSignals:
    """The conductor's handlers: SIGINT, SIGTERM and SIGHUP raise :class:`SignalStop`
    (Ctrl-C's KeyboardInterrupt, for all three) for the duration of a run; the previous
    handlers come back after it."""

    def __init__(self) -> None:
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._saved[sig] = signal.signal(sig, self._handler)
        return self

    @staticmethod
    def _handler(signum: int, frame: Any) -> None:
        if not _Shield.take(signum):
            raise SignalStop(signum)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)
        self._saved.clear()
