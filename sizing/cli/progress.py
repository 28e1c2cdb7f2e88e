"""The run's progress on stderr: a transient rich bar with the time left on a terminal,
plain lines otherwise (:class:`RichProgress`, the sweep's ``Progress``)."""

from __future__ import annotations

import time
from typing import Any

import typer

from sizing.cli.app import warn
from sizing.model import PointResult

__all__ = ["RichProgress"]


class RichProgress:
    """A transient rich progress bar on stderr, with the time left; silent when stderr is
    not a terminal (notes and warnings are then plain lines)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.console = Console(stderr=True)
        self.enabled = self.console.is_terminal
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
        self.estimate: float | None = None
        self.began = 0.0
        self.said: set[str] = set()  # notes already on stderr: the end does not repeat them

    def __enter__(self) -> RichProgress:
        if self.enabled:
            self.bar.start()
            self.task = self.bar.add_task("starting", total=None, left="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.bar.stop()

    def start(self, total: int, seconds: float | None = None) -> None:
        self.total, self.estimate, self.began = total, seconds, time.monotonic()
        if self.enabled:
            self.bar.update(self.task, total=total, left=self._left())

    def _left(self) -> str:
        """The time left: the plan's estimate until a point is done, then the pace so far."""
        if self.done and self.total > self.done:
            left: float | None = (
                (time.monotonic() - self.began) / self.done * (self.total - self.done)
            )
        elif not self.done:
            left = self.estimate
        else:
            left = None
        # deferred: the plan (its pydantic models) costs every command's start-up 0.1 s
        from sizing.plan.dryrun import duration_words

        return f"about {duration_words(left)} left" if left else ""

    def step(self, label: str) -> None:
        if self.enabled:
            self.bar.update(self.task, description=label, left=self._left())

    def advance(self, result: PointResult) -> None:
        self.done += 1
        if self.enabled:
            self.bar.update(self.task, advance=1, left=self._left())
            line = f"{result.key.label()}: {result.status}"
            if result.value is not None:
                line += f" {result.value:,.0f} {result.unit}"
            self.console.log(line)

    def note(self, message: str) -> None:
        self.said.add(message)
        if self.enabled:
            from rich.markup import escape

            self.console.log(f"[yellow]{escape(message)}[/yellow]")
        else:
            warn(message)

    def info(self, message: str) -> None:
        if self.enabled:
            from rich.markup import escape

            self.console.log(escape(message))
        else:
            typer.echo(message, err=True)

