"""Commands registered by name: a command's module is imported when that command runs.

``sizing --help`` lists every command with its one-line help, and ``sizing demand`` runs
one command: neither needs the other commands' modules, their options' vocabularies or
what they import at their top (issues 58 and 60: a small log's ``sizing demand`` spent
much of its time importing every command). A command is declared by its name, its
module, its function and the first sentence of its function's docstring: what ``--help``
lists (Click shortens a command's help to its first sentence or less;
``tests/unit/test_lazy_commands.py`` keeps the two the same). Its module is imported, and
the command built as Typer builds one from ``app.command(name)``, when Click asks for it
by name: to run it, to print its own ``--help``, or to complete it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from gettext import gettext
from typing import Any, ClassVar

import typer
from typer.core import TyperCommand, TyperGroup
from typer.main import get_command_from_info

__all__ = ["Lazy", "LazyGroup", "register"]

Wrap = Callable[[Callable[..., Any]], Callable[..., Any]]


@dataclass(frozen=True)
class Lazy:
    """One command, by name: ``function`` of ``sizing.cli.MODULE``, listed by ``--help``
    with ``summary`` (its docstring's first sentence)."""

    name: str
    module: str
    function: str
    summary: str

    def callback(self) -> Callable[..., Any]:
        """The command's function (its module imported now)."""
        fn: Callable[..., Any] = getattr(
            importlib.import_module(f"sizing.cli.{self.module}"), self.function
        )
        return fn


class _Commands(MutableMapping[str, Any]):
    """A group's commands: those built already, and the lazy ones, built when first read.
    Iterating lists every name (the lazy ones first, in their declared order) and loads
    nothing."""

    def __init__(
        self, built: MutableMapping[str, Any], lazy: tuple[Lazy, ...], wrap: Wrap, markup: Any
    ) -> None:
        self._built = dict(built)
        self._lazy = {c.name: c for c in lazy}
        self._order = [c.name for c in lazy] + [n for n in built if n not in self._lazy]
        self._wrap, self._markup = wrap, markup

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            self._built[name] = self._build(self._lazy[name])  # KeyError: no such command
        return self._built[name]

    def _build(self, entry: Lazy) -> Any:
        # built exactly as `app.command(name)(wrap(fn))` would have built it
        one = typer.Typer()
        one.command(entry.name)(self._wrap(entry.callback()))
        return get_command_from_info(
            one.registered_commands[0],
            pretty_exceptions_short=one.pretty_exceptions_short,
            rich_markup_mode=self._markup,
        )

    def __setitem__(self, name: str, command: Any) -> None:
        if name not in self._order:
            self._order.append(name)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        self._order.remove(name)
        self._built.pop(name, None)
        self._lazy.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def listed(self, name: str) -> Any:
        """The command as ``--help`` lists it: itself once built, else a stand-in that
        carries its summary (the same short help, its module not imported)."""
        if name in self._built:
            return self._built[name]
        return TyperCommand(name=name, help=self._lazy[name].summary)


class LazyGroup(TyperGroup):
    """A Typer group whose :data:`lazy` commands are imported when asked for by name."""

    lazy: ClassVar[tuple[Lazy, ...]] = ()
    wrap: ClassVar[Wrap]

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands(self.commands, self.lazy, type(self).wrap, self.rich_markup_mode)

    def list_commands(self, ctx: Any) -> list[str]:
        # every name, in order, without building one (Typer's reads each command)
        return list(self.commands)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The "Commands" section, as Typer writes it, from each command's summary."""
        assert isinstance(self.commands, _Commands)
        listed = [(n, self.commands.listed(n)) for n in self.list_commands(ctx)]
        listed = [(n, c) for n, c in listed if not c.hidden]
        if not listed:
            return
        limit = formatter.width - 6 - max(len(n) for n, _ in listed)
        rows = [(n, c.get_short_help_str(limit)) for n, c in listed]
        with formatter.section(gettext("Commands")):
            formatter.write_dl(rows)


def register(app: typer.Typer, *commands: Lazy, wrap: Wrap) -> None:
    """Give ``app`` the ``commands``, each wrapped by ``wrap`` when it is built (the error
    guard), in the order ``--help`` lists them; what is added with ``add_typer`` follows."""
    group = type("LazyGroup", (LazyGroup,), {"lazy": commands, "wrap": staticmethod(wrap)})
    app.info.cls = group
