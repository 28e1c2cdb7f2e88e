"""Options declared once, on the field of the dataclass a command's values arrive in.

A command's option set is a frozen dataclass (``SizingArgs`` of ``recommend``/``table``/
``guide``, ``RunArgs`` of ``run``) whose every field is made by :func:`option` (the flag and
the ``--help`` text beside the default, as httpie's parser spec and ansible-runner's field
metadata declare theirs) or :func:`shared` (an ``Annotated`` option several commands
declare alike, such as ``--db``). Everything else is derived from the fields:
:func:`parameters` builds the ``Annotated`` parameters Typer reads, in the fields' order
(the order ``--help`` lists them), and :func:`takes` gives a command the options of the
set where its parameter ``args`` stands and hands it their values as one object.
:func:`same_named` carries the values to a use case's request by field name, so an option
that needs no parsing is passed on without a hand-written line.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Collection, Iterable
from dataclasses import MISSING, field, fields, is_dataclass
from typing import Annotated, Any

import typer
from typer.models import OptionInfo

__all__ = ["group_of", "option", "parameters", "same_named", "shared", "takes"]

_OPTION = "option"  # the field's metadata keys
_GROUP = "group"


def option(default: Any, *decls: str, group: str = "", **kwargs: Any) -> Any:
    """A field of an option set: its ``default``, and ``typer.Option(*decls, **kwargs)``
    (flags, ``help=``, ``metavar=``, ranges) as the command line shows it; ``group``: the
    part of the set it belongs to (which commands take it)."""
    return field(default=default, metadata={_OPTION: typer.Option(*decls, **kwargs), _GROUP: group})


def shared(default: Any, alias: Any, group: str = "") -> Any:
    """A field whose option is the ``Annotated`` ``alias`` other commands declare too."""
    infos = [m for m in getattr(alias, "__metadata__", ()) if isinstance(m, OptionInfo)]
    if len(infos) != 1:
        raise TypeError(f"{alias!r} is not an Annotated typer.Option")
    return field(default=default, metadata={_OPTION: infos[0], _GROUP: group})


def parameters(cls: type[Any]) -> tuple[inspect.Parameter, ...]:
    """The keyword parameters of option set ``cls``, one per field, in the fields' order:
    the field's type ``Annotated`` with its option, and its default."""
    hints = typing.get_type_hints(cls)  # the fields' types, resolved in cls's module
    params = []
    for f in fields(cls):
        if _OPTION not in f.metadata or f.default is MISSING:
            # a programming error: the field would never reach the command line
            raise TypeError(f"{cls.__name__}.{f.name}: declare it with option() or shared()")
        params.append(
            inspect.Parameter(
                f.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=f.default,
                annotation=Annotated[hints[f.name], f.metadata[_OPTION]],
            )
        )
    return tuple(params)


def group_of(cls: type[Any], group: str) -> tuple[str, ...]:
    """The fields of ``cls`` in ``group``, in their order."""
    return tuple(f.name for f in fields(cls) if f.metadata.get(_GROUP, "") == group)


def takes(
    cls: type[Any], names: Collection[str] | None = None
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A command that takes the options of set ``cls`` (those in ``names``; all without):
    they are its parameters where ``args`` stands, in the set's order, and the command
    gets their values as one ``cls`` (an option it does not take keeps its default)."""
    shared_params = [p for p in parameters(cls) if names is None or p.name in names]
    taken = [p.name for p in shared_params]

    def wrap(fn: Callable[..., None]) -> Callable[..., None]:
        sig = inspect.signature(fn, eval_str=True)
        params: list[inspect.Parameter] = []
        for p in sig.parameters.values():
            if p.name == "args":
                params += shared_params
            else:
                params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY))

        @functools.wraps(fn)
        def command(**values: Any) -> None:
            args = cls(**{n: values.pop(n) for n in taken})
            fn(**values, args=args)

        command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command

    return wrap


def same_named(values: Any, target: type[Any], skip: Iterable[str] = ()) -> dict[str, Any]:
    """The fields of dataclass instance ``values`` that ``target`` (a dataclass) has by the
    same name, less ``skip``: the options a request takes as they were given."""
    if not is_dataclass(values) or not is_dataclass(target):
        raise TypeError("same_named takes dataclasses")
    theirs = {f.name for f in fields(target) if f.init}
    left_out = set(skip)
    return {
        f.name: getattr(values, f.name)
        for f in fields(values)
        if f.name in theirs and f.name not in left_out
    }
