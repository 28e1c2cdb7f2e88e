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
from collections.abc import Callable, Mapping
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


@cache
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


def _convert(tp: Any, v: Any) -> Any:
    """``v`` read as a value of type ``tp``, or :class:`_Wrong`."""
    return _converter(tp)(v)


def _same(v: Any) -> Any:
    return v


@cache
def _converter(tp: Any) -> Callable[[Any], Any]:  # noqa: C901, PLR0911 - one per JSON type
    """How a stored value of type ``tp`` is read (:func:`_convert`): decided once per type,
    not per value (a results database holds thousands of records, each read the same)."""
    origin = get_origin(tp)
    if tp is Any:
        return _same
    if origin in (typing.Union, types.UnionType):
        args = get_args(tp)
        nullable = type(None) in args
        each = [_converter(arg) for arg in args if arg is not type(None)]

        def union(v: Any) -> Any:
            if v is None and nullable:
                return None
            for conv in each:
                try:
                    return conv(v)
                except _Wrong:
                    continue
            raise _Wrong

        return union
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        record: Any = tp

        def nested(v: Any) -> Any:
            if v is None or not isinstance(v, Mapping):
                raise _Wrong
            return load(record, v)

        return nested
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        kind: Any = tp

        def member(v: Any) -> Any:
            if v is None:
                raise _Wrong
            try:
                return kind(v)
            except ValueError:
                raise _Wrong from None

        return member
    if origin in (list, tuple):
        args = get_args(tp)
        inner = _converter(args[0] if args else Any)
        as_tuple = origin is tuple

        def sequence(v: Any) -> Any:
            if v is None or not isinstance(v, list | tuple):
                raise _Wrong
            items = [inner(x) for x in v]
            return tuple(items) if as_tuple else items

        return sequence
    if origin in (dict, Mapping):
        value = _converter(get_args(tp)[1] if get_args(tp) else Any)

        def mapping(v: Any) -> Any:
            if v is None or not isinstance(v, Mapping):
                raise _Wrong
            return {str(k): value(x) for k, x in v.items()}

        return mapping
    return _SCALARS.get(tp, _present)


def _present(v: Any) -> Any:
    if v is None:
        raise _Wrong
    return v


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    raise _Wrong


def _float(v: Any) -> float:
    if _is_number(v):
        return float(v)
    raise _Wrong


def _int(v: Any) -> int:
    if _is_number(v) and float(v).is_integer():
        return int(v)
    raise _Wrong


def _str(v: Any) -> str:
    if isinstance(v, str):
        return v
    raise _Wrong


_SCALARS: dict[Any, Callable[[Any], Any]] = {bool: _bool, float: _float, int: _int, str: _str}


def load(cls: type[T], data: Mapping[str, Any]) -> T:
    """The record ``cls`` read from its JSON object ``data`` (see the module)."""
    record: Any = cls  # a dataclass type: hashable, whatever the cache's signature says
    if "kind_of" in vars(record):
        record = record.kind_of(data)
    plain, groups, keep = _plan(record)
    kwargs: dict[str, Any] = {name: load(group, data) for name, group in groups}
    for name, value in data.items():
        conv = plain.get(name)
        if conv is None:
            continue
        try:
            kwargs[name] = conv(value)
        except _Wrong:
            continue  # the field's default: a value of another shape reads as unrecorded
    if keep is not None:
        known = _keys(record)
        kwargs[keep] = {k: v for k, v in data.items() if k not in known}
    try:
        out: T = record(**kwargs)
        return out
    except TypeError:  # a required field is missing: the record cannot be read
        raise _Wrong from None


@cache
def _plan(
    cls: Any,
) -> tuple[dict[str, Callable[[Any], Any]], tuple[tuple[str, Any], ...], str | None]:
    """How :func:`load` reads ``cls``, once per class: its stored fields by name with
    their readers, its flat groups (name, class), and its ``verbatim()`` field's name."""
    hints = _hints(cls)
    plain: dict[str, Callable[[Any], Any]] = {}
    groups: list[tuple[str, Any]] = []
    keep: str | None = None
    for f in _fields(cls):
        if f.metadata.get(FLAT):
            groups.append((f.name, hints[f.name]))
        elif f.metadata.get(VERBATIM):
            keep = f.name
        else:
            plain[f.name] = _converter(hints[f.name])
    return plain, tuple(groups), keep


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
