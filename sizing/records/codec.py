"""Frozen dataclasses to JSON and back: the one place a stored record's keys are spelled.

A record class is a frozen dataclass whose fields are JSON values, other record classes,
or lists, tuples and string-keyed dicts of them. :func:`dump` gives its JSON object (a
field that is None or an empty list or mapping is left out); :func:`load` reads one back,
leniently: a key the class does not know is kept, verbatim, in the record's field declared
with ``verbatim()`` when it has one (another sizing, or a host script of another version,
wrote it; nothing is lost when the record is written again), a value of the wrong JSON
type is dropped to the field's default (a damaged or foreign row reads as "not
recorded", never as a crash). A field declared with ``flat()`` is a group of fields
stored at its parent's level: the stored shape stays flat while the code reads
``meta.env.kernel``. A record class with a ``kind_of(data)`` classmethod of its own is
read as the subclass that method names (a record of several kinds, told apart by their
keys).
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, TypeVar, get_args, get_origin

__all__ = ["dump", "flat", "load", "verbatim"]

T = TypeVar("T")

FLAT = "records.flat"
VERBATIM = "records.verbatim"


def flat(cls: type[Any]) -> Any:
    """A group of fields stored at the parent's level (see the module)."""
    return dataclasses.field(default_factory=cls, metadata={FLAT: True})


def verbatim() -> Any:
    """The field that keeps, as read, the keys its record does not declare (see the
    module): foreign data, never what this sizing writes."""
    return dataclasses.field(default_factory=dict, metadata={VERBATIM: True})


@cache
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _fields(cls: type[Any]) -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(cls)


def dump(obj: Any) -> Any:
    """The JSON value of a record (or of any JSON-ready value holding records)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {}
        for f in _fields(type(obj)):
            value = getattr(obj, f.name)
            if f.metadata.get(FLAT):
                out.update(dump(value))
            elif f.metadata.get(VERBATIM):
                out.update({k: v for k, v in value.items() if k not in out})
            elif value is not None and not _empty(value):
                out[f.name] = dump(value)
        return out
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, Mapping):
        return {str(k): dump(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [dump(v) for v in obj]
    return obj


def _empty(value: Any) -> bool:
    return isinstance(value, list | tuple | dict) and not value


class _Wrong(ValueError):
    """A stored value of another JSON type than its field's (or a record lacking a field it
    cannot do without)."""


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _convert(tp: Any, v: Any) -> Any:  # noqa: C901, PLR0911 - one branch per JSON type
    origin = get_origin(tp)
    if tp is Any:
        return v
    if origin in (typing.Union, types.UnionType):
        args = get_args(tp)
        if v is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _convert(arg, v)
            except _Wrong:
                continue
        raise _Wrong
    if v is None:
        raise _Wrong
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(v, Mapping):
            raise _Wrong
        return load(tp, v)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(v)
        except ValueError:
            raise _Wrong from None
    if origin in (list, tuple):
        if not isinstance(v, list | tuple):
            raise _Wrong
        args = get_args(tp)
        inner = args[0] if args else Any
        items = [_convert(inner, x) for x in v]
        return tuple(items) if origin is tuple else items
    if origin in (dict, Mapping):
        if not isinstance(v, Mapping):
            raise _Wrong
        vt = get_args(tp)[1] if get_args(tp) else Any
        return {str(k): _convert(vt, x) for k, x in v.items()}
    if tp is bool:
        if isinstance(v, bool):
            return v
        raise _Wrong
    if tp is float:
        if _is_number(v):
            return float(v)
        raise _Wrong
    if tp is int:
        if _is_number(v) and float(v).is_integer():
            return int(v)
        raise _Wrong
    if tp is str:
        if isinstance(v, str):
            return v
        raise _Wrong
    return v


def load(cls: type[T], data: Mapping[str, Any]) -> T:
    """The record ``cls`` read from its JSON object ``data`` (see the module)."""
    record: Any = cls  # a dataclass type: hashable, whatever the cache's signature says
    if "kind_of" in vars(record):
        record = record.kind_of(data)
    hints = _hints(record)
    kwargs: dict[str, Any] = {}
    known: set[str] = set()
    keep: str | None = None
    for f in _fields(record):
        if f.metadata.get(FLAT):
            group = hints[f.name]
            kwargs[f.name] = load(group, data)
            known |= _keys(group)
            continue
        if f.metadata.get(VERBATIM):
            keep = f.name
            continue
        known.add(f.name)
        if f.name not in data:
            continue
        try:
            kwargs[f.name] = _convert(hints[f.name], data[f.name])
        except _Wrong:
            continue  # the field's default: a value of another shape reads as unrecorded
    if keep is not None:
        kwargs[keep] = {k: v for k, v in data.items() if k not in known}
    try:
        out: T = record(**kwargs)
        return out
    except TypeError:  # a required field is missing: the record cannot be read
        raise _Wrong from None


@cache
def _keys(cls: Any) -> frozenset[str]:
    """Every stored key of ``cls``, its flat groups' included."""
    hints = _hints(cls)
    out: set[str] = set()
    for f in _fields(cls):
        if f.metadata.get(FLAT):
            out |= _keys(hints[f.name])
        elif not f.metadata.get(VERBATIM):
            out.add(f.name)
    return frozenset(out)
