"""Progress on stderr: the run's (:class:`RichProgress`, the sweep's ``Progress``), a
transient rich bar with the time left on a terminal and plain timestamped lines otherwise
(a log file, CI, cron, nohup), and the steps of a long command (:class:`Steps`)."""

from __future__ import annotations

import re
import sys
import time
from typing import TYPE_CHECKING, Any

import typer

from sizing.app.env import current
from sizing.cli.app import fitted, unescaped, warn
from sizing.model import PointKey, PointResult
from sizing.report.render.printable import printable

if TYPE_CHECKING:
    from sizing.app.run import TimeBudget

__all__ = ["RichProgress", "Steps", "stamped"]

REPEAT_S = 30.0  # a log repeats a step (same words, another duration) at most this often


def stamped(message: str, now: float | None = None) -> str:
    """``2026-11-26 13:20:05 message``: a progress line for a log, in local time, within
    100 columns (a longer message goes on, indented, on the next lines)."""
    return fitted(time.strftime("%Y-%m-%d %H:%M:%S ", time.localtime(now)) + message)


def _shown(text: str) -> str:
    """A message on the live bar: control characters escaped, rich's markup as text."""
    from rich.markup import escape  # deferred with rich itself: a run's progress only

    return escape(printable(text))


class RichProgress:
    """A transient rich progress bar on stderr, with the time left, on a terminal; else
    one timestamped line per step and per point, with the count and the time left, so a
    run logged to a file (``2>run.log``, CI, cron, nohup) shows how far it is.
    ``terminal``: whether stderr is one (default: ask rich)."""

    def __init__(self, terminal: bool | None = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        # the stream itself: the bar's escape sequences are sizing's own; the messages on
        # it are escaped here (:func:`printable`), as every other output is
        self.console = Console(file=unescaped(sys.stderr))
        self.enabled = self.console.is_terminal if terminal is None else terminal
        self.last_step = ("", 0.0)  # the plain lines' last step (durations masked) and when
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[left]}"),
            console=self.console,
            transient=True,
        )
        self.task: Any = None
        self.total = 0
        self.done = 0
        self.budget: TimeBudget | None = None
        self.finished: set[PointKey] = set()  # the points done: the budget's time left
        self.said: set[str] = set()  # notes already on stderr: the end does not repeat them

    def __enter__(self) -> RichProgress:
        if self.enabled:
            self.bar.start()
            self.task = self.bar.add_task("starting", total=None, left="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.bar.stop()

    def start(self, total: int, budget: TimeBudget | None = None) -> None:
        """``total`` points, skipped ones included; ``budget``: the run's estimate, the
        one its first line said (:mod:`sizing.plan.estimate`)."""
        self.total, self.budget = total, budget
        if self.enabled:
            self.bar.update(self.task, total=total, left=self._left())
            return
        measured = len(budget.points) if budget is not None else total
        line = f"{measured} point(s) to measure"
        if total > measured:
            line += f" ({total - measured} skipped)"
        left = self._left()
        self._plain(line + (f", {left}" if left else ""))

    def _plain(self, message: str) -> None:
        typer.echo(stamped(message), err=True)

    def _left(self) -> str:
        """The time left: the estimate of the points not yet done (a skipped point costs
        nothing), so it only falls as points finish; nothing once all are done."""
        if self.budget is None:
            return ""
        low, high = self.budget.left(self.finished)
        if high <= 0:
            return ""
        # deferred: the run's use case (the sweep) costs every command's start-up 0.3 s;
        # a run's progress has imported it already
        from sizing.app.run import span_words

        return f"{span_words(low, high)} left"

    def step(self, label: str) -> None:
        if self.enabled:
            self.bar.update(self.task, description=_shown(label), left=self._left())
            return
        # a log gets each step once: "waiting (5 s so far)", repeated each second with
        # another duration, is said every 30 s
        key, now = re.sub(r"\d+(?:\.\d+)? s\b", "# s", label), time.monotonic()
        if key != self.last_step[0] or now - self.last_step[1] >= REPEAT_S:
            self.last_step = (key, now)
            self._plain(label)

    def advance(self, result: PointResult) -> None:
        self.done += 1
        self.finished.add(result.key)
        line = f"{result.key.label()}: {result.status}"
        if result.value is not None:
            line += f" {result.value:,.0f} {result.unit}"
        if self.enabled:
            self.bar.update(self.task, advance=1, left=self._left())
            self.console.log(_shown(line))
        else:
            left = self._left()
            count = f"[{self.done}/{self.total}{', ' + left if left else ''}]"
            self._plain(f"{count} {line}")

    def note(self, message: str) -> None:
        self.said.add(message)
        if self.enabled:
            self.console.log(f"[yellow]{_shown(message)}[/yellow]")
        else:
            warn(message, fit=True)

    def info(self, message: str) -> None:
        if self.enabled:
            self.console.log(_shown(message))
        else:
            self._plain(message)


class Steps:
    """How far a command that works for a while is (``sizing guide``): one line a step on
    stderr with the seconds so far (``guide: 4 s: drawing the charts``), timestamped
    when stderr is not a terminal."""

    def __init__(self, command: str, terminal: bool | None = None) -> None:
        self.command = command
        self.terminal = current().stderr_isatty if terminal is None else terminal
        self.began = time.monotonic()

    def __call__(self, message: str) -> None:
        """Say ``message`` (``drawing the charts``: begun now, or a step done)."""
        line = f"{self.command}: {time.monotonic() - self.began:.0f} s: {message}"
        typer.echo(line if self.terminal else stamped(line), err=True)

    def elapsed(self) -> str:
        """``in 12 s``: since the steps began."""
        return f"in {time.monotonic() - self.began:.0f} s"
